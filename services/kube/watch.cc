#include "services/kube/watch.h"

#include <spdlog/spdlog.h>

#include "common/documents.h"

namespace septa::kube {

using nlohmann::json;

void JsonStreamSplitter::Feed(std::string_view data, const std::function<void(std::string_view)>& on_value) {
  buffer_.append(data);
  for (; pos_ < buffer_.size(); ++pos_) {
    char c = buffer_[pos_];
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
      continue;
    }
    if (depth_ == 0 && (c == ' ' || c == '\n' || c == '\r' || c == '\t')) {
      start_ = pos_ + 1;
      continue;
    }
    if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      ++depth_;
    } else if (c == '}' || c == ']') {
      if (--depth_ == 0) {
        on_value(std::string_view(buffer_).substr(start_, pos_ + 1 - start_));
        start_ = pos_ + 1;
      }
    }
  }
  if (start_ > 0) {  // drop what has been consumed
    buffer_.erase(0, start_);
    pos_ -= start_;
    start_ = 0;
  }
}

Status WatchOnce(Client& client, const Resource& resource, const std::string& ns, const WatchOptions& o,
                 const std::function<bool(const WatchEvent&)>& on_event, StreamCancel* cancel) {
  std::string target = client.Path(resource, ns) + "?watch=1";
  if (!o.label_selector.empty()) target += "&labelSelector=" + o.label_selector;
  if (!o.field_selector.empty()) target += "&fieldSelector=" + o.field_selector;
  if (!o.resource_version.empty()) target += "&resourceVersion=" + o.resource_version;
  if (o.allow_bookmarks) target += "&allowWatchBookmarks=true";
  target += "&timeoutSeconds=" + std::to_string(o.timeout_seconds);
  JsonStreamSplitter splitter;
  Status parse_error;
  bool stop = false;
  auto res = client.OpenStream(
      {"GET", target}, std::chrono::seconds(o.timeout_seconds + 30),
      [&](std::string_view data) {
        splitter.Feed(data, [&](std::string_view value) {
          if (stop) return;
          // An event wraps its object one level down.
          auto parsed = ParseJson(value, {.max_bytes = kMaxWatchEventBytes, .max_depth = kMaxDocumentDepth + 1});
          if (!parsed.ok() && !IsMalformedDocument(parsed.status())) {
            parse_error =
                InvalidArgument("kube: watch " + target + ": an event was refused: " + parsed.status().message());
            stop = true;
            return;
          }
          json j = parsed.ok() ? *std::move(parsed) : json();
          if (!j.is_object() || !j.contains("type")) {
            parse_error = Internal("kube: watch " + target + ": malformed event");
            stop = true;
            return;
          }
          WatchEvent e{j["type"].get<std::string>(), std::move(j["object"])};
          if (!on_event(e)) stop = true;
        });
        if (!stop && splitter.buffered() > kMaxWatchEventBytes) {  // one value that never ends
          parse_error = InvalidArgument("kube: watch " + target + ": an event is larger than " +
                                        std::to_string(kMaxWatchEventBytes) + " bytes");
          stop = true;
        }
        return !stop;
      },
      cancel);
  if (!res.ok()) return res.status();
  if (res->status < 200 || res->status >= 300) return StatusFromResponse(*res, "GET " + target);
  return parse_error;
}

Informer::Informer(Client& client, Resource resource, std::string ns, ListOptions selectors, InformerHandlers handlers,
                   std::chrono::milliseconds resync_period)
    : client_(client),
      resource_(std::move(resource)),
      ns_(std::move(ns)),
      selectors_(std::move(selectors)),
      handlers_(std::move(handlers)),
      resync_period_(resync_period) {}

Informer::~Informer() { Stop(); }

void Informer::Start() {
  thread_ = std::thread([this] { Run(); });
  if (resync_period_.count() > 0) {
    // The first deadline is taken here, so that a clock moved after Start() counts toward it.
    const TimePoint first = client_.clock().Now() + resync_period_;
    resync_thread_ = std::thread([this, first, stop = stop_resyncs_.get_token()] { RunResyncs(first, stop); });
  }
}

void Informer::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  cancel_.Cancel();
  stop_resyncs_.request_stop();
  if (thread_.joinable()) thread_.join();
  if (resync_thread_.joinable()) resync_thread_.join();
}

bool Informer::WaitForSync(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return synced_; });
}

Status Informer::last_list_error() const {
  std::lock_guard lock(mu_);
  return list_error_;
}

std::optional<json> Informer::Get(const std::string& ns, const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = cache_.find(ns + "/" + name);
  if (it == cache_.end()) return std::nullopt;
  return it->second;
}

std::vector<json> Informer::List() const {
  std::lock_guard lock(mu_);
  std::vector<json> out;
  for (const auto& [k, v] : cache_) out.push_back(v);
  return out;
}

std::vector<json> Informer::ListNamespace(const std::string& ns) const {
  const std::string prefix = ns + "/";  // the cache's keys are "<ns>/<name>"; a namespace has no "/"
  std::lock_guard lock(mu_);
  std::vector<json> out;
  for (auto it = cache_.lower_bound(prefix); it != cache_.end() && it->first.starts_with(prefix); ++it) {
    out.push_back(it->second);
  }
  return out;
}

std::string Informer::last_resource_version() const {
  std::lock_guard lock(mu_);
  return resource_version_;
}

int Informer::relists() const {
  std::lock_guard lock(mu_);
  return relists_;
}

bool Informer::SleepUnlessStopped(std::chrono::milliseconds d) {
  std::unique_lock lock(mu_);
  return !cv_.wait_for(lock, d, [this] { return stopping_; });
}

namespace {

std::string KeyOf(const json& obj) {
  const json md = obj.value("metadata", json::object());
  return md.value("namespace", "") + "/" + md.value("name", "");
}

}  // namespace

Status Informer::ListAndReplace() {
  auto page = client_.ListAll(resource_, ns_, selectors_);
  if (!page.ok()) return page.status();
  std::lock_guard handlers(handlers_mu_);
  if (on_left_out_) {
    for (const std::string& item : page->left_out) on_left_out_(item);
  }
  std::map<std::string, json> fresh;
  for (const Object& item : page->items) {
    fresh[std::string(item.Namespace()) + "/" + std::string(item.Name())] = item.ToJson();
  }
  std::map<std::string, json> old;
  {
    std::lock_guard lock(mu_);
    old.swap(cache_);
    cache_ = fresh;
    resource_version_ = page->resource_version;
    ++relists_;
  }
  for (const auto& [k, obj] : fresh) {
    auto it = old.find(k);
    if (it == old.end()) {
      if (handlers_.on_add) handlers_.on_add(obj);
    } else if (it->second != obj && handlers_.on_update) {
      handlers_.on_update(it->second, obj);
    }
  }
  for (const auto& [k, obj] : old) {
    if (!fresh.count(k) && handlers_.on_delete) handlers_.on_delete(obj);
  }
  {
    std::lock_guard lock(mu_);
    synced_ = true;
  }
  cv_.notify_all();
  return Status::Ok();
}

void Informer::Apply(const WatchEvent& e) {
  const std::string key = KeyOf(e.object);
  std::optional<json> old;
  std::lock_guard handlers(handlers_mu_);
  {
    std::lock_guard lock(mu_);
    resource_version_ = e.object["metadata"].value("resourceVersion", resource_version_);
    if (e.type == "BOOKMARK") return;
    auto it = cache_.find(key);
    if (it != cache_.end()) old = it->second;
    if (e.type == "DELETED") {
      cache_.erase(key);
    } else {
      cache_[key] = e.object;
    }
  }
  if (e.type == "DELETED") {
    if (handlers_.on_delete) handlers_.on_delete(e.object);
  } else if (old) {
    if (handlers_.on_update) handlers_.on_update(*old, e.object);
  } else if (handlers_.on_add) {
    handlers_.on_add(e.object);
  }
}

void Informer::Resync() {
  if (!handlers_.on_update) return;
  std::lock_guard handlers(handlers_mu_);
  for (const auto& obj : List()) handlers_.on_update(obj, obj);
}

void Informer::RunResyncs(TimePoint next, std::stop_token stop) {
  while (client_.clock().SleepUntil(next, stop)) {
    // Before the handlers run: the clock may move while they do, toward the next period.
    next = client_.clock().Now() + resync_period_;
    Resync();
  }
}

void Informer::Run() {
  bool need_list = true;
  int failures = 0;
  // The first failure after a success is logged (its retries are not, until
  // a list succeeds or a watch event arrives): without it, an informer the
  // host's RBAC refuses (403) would retry silently forever and its
  // controller see nothing.
  bool reported = false;
  auto report = [&](const char* what, const Status& why) {
    if (reported) return;
    reported = true;
    spdlog::warn("informer {} {}{}: {} failed, retrying with backoff: {}", resource_.ApiVersion(), resource_.resource,
                 ns_.empty() ? "" : " in " + ns_, what, why.ToString());
  };
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    if (need_list) {
      Status listed = ListAndReplace();
      {
        std::lock_guard lock(mu_);
        list_error_ = listed;
      }
      if (!listed.ok()) {
        report("list", listed);
        if (!SleepUnlessStopped(client_.Backoff(failures++))) return;
        continue;
      }
      need_list = false;
      reported = false;
    }
    WatchOptions wo;
    wo.label_selector = selectors_.label_selector;
    wo.field_selector = selectors_.field_selector;
    wo.resource_version = last_resource_version();
    bool gone = false;
    Status st = WatchOnce(
        client_, resource_, ns_, wo,
        [&](const WatchEvent& e) {
          if (e.type == "ERROR") {
            gone = e.object.value("code", 0) == 410;
            return false;
          }
          failures = 0;
          reported = false;
          Apply(e);
          return true;
        },
        &cancel_);
    // Relisted: our version fell out of the server's history, or an event
    // was refused by the document bounds (the list names that object and
    // leaves it out, and the watch resumes after it).
    if (gone || st.code() == Code::kOutOfRange || st.code() == Code::kInvalidArgument) {
      need_list = true;
      continue;
    }
    if (st.code() == Code::kCancelled) return;
    if (!st.ok()) {
      report("watch", st);
      if (!SleepUnlessStopped(client_.Backoff(failures++))) return;
    }
  }
}

}  // namespace septa::kube
