// The imperative side of pod admission and of the quota controller: reads
// what quota.h decides on and writes ResourceQuota status.
#include <utility>

#include "services/kubesim/api_internal.h"
#include "services/kubesim/quota.h"

namespace septa::kubesim {

using nlohmann::json;

// Sees every pod write in storage (under its lock, so it only queues): the
// charges that deletions and pods finishing (Succeeded, Failed, being
// deleted) give back, whoever wrote them, including the node simulator and
// controllers that write storage directly. A create is charged by admission.
class PodQuotaWatch final : public WatchSink {
 public:
  struct Change {
    std::string ns;
    std::uint64_t resource_version = 0;
    ResourceAmounts usage;
    bool release = false;
  };

  bool Deliver(const WatchEvent& event) override {
    const json& pod = *event.object;
    const std::string ns = pod["metadata"].value("namespace", "");
    if (event.type == WatchEvent::Type::kDeleted) {
      Queue(ns, event.resource_version, pod, true);
    } else if (event.type == WatchEvent::Type::kModified && event.previous &&
               PodFinished(*event.previous) != PodFinished(pod)) {
      Queue(ns, event.resource_version, *event.previous, true);
      Queue(ns, event.resource_version, pod, false);
    }
    return true;
  }
  bool Bookmark(std::uint64_t) override { return true; }

  std::vector<Change> Take() {
    std::lock_guard lock(mu_);
    return std::exchange(pending_, {});
  }
  // Drops what a recount of `ns` at `resource_version` already reflects.
  void Forget(const std::string& ns, std::uint64_t resource_version) {
    std::lock_guard lock(mu_);
    std::erase_if(pending_, [&](const Change& c) { return c.ns == ns && c.resource_version <= resource_version; });
  }

 private:
  void Queue(const std::string& ns, std::uint64_t version, const json& pod, bool release) {
    auto usage = PodUsage(pod);
    if (!usage.ok()) return;  // never admitted, never charged
    std::lock_guard lock(mu_);
    pending_.push_back({ns, version, std::move(*usage), release});
  }

  std::mutex mu_;
  std::vector<Change> pending_;
};

void ApiServer::Impl::StartQuotaController() {
  pod_quota_watch = std::make_shared<PodQuotaWatch>();
  (void)cluster.storage.Watch("pods", std::nullopt, pod_quota_watch);
}

void ApiServer::Impl::ApplyQuotaChanges() {
  for (const PodQuotaWatch::Change& change : pod_quota_watch->Take())
    ChargeQuotas(change.ns, change.usage, change.release);
}

void ApiServer::Impl::SyncQuotas() {
  std::lock_guard admission(pod_admission_mu);
  ApplyQuotaChanges();
}

PodAdmissionContext ApiServer::Impl::PodAdmissionContextFor(const std::string& ns) {
  ApplyQuotaChanges();
  PodAdmissionContext context;
  context.limit_ranges = cluster.storage.List("limitranges", ns, nullptr, 0, "").items;
  context.quotas = cluster.storage.List("resourcequotas", ns, nullptr, 0, "").items;
  return context;
}

void ApiServer::Impl::ChargeQuotas(const std::string& ns, const ResourceAmounts& usage, bool release) {
  for (const ObjectPtr& quota : cluster.storage.List("resourcequotas", ns, nullptr, 0, "").items) {
    (void)cluster.storage.Mutate("resourcequotas", ns, (*quota)["metadata"].value("name", ""),
                                 [&](const json* current) -> ApiResult<Mutation> {
                                   if (!current) return Mutation{};
                                   json status = ChargeQuota(*current, usage, release);
                                   if (current->value("status", json::object()) == status) return Mutation{};
                                   json next = *current;
                                   next["status"] = std::move(status);
                                   return Mutation{Mutation::Kind::kPut, std::move(next)};
                                 });
  }
}

void ApiServer::Impl::RefreshQuotas(const std::string& ns) {
  std::lock_guard admission(pod_admission_mu);
  auto quotas = cluster.storage.List("resourcequotas", ns, nullptr, 0, "").items;
  if (quotas.empty()) return;
  const ListResult listed = cluster.storage.List("pods", ns, nullptr, 0, "");
  const std::vector<ObjectPtr>& pods = listed.items;
  pod_quota_watch->Forget(ns, listed.resource_version);
  for (const ObjectPtr& quota : quotas) {
    (void)cluster.storage.Mutate("resourcequotas", ns, (*quota)["metadata"].value("name", ""),
                                 [&](const json* current) -> ApiResult<Mutation> {
                                   if (!current) return Mutation{};
                                   json status = QuotaStatus(*current, pods);
                                   if (current->value("status", json::object()) == status) return Mutation{};
                                   json next = *current;
                                   next["status"] = std::move(status);
                                   return Mutation{Mutation::Kind::kPut, std::move(next)};
                                 });
  }
}

}  // namespace septa::kubesim
