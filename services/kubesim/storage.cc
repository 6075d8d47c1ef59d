#include "services/kubesim/storage.h"

#include <algorithm>
#include <charconv>
#include <mutex>
#include <set>

#include "common/documents.h"

namespace septa::kubesim {

namespace {

std::string ObjectKey(const std::string& ns, const std::string& name) { return ns + "/" + name; }

// 0 when absent or not a number. Looked up with find: const operator[] on
// a missing key is undefined behaviour (an assertion in debug builds).
std::uint64_t VersionOf(const nlohmann::json& obj) {
  const auto metadata = obj.find("metadata");
  if (metadata == obj.end()) return 0;
  const auto version = metadata->find("resourceVersion");
  if (version == metadata->end() || !version->is_string()) return 0;
  const auto& text = version->get_ref<const std::string&>();
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() ? value : 0;
}

}  // namespace

std::string_view EventTypeName(WatchEvent::Type type) {
  switch (type) {
    case WatchEvent::Type::kAdded: return "ADDED";
    case WatchEvent::Type::kModified: return "MODIFIED";
    case WatchEvent::Type::kDeleted: return "DELETED";
  }
  return "ERROR";
}

Storage::Storage(std::size_t history_limit) : history_limit_(history_limit) {}

void Storage::Restore(const std::string& type_key, const std::string& ns, const std::string& name,
                      nlohmann::json object, std::string text) {
  std::unique_lock lock(mu_);
  auto stored = std::make_shared<const nlohmann::json>(std::move(object));
  auto& entry = types_[type_key].objects[ObjectKey(ns, name)];
  auto stored_text = std::make_shared<const std::string>(std::move(text));
  Account(entry.text, stored_text);
  entry = {stored, std::move(stored_text)};
  resource_version_ = std::max(resource_version_, VersionOf(*stored));
  compacted_ = resource_version_;
}

void Storage::RestoreResourceVersion(std::uint64_t resource_version) {
  std::unique_lock lock(mu_);
  resource_version_ = std::max(resource_version_, resource_version);
  compacted_ = resource_version_;
}

bool Storage::Converge(std::vector<JournaledObject> objects, std::uint64_t resource_version,
                       std::uint64_t unchanged_since) {
  std::ranges::sort(objects, {}, [](const JournaledObject& o) { return VersionOf(o.object); });
  std::unique_lock lock(mu_);
  if (resource_version_ != unchanged_since) return false;
  std::unordered_map<std::string, std::set<std::string>> kept;  // type -> object keys
  for (const auto& o : objects) kept[o.type_key].insert(ObjectKey(o.ns, o.name));
  for (auto& o : objects) {
    TypeData& data = types_[o.type_key];
    const std::string key = ObjectKey(o.ns, o.name);
    const std::uint64_t rv = VersionOf(o.object);
    auto it = data.objects.find(key);
    if (it != data.objects.end() && VersionOf(*it->second.object) == rv) continue;
    ObjectPtr previous = it == data.objects.end() ? nullptr : it->second.object;
    auto stored = std::make_shared<const nlohmann::json>(std::move(o.object));
    auto text = std::make_shared<const std::string>(std::move(o.text));
    Account(it == data.objects.end() ? nullptr : it->second.text, text);
    data.objects[key] = {stored, text};
    Publish(o.type_key, data,
            {previous ? WatchEvent::Type::kModified : WatchEvent::Type::kAdded, rv, stored, previous, text});
  }
  std::vector<std::pair<std::string, std::string>> gone;  // (type, object key)
  for (const auto& [type_key, data] : types_) {
    const auto& keep = kept[type_key];
    for (const auto& [key, entry] : data.objects) {
      if (!keep.contains(key)) gone.emplace_back(type_key, key);
    }
  }
  for (const auto& [type_key, key] : gone) {
    TypeData& data = types_[type_key];
    auto it = data.objects.find(key);
    auto last = std::make_shared<nlohmann::json>(*it->second.object);
    (*last)["metadata"]["resourceVersion"] = std::to_string(resource_version);
    Account(it->second.text, nullptr);
    data.objects.erase(it);
    Publish(type_key, data, {WatchEvent::Type::kDeleted, resource_version, std::move(last), nullptr});
  }
  resource_version_ = std::max(resource_version_, resource_version);
  if (journal_ != nullptr) journal_->Converged(resource_version);
  return true;
}

std::optional<ApiError> Storage::Journal(const std::string& type_key, const std::string& ns, const std::string& name,
                                         std::uint64_t resource_version, const std::string* text) {
  if (journal_ == nullptr) return std::nullopt;
  Status recorded = journal_->Record(type_key, ns, name, resource_version, text);
  if (recorded.ok()) return std::nullopt;
  if (IsAborted(recorded)) {
    const auto dot = type_key.find('.');
    return StaleUpdateError(type_key.substr(0, dot), dot == std::string::npos ? "" : type_key.substr(dot + 1), name);
  }
  return ServiceUnavailableError("storage is unavailable: " + recorded.message());
}

std::uint64_t Storage::current_resource_version() const {
  std::shared_lock lock(mu_);
  return resource_version_;
}

std::uint64_t Storage::compacted_resource_version() const {
  std::shared_lock lock(mu_);
  return compacted_;
}

ObjectPtr Storage::Get(const std::string& type_key, const std::string& ns, const std::string& name) const {
  std::shared_lock lock(mu_);
  auto t = types_.find(type_key);
  if (t == types_.end()) return nullptr;
  auto it = t->second.objects.find(ObjectKey(ns, name));
  return it == t->second.objects.end() ? nullptr : it->second.object;
}

ListResult Storage::List(const std::string& type_key, const std::string& ns,
                         const std::function<bool(const nlohmann::json&)>& filter, std::size_t limit,
                         const std::string& start_after) const {
  ListResult out;
  std::shared_lock lock(mu_);
  out.resource_version = resource_version_;
  auto t = types_.find(type_key);
  if (t == types_.end()) return out;
  const auto& objects = t->second.objects;
  std::string prefix = ns.empty() ? "" : ns + "/";
  auto it = start_after.empty() ? objects.lower_bound(prefix) : objects.upper_bound(start_after);
  for (; it != objects.end(); ++it) {
    if (!prefix.empty() && it->first.compare(0, prefix.size(), prefix) != 0) break;
    if (filter && !filter(*it->second.object)) continue;
    if (limit > 0 && out.items.size() == limit) {
      out.last_key = std::prev(it)->first;
      // Only report a continuation when something after it still matches.
      bool more = false;
      for (auto rest = it; rest != objects.end(); ++rest) {
        if (!prefix.empty() && rest->first.compare(0, prefix.size(), prefix) != 0) break;
        if (!filter || filter(*rest->second.object)) {
          more = true;
          break;
        }
      }
      if (!more) out.last_key.clear();
      break;
    }
    out.items.push_back(it->second.object);
    out.texts.push_back(it->second.text);
  }
  return out;
}

ApiResult<ObjectPtr> Storage::Mutate(const std::string& type_key, const std::string& ns, const std::string& name,
                                     const MutateFn& fn, bool dry_run) {
  std::unique_lock lock(mu_);
  TypeData& data = types_[type_key];
  const std::string key = ObjectKey(ns, name);
  auto it = data.objects.find(key);
  ObjectPtr current = it == data.objects.end() ? nullptr : it->second.object;
  KUBESIM_ASSIGN_OR_RETURN(Mutation m, fn(current.get()));
  switch (m.kind) {
    case Mutation::Kind::kNothing: return current;
    case Mutation::Kind::kPut: {
      // What the server adds (managedFields mirror the object's own nesting)
      // must not take a body at the bound past it: every stored object is
      // one a client, and a restart, can read back (common/documents.h).
      if (JsonDepth(m.object) > kMaxDocumentDepth) {
        return BadRequestError(type_key + " \"" + name + "\" would nest deeper than " +
                               std::to_string(kMaxDocumentDepth) + " levels as stored");
      }
      if (dry_run) return std::make_shared<const nlohmann::json>(std::move(m.object));
      std::uint64_t rv = resource_version_ + 1;
      m.object["metadata"]["resourceVersion"] = std::to_string(rv);
      auto stored = std::make_shared<const nlohmann::json>(std::move(m.object));
      auto text = std::make_shared<const std::string>(stored->dump());
      const JsonTextPtr before = current ? it->second.text : nullptr;
      const bool terminating = (*stored)["metadata"].contains("deletionTimestamp");
      if (auto refused = OverQuota(type_key, name, !current, before ? before->size() : 0, text->size(), terminating))
        return *std::move(refused);
      if (auto refused = Journal(type_key, ns, name, rv, text.get())) return *std::move(refused);
      resource_version_ = rv;
      Account(before, text);
      data.objects[key] = {stored, text};
      Publish(type_key, data,
              {current ? WatchEvent::Type::kModified : WatchEvent::Type::kAdded, rv, stored, current, text});
      return stored;
    }
    case Mutation::Kind::kDelete: {
      if (!current) return NotFoundError(type_key, "", name);
      if (dry_run) return current;
      std::uint64_t rv = resource_version_ + 1;
      if (auto refused = Journal(type_key, ns, name, rv, nullptr)) return *std::move(refused);
      resource_version_ = rv;
      // The last state: the object as the deciding function left it, if it did.
      auto last = std::make_shared<nlohmann::json>(m.object.is_null() ? *current : std::move(m.object));
      (*last)["metadata"]["resourceVersion"] = std::to_string(rv);
      ObjectPtr gone = std::move(last);
      Account(it->second.text, nullptr);
      data.objects.erase(it);
      Publish(type_key, data, {WatchEvent::Type::kDeleted, rv, gone, nullptr});
      return gone;
    }
  }
  return current;
}

void Storage::Publish(const std::string& type_key, TypeData& data, WatchEvent event) {
  auto& sinks = data.sinks;
  for (std::size_t i = 0; i < sinks.size();) {
    if (sinks[i]->Deliver(event)) {
      ++i;
    } else {
      sinks[i] = std::move(sinks.back());
      sinks.pop_back();
    }
  }
  // History is bounded across all types: evict the globally oldest events.
  history_order_.emplace_back(event.resource_version, type_key);
  data.history.push_back(std::move(event));
  ++history_size_;
  while (history_size_ > history_limit_) {
    auto [rv, type] = history_order_.front();
    history_order_.pop_front();
    auto& h = types_[type].history;
    if (!h.empty() && h.front().resource_version == rv) h.pop_front();
    compacted_ = rv;
    --history_size_;
  }
}

ApiResult<std::uint64_t> Storage::Watch(const std::string& type_key, std::optional<std::uint64_t> since,
                                        std::shared_ptr<WatchSink> sink) {
  std::unique_lock lock(mu_);
  TypeData& data = types_[type_key];
  if (since) {
    if (*since < compacted_) {
      return GoneError("too old resource version: " + std::to_string(*since) + " (" +
                       std::to_string(resource_version_) + ")");
    }
    for (const auto& e : data.history) {
      if (e.resource_version > *since && !sink->Deliver(e)) return resource_version_;
    }
  } else {
    for (const auto& [key, entry] : data.objects) {
      if (!sink->Deliver({WatchEvent::Type::kAdded, VersionOf(*entry.object), entry.object, nullptr, entry.text}))
        return resource_version_;
    }
  }
  data.sinks.push_back(std::move(sink));
  return resource_version_;
}

void Storage::BookmarkAll() {
  std::unique_lock lock(mu_);
  for (auto& [key, data] : types_) {
    auto& sinks = data.sinks;
    for (std::size_t i = 0; i < sinks.size();) {
      if (sinks[i]->Bookmark(resource_version_)) {
        ++i;
      } else {
        sinks[i] = std::move(sinks.back());
        sinks.pop_back();
      }
    }
  }
}

std::size_t Storage::watcher_count() const {
  std::shared_lock lock(mu_);
  std::size_t n = 0;
  for (const auto& [key, data] : types_) n += data.sinks.size();
  return n;
}

void Storage::DropType(const std::string& type_key) {
  std::unique_lock lock(mu_);
  auto t = types_.find(type_key);
  if (t == types_.end()) return;
  TypeData& data = t->second;
  while (!data.objects.empty()) {
    auto it = data.objects.begin();
    std::uint64_t rv = resource_version_ + 1;
    auto slash = it->first.find('/');
    // Left in place when the journal refuses; the next deletion of the type tries again.
    if (Journal(type_key, it->first.substr(0, slash), it->first.substr(slash + 1), rv, nullptr)) return;
    resource_version_ = rv;
    auto last = std::make_shared<nlohmann::json>(*it->second.object);
    (*last)["metadata"]["resourceVersion"] = std::to_string(rv);
    Account(it->second.text, nullptr);
    data.objects.erase(it);
    Publish(type_key, data, {WatchEvent::Type::kDeleted, rv, std::move(last), nullptr});
  }
}

void Storage::SetQuota(StorageQuota quota) {
  std::unique_lock lock(mu_);
  quota_ = std::move(quota);
}

StorageUsage Storage::usage() const {
  std::shared_lock lock(mu_);
  return usage_;
}

void Storage::Account(const JsonTextPtr& before, const JsonTextPtr& after) {
  if (before) {
    --usage_.objects;
    usage_.bytes -= before->size();
  }
  if (after) {
    ++usage_.objects;
    usage_.bytes += after->size();
  }
}

std::optional<ApiError> Storage::OverQuota(const std::string& type_key, const std::string& name, bool creates,
                                           std::uint64_t before, std::uint64_t after, bool terminating) const {
  // In kube-apiserver's words and order (resource names sorted).
  std::string requested, used, limited;
  auto exceeded = [&](const char* resource, std::uint64_t ask, std::uint64_t in_use, std::uint64_t limit) {
    const char* comma = requested.empty() ? "" : ",";
    requested += comma + std::string(resource) + "=" + std::to_string(ask);
    used += comma + std::string(resource) + "=" + std::to_string(in_use);
    limited += comma + std::string(resource) + "=" + std::to_string(limit);
  };
  if (quota_.bytes && !terminating && after > before && usage_.bytes - before + after > *quota_.bytes)
    exceeded("object_bytes", after - before, usage_.bytes, *quota_.bytes);
  if (quota_.objects && creates && usage_.objects + 1 > *quota_.objects)
    exceeded("objects", 1, usage_.objects, *quota_.objects);
  if (requested.empty()) return std::nullopt;
  ApiError e = ForbiddenError(type_key + " \"" + name + "\" is forbidden: exceeded quota: " + quota_.name +
                              ", requested: " + requested + ", used: " + used + ", limited: " + limited);
  const auto dot = type_key.find('.');
  e.name = name;
  e.kind = type_key.substr(0, dot);
  e.group = dot == std::string::npos ? "" : type_key.substr(dot + 1);
  return e;
}

}  // namespace septa::kubesim
