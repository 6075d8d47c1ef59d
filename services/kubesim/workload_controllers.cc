#include "services/kubesim/workload_controllers.h"

#include <cmath>
#include <ctime>
#include <mutex>
#include <optional>

#include "services/kubesim/objects.h"
#include "services/kubesim/workload_util.h"

namespace septa::kubesim {

using nlohmann::json;

namespace workload {

const json& Child(const json& object, const char* key) {
  static const json kEmpty = json::object();
  if (!object.is_object()) return kEmpty;
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? kEmpty : *it;
}

const json& Metadata(const json& object) { return Child(object, "metadata"); }

std::string Name(const json& object) { return Metadata(object).value("name", ""); }
std::string Uid(const json& object) { return Metadata(object).value("uid", ""); }

std::string ControllerUid(const json& object) {
  for (const auto& ref : Child(Metadata(object), "ownerReferences"))
    if (ref.value("controller", false)) return ref.value("uid", "");
  return "";
}

json ControllerReference(const json& owner) {
  return {{"apiVersion", owner.value("apiVersion", "")},
          {"kind", owner.value("kind", "")},
          {"name", Name(owner)},
          {"uid", Uid(owner)},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

std::string Phase(const json& pod) { return Child(pod, "status").value("phase", "Pending"); }

bool Terminal(const json& pod) {
  const std::string phase = Phase(pod);
  return phase == "Succeeded" || phase == "Failed";
}

bool Deleting(const json& object) { return Metadata(object).contains("deletionTimestamp"); }
bool Active(const json& pod) { return !Terminal(pod) && !Deleting(pod); }

bool Ready(const json& pod) {
  if (Phase(pod) != "Running") return false;
  const json ready = Condition(Child(pod, "status"), "Ready");
  return ready.is_object() && ready.value("status", "") == "True";
}

bool Available(const json& pod, long long min_ready_seconds, TimePoint now) {
  if (!Ready(pod)) return false;
  if (min_ready_seconds <= 0) return true;
  auto ready_for = Since(Condition(pod["status"], "Ready").value("lastTransitionTime", ""), now);
  return ready_for && *ready_for >= std::chrono::seconds(min_ready_seconds);
}

std::optional<std::chrono::system_clock::duration> Since(const std::string& timestamp, TimePoint now) {
  std::tm tm{};
  if (timestamp.size() < 19 || strptime(timestamp.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) return std::nullopt;
  return now - std::chrono::system_clock::from_time_t(timegm(&tm));
}

long long Int(const json& object, const char* key, long long fallback) {
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<long long>() : fallback;
}

long long ScaledValue(const json& value, long long total, bool round_up) {
  if (value.is_number_integer()) return value.get<long long>();
  if (!value.is_string()) return 0;
  const std::string s = value.get<std::string>();
  const double percent = std::strtod(s.c_str(), nullptr);  // validated as digits then '%'
  const double scaled = percent * static_cast<double>(total) / 100.0;
  return static_cast<long long>(round_up ? std::ceil(scaled) : std::floor(scaled));
}

std::string TemplateHash(const json& pod_template) {
  // FNV-1a over the template's canonical JSON (keys sorted), then the
  // decimal digits mapped onto the vowel-free alphabet Kubernetes uses so
  // that no hash spells a word.
  std::uint32_t hash = 2166136261u;
  for (unsigned char c : pod_template.dump()) {
    hash ^= c;
    hash *= 16777619u;
  }
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  for (char digit : std::to_string(hash))
    out.push_back(kAlphabet[static_cast<unsigned char>(digit) % kAlphabet.size()]);
  return out;
}

json Condition(const json& status, const std::string& type) {
  for (const auto& c : Child(status, "conditions"))
    if (c.value("type", "") == type) return c;
  return nullptr;
}

void SetCondition(json& status, const std::string& type, const std::string& value, const std::string& reason,
                  const std::string& message, const std::string& now, bool with_update_time) {
  json conditions = json::array();
  json previous;
  for (const auto& c : Child(status, "conditions")) {
    if (c.value("type", "") == type) previous = c;
    else conditions.push_back(c);
  }
  json next = {{"type", type}, {"status", value}, {"reason", reason}, {"message", message}};
  const bool same_status = previous.is_object() && previous.value("status", "") == value;
  next["lastTransitionTime"] = same_status ? previous.value("lastTransitionTime", now) : now;
  if (with_update_time) next["lastUpdateTime"] = now;
  conditions.push_back(std::move(next));
  status["conditions"] = std::move(conditions);
}

}  // namespace workload

using namespace workload;

class OwnedPods final : public WatchSink {
 public:
  bool Deliver(const WatchEvent& event) override {
    const json& metadata = Metadata(*event.object);
    const std::string key = metadata.value("namespace", "") + "/" + metadata.value("name", "");
    std::lock_guard lock(mu_);
    if (event.type != WatchEvent::Type::kDeleted && !Child(metadata, "ownerReferences").empty()) {
      pods_[key] = event.object;
    } else {
      pods_.erase(key);
    }
    return true;
  }
  bool Bookmark(std::uint64_t) override { return true; }
  std::vector<ObjectPtr> List() const {
    std::lock_guard lock(mu_);
    std::vector<ObjectPtr> out;
    out.reserve(pods_.size());
    for (const auto& [key, pod] : pods_) out.push_back(pod);
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, ObjectPtr> pods_;  // by "<ns>/<name>"
};

WorkloadControllers::WorkloadControllers(Cluster& cluster, ApiServer& api)
    : cluster_(cluster), api_(api), owned_pods_(std::make_shared<OwnedPods>()) {
  // Its first events are every pod there is. Pods are a built-in type: this cannot fail.
  (void)cluster_.storage.Watch("pods", std::nullopt, owned_pods_);
}

void WorkloadControllers::Tick() {
  const std::uint64_t version = cluster_.storage.current_resource_version();
  const TimePoint now = cluster_.clock.Now();
  if (version == last_version_ && now - last_pass_ < std::chrono::seconds(1)) return;
  last_version_ = version;  // this pass's own writes bring the next one
  last_pass_ = now;
  auto index = [](const std::vector<ObjectPtr>& objects) {
    ByOwner by_owner;
    for (const auto& o : objects) {
      std::string owner = ControllerUid(*o);
      if (!owner.empty()) by_owner[owner].push_back(o);
    }
    return by_owner;
  };
  static const std::vector<ObjectPtr> kNone;
  auto owned = [](const ByOwner& by_owner, const json& owner) -> const std::vector<ObjectPtr>& {
    auto it = by_owner.find(Uid(owner));
    return it == by_owner.end() ? kNone : it->second;
  };

  const std::vector<ObjectPtr> pods = owned_pods_->List();
  ByOwner pods_by_owner = index(pods);
  ListResult replica_sets = cluster_.storage.List("replicasets.apps", "", nullptr, 0, "");
  for (const auto& rs : replica_sets.items)
    if (!Deleting(*rs)) SyncReplicaSet(*rs, owned(pods_by_owner, *rs));

  // Deployments read what the ReplicaSet pass just wrote.
  replica_sets = cluster_.storage.List("replicasets.apps", "", nullptr, 0, "");
  ByOwner rs_by_owner = index(replica_sets.items);
  for (const auto& d : cluster_.storage.List("deployments.apps", "", nullptr, 0, "").items)
    if (!Deleting(*d)) SyncDeployment(*d, owned(rs_by_owner, *d), pods_by_owner);
  for (const auto& s : cluster_.storage.List("statefulsets.apps", "", nullptr, 0, "").items)
    if (!Deleting(*s)) SyncStatefulSet(*s, owned(pods_by_owner, *s));
  for (const auto& j : cluster_.storage.List("jobs.batch", "", nullptr, 0, "").items)
    if (!Deleting(*j)) SyncJob(*j, owned(pods_by_owner, *j));

  // The pods listed at the start: those created since have live owners.
  CollectOrphans(replica_sets.items, "apps", "replicasets");
  CollectOrphans(pods, "", "pods");
}

// What the garbage collector does for objects whose owners were deleted
// while (or before) their controller created them: deletion of dependents
// at the owner's delete (verbs.cc) misses those.
void WorkloadControllers::CollectOrphans(const std::vector<ObjectPtr>& objects, const char* group,
                                         const char* resource) {
  for (const auto& o : objects) {
    const json& refs = Child(Metadata(*o), "ownerReferences");
    if (refs.empty() || Deleting(*o)) continue;
    bool keep = false;
    for (const auto& ref : refs) {
      const std::string api_version = ref.value("apiVersion", "");
      const auto slash = api_version.find('/');
      auto type = cluster_.registry.FindByKind(slash == std::string::npos ? "" : api_version.substr(0, slash),
                                               ref.value("kind", ""));
      if (!type) {
        keep = true;  // a kind kubesim does not serve: leave the object alone
        break;
      }
      ObjectPtr owner = cluster_.storage.Get(type->key(), type->namespaced ? Metadata(*o).value("namespace", "") : "",
                                             ref.value("name", ""));
      if (owner && Uid(*owner) == ref.value("uid", "")) {
        keep = true;
        break;
      }
    }
    if (!keep) Delete(group, resource, *o);
  }
}

bool WorkloadControllers::CreatePod(const json& owner, const json& pod_template, const std::string& name) {
  const json& tmpl_md = Child(pod_template, "metadata");
  json md = {{"namespace", Metadata(owner).value("namespace", "")},
             {"ownerReferences", json::array({ControllerReference(owner)})}};
  if (name.empty()) md["generateName"] = Name(owner) + "-";
  else md["name"] = name;
  for (const char* key : {"labels", "annotations"})
    if (tmpl_md.contains(key)) md[key] = tmpl_md[key];
  json pod = {
      {"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", std::move(md)}, {"spec", Child(pod_template, "spec")}};
  return api_.CreateObject("", "pods", std::move(pod)).ok();
}

void WorkloadControllers::Delete(const char* group, const char* resource, const json& object) {
  // NotFound: deleted meanwhile, which is what was wanted.
  (void)api_.DeleteObject(group, resource, Metadata(object).value("namespace", ""), Name(object));
}

void WorkloadControllers::Change(const std::string& type_key, const json& object,
                                 const std::function<void(json&)>& change) {
  const std::string uid = Uid(object);
  (void)cluster_.storage.Mutate(type_key, Metadata(object).value("namespace", ""), Name(object),
                                [&](const json* current) -> ApiResult<Mutation> {
                                  if (!current || Uid(*current) != uid) return Mutation{};
                                  json next = *current;
                                  change(next);
                                  if (next == *current) return Mutation{};
                                  if (next.value("spec", json()) != current->value("spec", json()))
                                    next["metadata"]["generation"] = Metadata(*current).value("generation", 1) + 1;
                                  return Mutation{Mutation::Kind::kPut, std::move(next)};
                                });
}

void WorkloadControllers::SetStatus(const std::string& type_key, const json& object, json status) {
  if (Child(object, "status") == status) return;  // the common case: no copy of the object
  Change(type_key, object, [&](json& next) { next["status"] = std::move(status); });
}

}  // namespace septa::kubesim
