// GitOps' Apply and Diff (docs/gitops.md), shared by REST and gRPC: a set
// of declared objects written as one SERIALIZABLE transaction through the
// resource kinds (resource_kinds.h), so a declared object is checked,
// placed and audited exactly as its own RPC would be. Diff runs the very
// same code in a transaction that is rolled back (TxMode::kDryRun) on a
// capacity ledger of its own, so a plan says whether GPUs fit and never
// slows real writes.
//
// Ownership lives in the database (migrations/0020_apply_sets.sql): an
// object belongs to at most one set, with the fields the set declared.
// An object that exists outside every set is taken only with adopt, one
// of another set only with force_conflicts (audited); prune deletes only
// the set's own members that the request leaves out, and trust tiers and
// tenants only when confirm_deletions names them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "gpu/catalog.h"
#include "services/core/apply_limits.h"
#include "services/core/auth.h"
#include "services/core/capacity_ledger.h"
#include "services/core/resource_kinds.h"
#include "services/core/store.h"

namespace septa::core {

struct ApplyObjectRequest {
  DeclaredObject object{};
  DeclaredFields declared{};
  bool adopt = false;
  std::string source{};  // "platform/tenants.yaml#2"
  // The declaration as the transport received it, without its source and
  // adopt (the same document gives the same bytes): kept with the member,
  // DeclarationDecoder turns it back into this request for a revert.
  std::string intent{};
};

// The transport's side of a member's intent.
class DeclarationDecoder {
 public:
  virtual ~DeclarationDecoder() = default;
  virtual Result<ApplyObjectRequest> Decode(std::string_view intent) const = 0;
};

// What a set keeps besides its members: what a write outside the set to a
// field it owns does (apply_set_guard.h), and the kinds pruned only when
// confirmed by name besides trust tiers and tenants.
struct SetPolicy {
  DriftPolicy on_drift = DriftPolicy::kReport;
  std::vector<std::string> protected_kinds{};
};

struct ApplyOrder {
  std::string apply_set{};
  std::vector<ApplyObjectRequest> objects{};
  bool prune = false;
  bool allow_empty = false;
  bool force_conflicts = false;
  std::vector<std::string> confirm_deletions{};  // "tenants/globex"
  std::string expected_plan_etag{};
  std::string source{};
  // The set's new policy; none: the set keeps its own (a new set: the default).
  std::optional<SetPolicy> policy{};
  // Non-zero: ABORTED unless the set is at this revision (a revert must not
  // apply an intent that an apply has replaced since it was read).
  std::int64_t expected_revision = 0;
};

enum class ApplyAction { kCreate, kUpdate, kDelete, kUnchanged, kConflict, kRefused };

struct ObjectOutcome {
  std::string kind{};      // "VirtualCluster"
  std::string resource{};  // "tenants/acme/vclusters/train"
  ApplyAction action = ApplyAction::kUnchanged;
  std::vector<FieldChange> fields{};
  bool adopted = false;              // taken into the set by this apply
  std::string previous_apply_set{};  // the owner of a conflict or a forced take-over
  Status refusal{};                  // kConflict and kRefused: why
  int index = -1;                    // in the request; -1: a pruned member
  std::string source{};
  // An update of the set's own member edited outside the set since the
  // set's last apply: the newest such audit record.
  std::optional<AuditRecord> drift{};
};

struct ApplyOutcome {
  std::string apply_set{};  // "applysets/prod", "tenants/acme/applysets/prod"
  std::string plan_etag{};
  std::int64_t revision = 0;
  bool applied = false;
  // The set's own fields that change ("policy.on_drift", "policy.protected_kinds").
  std::vector<FieldChange> set_changes{};
  std::vector<ObjectOutcome> changes{};  // in the order they are applied
};

// A member changed outside its set since the set's last apply.
struct DriftedMember {
  std::string kind{};
  std::string resource{};
  AuditRecord drift{};
};

// A set as its last apply left it; drifted only from Get.
struct ApplySetView {
  ApplySet set{};
  int members = 0;
  std::vector<DriftedMember> drifted{};
};

// The refusal naming `objects` past kMaxApplyObjects.
Status CheckApplyObjectCount(std::size_t count);

// "applysets/<set>" for a platform set (tenant ""), "tenants/<tenant>/applysets/<set>".
std::string ApplySetResource(std::string_view tenant, std::string_view set);

class ApplyService {
 public:
  ApplyService(Store& store, const Clock& clock, CapacityLedger& ledger, const gpu::Catalog& catalog,
               Authenticator& authenticator, const DeclarationDecoder& decoder);

  // What Apply would do, every refusal and conflict included; writes nothing.
  Result<ApplyOutcome> Diff(const RequestContext& ctx, const ApplyOrder& order);
  // All or nothing: with any CONFLICT or REFUSED object, or a stale
  // expected_plan_etag (ABORTED), nothing is written and the error's field
  // violations name every refused object ("objects[3].capacity").
  Result<ApplyOutcome> Apply(const RequestContext& ctx, const ApplyOrder& order);
  // The caller's set (an admin's: the platform's), with the members changed
  // outside it since its last apply (at most kMaxDrifted); NOT_FOUND otherwise.
  Result<ApplySetView> Get(const RequestContext& ctx, const std::string& name);
  // The caller's sets by name, without drift.
  Result<std::vector<ApplySetView>> List(const RequestContext& ctx);
  static constexpr std::size_t kMaxDrifted = 100;

  // For the apply set controller: the set of `tenant` ("": the
  // platform's) with its drift, whoever asks; NOT_FOUND when it is gone.
  Result<ApplySetView> Inspect(const std::string& tenant, const std::string& name);
  // Applies the set's last intent again, as its owner (an admin for the
  // platform's, the tenant's owner for a tenant's), without prune: the
  // members changed outside the set are written back, the rest are
  // UNCHANGED. What Apply refuses is refused (a tenant suspended since, a
  // capacity gone): nothing is written then.
  Result<ApplyOutcome> Revert(const std::string& tenant, const std::string& name);

 private:
  Result<ApplyOutcome> Run(const RequestContext& ctx, const ApplyOrder& order, WriteMode mode,
                           const std::string& applied_by);
  Result<ApplySetView> ViewOf(const std::string& owner, const std::string& name);

  Store& store_;
  const Clock& clock_;
  CapacityLedger& ledger_;
  std::unique_ptr<CapacityLedger> check_ledger_;  // Diff's (CapacityLedger::Twin)
  Authenticator& authenticator_;
  const DeclarationDecoder& decoder_;
  ResourceKinds kinds_;
};

}  // namespace septa::core
