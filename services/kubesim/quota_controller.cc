// The imperative side of pod admission and of the quota controller: reads
// what quota.h decides on and writes ResourceQuota status.
#include "services/kubesim/api_internal.h"
#include "services/kubesim/quota.h"

namespace septa::kubesim {

using nlohmann::json;

PodAdmissionContext ApiServer::Impl::PodAdmissionContextFor(const std::string& ns) const {
  PodAdmissionContext context;
  context.limit_ranges = cluster.storage.List("limitranges", ns, nullptr, 0, "").items;
  context.quotas = cluster.storage.List("resourcequotas", ns, nullptr, 0, "").items;
  return context;
}

void ApiServer::Impl::ChargeQuotas(const std::string& ns, const ResourceAmounts& usage, bool release) {
  for (const ObjectPtr& quota : cluster.storage.List("resourcequotas", ns, nullptr, 0, "").items) {
    cluster.storage.Mutate("resourcequotas", ns, (*quota)["metadata"].value("name", ""),
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

void ApiServer::Impl::ReleasePod(const std::string& ns, const json& pod) {
  auto usage = PodUsage(pod);
  if (IsError(usage)) return;  // never admitted, never charged
  std::lock_guard admission(pod_admission_mu);
  ChargeQuotas(ns, std::get<ResourceAmounts>(usage), /*release=*/true);
}

void ApiServer::Impl::RefreshQuotas(const std::string& ns) {
  std::lock_guard admission(pod_admission_mu);
  auto quotas = cluster.storage.List("resourcequotas", ns, nullptr, 0, "").items;
  if (quotas.empty()) return;
  const auto pods = cluster.storage.List("pods", ns, nullptr, 0, "").items;
  for (const ObjectPtr& quota : quotas) {
    cluster.storage.Mutate("resourcequotas", ns, (*quota)["metadata"].value("name", ""),
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

void ApiServer::Impl::ResyncQuotas() {
  const TimePoint now = cluster.clock.Now();
  if (now - last_quota_resync < options.quota_resync_interval) return;
  last_quota_resync = now;
  // Nothing written since the last resync (an idle cluster): nothing to recount.
  const std::uint64_t version = cluster.storage.current_resource_version();
  if (version == last_quota_resync_version) return;
  last_quota_resync_version = version;
  std::string previous;
  for (const ObjectPtr& quota : cluster.storage.List("resourcequotas", "", nullptr, 0, "").items) {
    std::string ns = (*quota)["metadata"].value("namespace", "");
    if (ns == previous) continue;  // listed in namespace order
    RefreshQuotas(ns);
    previous = std::move(ns);
  }
}

}  // namespace septa::kubesim
