#include "services/core/usage_hoarding.h"

#include <spdlog/spdlog.h>

#include <set>

#include "services/core/virtual_cluster_write.h"
#include "tenancy/lifecycle.h"
#include "tenancy/usage/hoarding_action.h"
#include "tenancy/usage/idle_run.h"

namespace septa::core {
namespace {

using tenancy::VirtualClusterRef;
using tenancy::usage::Hoarder;

constexpr char kHoardingPrincipal[] = "system:usage";

bool Flagged(const tenancy::VirtualCluster& vc) {
  const tenancy::Condition* c = tenancy::FindCondition(vc.conditions, tenancy::usage::kHoarding);
  return c != nullptr && c->status == tenancy::ConditionStatus::kTrue;
}

// The hoarders, and every virtual cluster flagged: those a pass looks at.
Status ListCandidates(Tx& tx, std::map<VirtualClusterRef, std::optional<Hoarder>>& out,
                      const std::vector<Hoarder>& hoarders) {
  out.clear();  // a retried transaction starts over
  for (const Hoarder& h : hoarders) out[{h.holder.tenant, h.holder.vcluster}] = h;
  VirtualClusterQuery query;
  query.limit = 500;
  while (true) {
    SEPTA_ASSIGN_OR_RETURN(const std::vector<tenancy::VirtualCluster> page, tx.VirtualClusters().List(query));
    for (const tenancy::VirtualCluster& vc : page) {
      if (Flagged(vc)) out.try_emplace({vc.tenant, vc.name});
    }
    if (page.size() < static_cast<std::size_t>(query.limit)) return Status::Ok();
    query.after_tenant = page.back().tenant;
    query.after_name = page.back().name;
  }
}

}  // namespace

Result<std::vector<Hoarder>> CurrentHoarders(Tx& tx, TimePoint now, const HoardingSettings& settings,
                                             const std::string& tenant) {
  SEPTA_ASSIGN_OR_RETURN(const std::vector<UsageIdleState> states, tx.Usage().AllIdleStates());
  const TimePoint fresh_since = now - settings.idle_stale_after;
  std::vector<tenancy::usage::EntityIdle> idle;
  for (const UsageIdleState& state : states) {
    if (state.updated < fresh_since) continue;
    if (!tenant.empty() && state.entity.tenant != tenant) continue;
    idle.push_back(tenancy::usage::EntityIdleOf(state));
  }
  return tenancy::usage::FindHoarders(idle, settings.thresholds);
}

HoardingActor::HoardingActor(Store& store, const Clock& clock, HoardingSettings settings)
    : store_(store), clock_(clock), settings_(std::move(settings)) {}

Result<HoardingPass> HoardingActor::RunOnce(const std::function<bool(const VirtualClusterRef&)>& owns) {
  HoardingPass pass;
  std::map<VirtualClusterRef, std::optional<Hoarder>> candidates;
  SEPTA_RETURN_IF_ERROR(store_.Transact(TxMode::kReadOnly, [&](Tx& tx) -> Status {
    SEPTA_ASSIGN_OR_RETURN(const std::vector<Hoarder> hoarders, CurrentHoarders(tx, clock_.Now(), settings_));
    pass.hoarders = static_cast<int>(hoarders.size());
    return ListCandidates(tx, candidates, hoarders);
  }));
  Status first_error = Status::Ok();
  for (const auto& [ref, hoarder] : candidates) {
    if (!owns(ref)) continue;
    Status st = Act(ref, hoarder, pass);
    if (st.code() == Code::kAborted) {
      ++pass.conflicts;
    } else if (!st.ok() && first_error.ok()) {
      first_error = std::move(st);  // the others are still acted on
    }
  }
  if (!first_error.ok()) return first_error;
  return pass;
}

Status HoardingActor::Act(const VirtualClusterRef& ref, const std::optional<Hoarder>& hoarder, HoardingPass& pass) {
  enum class Done { kNothing, kFlagged, kUnflagged, kSlept } done = Done::kNothing;
  std::optional<HoardingPass::Flagged> flagged_now;
  Status st = store_.Transact(TxMode::kReadWrite, [&](Tx& tx) -> Status {
    done = Done::kNothing;
    flagged_now.reset();
    auto current = tx.VirtualClusters().Get(ref.tenant, ref.vcluster);
    if (current.status().code() == Code::kNotFound) return Status::Ok();  // deleted meanwhile
    SEPTA_RETURN_IF_ERROR(current);
    SEPTA_ASSIGN_OR_RETURN(const Tenant tenant, tx.Tenants().Get(ref.tenant));
    SEPTA_ASSIGN_OR_RETURN(const TrustTier tier, tx.TrustTiers().Get(tenant.trust_tier));
    tenancy::usage::HoardingPolicy policy{
        .threshold = settings_.thresholds.For(tier.gpu_sharing), .sleep_after = std::nullopt, .tier_name = tier.name};
    if (auto it = settings_.sleep_after.find(tier.name); it != settings_.sleep_after.end()) {
      policy.sleep_after = it->second;
    }
    const TimePoint now = Now(clock_);
    const tenancy::usage::HoardingAction action = tenancy::usage::DecideHoarding(*current, hoarder, policy, now);
    tenancy::VirtualCluster next = *current;
    const bool changed = action.condition && tenancy::SetCondition(next.conditions, *action.condition, now);
    if (action.condition && action.condition->status == tenancy::ConditionStatus::kTrue && hoarder) {
      flagged_now = HoardingPass::Flagged{.hoarder = *hoarder, .reason = action.condition->reason};
    }
    if (action.sleep) {
      SEPTA_ASSIGN_OR_RETURN(tenancy::VirtualCluster asleep, tenancy::RequestSleep(next));
      const VirtualClusterChange change{
          .principal = kHoardingPrincipal, .action = "vcluster.sleep_idle", .request_id = ""};
      SEPTA_RETURN_IF_ERROR(WriteVirtualCluster(tx, *current, asleep, now, &change));
      done = Done::kSlept;
      return Status::Ok();
    }
    if (!changed) return Status::Ok();
    SEPTA_RETURN_IF_ERROR(WriteVirtualCluster(tx, *current, next, now, nullptr));  // a status write
    done = Flagged(next) ? Done::kFlagged : Done::kUnflagged;
    return Status::Ok();
  });
  SEPTA_RETURN_IF_ERROR(st);
  if (flagged_now) pass.flagged_now.push_back(*flagged_now);
  const std::string name = tenancy::VirtualClusterText(ref.tenant, ref.vcluster);
  switch (done) {
    case Done::kNothing: break;
    case Done::kFlagged:
      ++pass.flagged;
      spdlog::info("usage: {} is hoarding: every GPU it holds has idled past its tier's threshold", name);
      break;
    case Done::kUnflagged: ++pass.unflagged; break;
    case Done::kSlept:
      ++pass.slept;
      spdlog::info("usage: {} put to sleep after hoarding idle GPUs past its tier's grace period", name);
      break;
  }
  return Status::Ok();
}

}  // namespace septa::core
