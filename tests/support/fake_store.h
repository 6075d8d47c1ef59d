// Store in memory, for the use cases' unit tests. Same contract as PgStore
// (tests/unit/services/store/store_contract.h runs against both), including
// the database's constraints (name formats, the trust tier reference,
// uniqueness) and all-or-nothing transactions: the body runs on a copy of
// the state, which replaces the state only if the body returns OK.
// Transactions run one at a time; a body must not call Transact itself.
#pragma once

#include <deque>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include "services/core/store.h"

namespace septa::core {

class FakeStore final : public Store {
 public:
  // Holds the four default trust tiers of migrations/0001_init.sql, created at `seeded_at`.
  explicit FakeStore(TimePoint seeded_at = TimePoint{});

  Status Transact(TxMode mode, const std::function<Status(Tx&)>& body) override;
  Status Ready() override;
  void WatchRevocations(std::function<void(const Revocation&)> on_revocation) override;

  // The next `times` calls of Transact or Ready return `failure` without
  // running anything, as a PgStore would when the database is unreachable.
  void FailNext(Status failure, int times = 1);

  struct State {
    std::map<std::string, TrustTier> tiers;
    std::map<std::string, Tenant> tenants;
    std::map<std::string, ApiToken> tokens;
    // By state_hash and by id; see fake_person_sessions.h.
    std::map<std::string, PendingSignIn> person_sign_ins;
    std::map<std::string, PersonSession> person_sessions;
    std::vector<AuditRecord> audit;  // in id order
    std::int64_t last_audit_id = 0;
    std::map<std::pair<std::string, std::string>, IdempotencyRecord> idempotency;
    // Keyed by (tenant, name) and (tenant, vcluster); see fake_capacity.h.
    std::map<std::pair<std::string, std::string>, tenancy::VirtualCluster> vclusters;
    std::map<std::string, gpu::InventoryNode> inventory;
    std::map<std::pair<std::string, std::string>, tenancy::Reservation> reservations;
    std::map<std::pair<std::string, int>, tenancy::MigLayoutTarget> layout_targets;
    std::int64_t capacity_epoch = 1;  // ReservationRepository::Epoch
    // Keyed by (tenant, vcluster, serial); see fake_credentials.h.
    std::map<std::tuple<std::string, std::string, std::string>, VclusterCredential> credentials;
    // Keyed by (tenant, name) and (kind, resource); see fake_apply_sets.h.
    std::map<std::pair<std::string, std::string>, ApplySet> apply_sets;
    std::map<std::pair<std::string, std::string>, ApplySetMember> apply_set_members;
    std::map<std::string, TokenDeclaration> token_declarations;  // by name; see fake_token_declarations.h
    // By (tenant, kind's name, name); see fake_tenant_members.h.
    using MemberKey = std::tuple<std::string, std::string, std::string>;
    std::map<MemberKey, TenantMember> tenant_members;
    // Usage, keyed as the tables of migrations/0023_usage.sql; see fake_usage.h.
    std::map<std::string, TimePoint> usage_cursors;  // by node
    std::map<std::pair<TimePoint, UsageEntityKey>, UsageMinuteRow> usage_minutes;
    // Hours and days as the buckets a query reads, by (start, tenant, vcluster, tier, model, mig_profile).
    using UsageRollupKey = std::tuple<TimePoint, std::string, std::string, std::string, std::string, std::string>;
    std::map<UsageRollupKey, UsageBucket> usage_hours;
    std::map<UsageRollupKey, UsageBucket> usage_days;
    std::map<std::tuple<TimePoint, std::string, std::string>, UsagePoolMinuteRow> usage_pool_minutes;
    std::map<std::pair<TimePoint, std::string>, UsagePoolBucket> usage_pool_hours;  // by (start, model)
    std::map<std::pair<TimePoint, std::string>, UsagePoolBucket> usage_pool_days;
    std::map<UsageEntityKey, UsageIdleState> usage_idle;
    // By (model, tier's name, mig_profile, valid_from): the order of Prices.
    std::map<std::tuple<std::string, std::string, std::string, TimePoint>, GpuPrice> gpu_prices;
    // NoteDrift's "<tenant>/<name>/<surface>", in order: what NOTIFY would tell on commit.
    std::vector<std::string> drift_notes;
  };
  // The committed state, copied.
  State Snapshot();

 private:
  std::optional<Status> TakeInjectedFailure();

  std::mutex mu_;
  State state_;
  std::deque<Status> failures_;
  std::function<void(const Revocation&)> on_revocation_;
};

}  // namespace septa::core
