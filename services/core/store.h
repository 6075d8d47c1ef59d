// The persistence port of the use cases. services/store implements it on
// PostgreSQL; FakeStore (tests/support/fake_store.h) implements it in memory for unit tests.
// One contract test suite (tests/unit/services/store/store_contract.h) runs
// against both.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "common/status.h"
#include "services/core/model.h"
#include "services/core/person_session.h"
#include "services/core/tenant_member.h"
#include "services/core/usage_store.h"
#include "tenancy/mig_relayout.h"
#include "tenancy/reservation.h"
#include "tenancy/virtual_cluster.h"

namespace septa::core {

struct TenantQuery {
  std::optional<std::string> trust_tier;      // exact match
  std::map<std::string, std::string> labels;  // every pair must match
  std::string after_name;                     // keyset pagination: names > after_name
  int limit = 50;                             // rows to return (the store may return fewer)
};

struct VirtualClusterQuery {
  std::string tenant;  // empty: every tenant's
  std::optional<tenancy::VirtualClusterState> state;
  // keyset pagination: (tenant, name) > (after_tenant, after_name)
  std::string after_tenant;
  std::string after_name;
  int limit = 50;
};

// The repositories of one transaction, one per aggregate. Error codes:
// kNotFound for a missing row, kAlreadyExists for a duplicate key, kAborted
// for a lost race (version mismatch, serialization failure, a constraint
// that another transaction's rows violate), kUnavailable when the database
// cannot be reached.

class TrustTierRepository {
 public:
  virtual ~TrustTierRepository() = default;
  virtual Result<std::vector<TrustTier>> List() = 0;  // ordered by name
  virtual Result<TrustTier> Get(const std::string& name) = 0;
  // kAlreadyExists when a tier has its name.
  virtual Status Insert(const TrustTier& tier) = 0;
  // Conditional on `expected_version` (kAborted when another write came between).
  virtual Status Update(const TrustTier& tier, std::int64_t expected_version) = 0;
  // kFailedPrecondition while a tenant has the tier.
  virtual Status Delete(const std::string& name, std::int64_t expected_version) = 0;
};

class TenantRepository {
 public:
  virtual ~TenantRepository() = default;
  virtual Result<Tenant> Get(const std::string& name) = 0;
  virtual Result<std::vector<Tenant>> List(const TenantQuery& query) = 0;  // ordered by name
  virtual Status Insert(const Tenant& tenant) = 0;
  // Replaces the row iff its stored version is `expected_version`; the new
  // row carries tenant.version (the caller bumps it). kAborted otherwise.
  virtual Status Update(const Tenant& tenant, std::int64_t expected_version) = 0;
  // kFailedPrecondition while the tenant owns virtual clusters.
  virtual Status Delete(const std::string& name, std::int64_t expected_version) = 0;
};

// A tenant's members (migrations/0026_tenant_members.sql), keyed by
// (tenant, kind, name).
class TenantMemberRepository {
 public:
  virtual ~TenantMemberRepository() = default;
  // Ordered by (kind, name) as bytes: groups, then users.
  virtual Result<std::vector<TenantMember>> List(const std::string& tenant) = 0;
  virtual Result<TenantMember> Get(const std::string& tenant, MemberKind kind, const std::string& name) = 0;
  // kAlreadyExists for a member the tenant has; kNotFound when the tenant
  // does not exist.
  virtual Status Insert(const TenantMember& member) = 0;
  // As TenantRepository::Update (only the role and times change).
  virtual Status Update(const TenantMember& member, std::int64_t expected_version) = 0;
  // kNotFound when gone, kAborted when at another version. A tenant's
  // deletion deletes its members.
  virtual Status Delete(const std::string& tenant, MemberKind kind, const std::string& name,
                        std::int64_t expected_version) = 0;
  // Every membership, in any tenant, of `user` or of any of `groups`,
  // ordered by (tenant, kind, name): what a person who signs in is a member
  // of. kInvalidArgument for more than kMaxMemberGroups groups; a name no
  // member can have (IsMemberName) matches nothing.
  virtual Result<std::vector<TenantMember>> ListFor(const std::string& user,
                                                    const std::vector<std::string>& groups) = 0;
};

class TokenRepository {
 public:
  virtual ~TokenRepository() = default;
  virtual Status Insert(const ApiToken& token) = 0;
  virtual Result<ApiToken> Get(const std::string& id) = 0;
  // Rows of `kind` (API tokens unless said) of one principal, or of all when
  // `principal` is empty; ordered by create_time, id.
  virtual Result<std::vector<ApiToken>> List(const std::string& principal, TokenKind kind = TokenKind::kApi) = 0;
  virtual Status Revoke(const std::string& id, TimePoint when) = 0;
  // Revokes every token of a principal (used when a tenant is deleted).
  virtual Status RevokeAllOf(const std::string& principal, TimePoint when) = 0;
  // Every unrevoked token of a principal expires at most `max_lifetime` after
  // its creation (used when a tenant moves to a tier with a shorter cap);
  // caches are told as for RevokeAllOf.
  virtual Status CapLifetimes(const std::string& principal, std::chrono::seconds max_lifetime) = 0;
  // API tokens of `principal` neither revoked nor expired at `now` (counted
  // where they are stored: a pipeline's exchanged tokens pile up).
  virtual Result<int> CountLive(const std::string& principal, TimePoint now) = 0;
  // Deletes up to `limit` API tokens dead (revoked or expired) before
  // `dead_before`, with the sessions and sign-in codes made from them, and
  // every session and sign-in code itself dead before then; the count of
  // API tokens deleted.
  virtual Result<int> DeleteDead(TimePoint dead_before, int limit) = 0;
};

// People's portal sessions and the sign-ins under way
// (core/person_session.h, migrations/0028_person_sessions.sql).
class PersonSessionRepository {
 public:
  virtual ~PersonSessionRepository() = default;
  // kAlreadyExists for a state_hash already pending.
  virtual Status InsertSignIn(const PendingSignIn& sign_in) = 0;
  // Deletes the pending sign-in and returns it (one use), expired or not;
  // kNotFound when there is none.
  virtual Result<PendingSignIn> TakeSignIn(const std::string& state_hash) = 0;
  // Pending sign-ins not expired at `now`, of every browser (anyone may
  // begin one: the count is bounded).
  virtual Result<int> CountSignIns(TimePoint now) = 0;
  // Those of them begun from `client`.
  virtual Result<int> CountSignInsFrom(const std::string& client, TimePoint now) = 0;
  // kAlreadyExists for an id in use.
  virtual Status Insert(const PersonSession& session) = 0;
  virtual Result<PersonSession> Get(const std::string& id) = 0;
  // The sessions of one person (issuer and user) neither revoked nor
  // expired at `now`, ordered by create_time, id.
  virtual Result<std::vector<PersonSession>> ListLive(const std::string& issuer, const std::string& user,
                                                      TimePoint now) = 0;
  // A renewal: stores groups, identity_expire_time, id_token,
  // refresh_token and expire_time of `session` iff the stored version is
  // `expected_version`, with version expected_version + 1. kAborted at
  // another version, kNotFound when gone.
  virtual Status UpdateIdentity(const PersonSession& session, std::int64_t expected_version) = 0;
  // Ends a session (idempotent; kNotFound when none): told to every
  // replica as a revocation of the token id `id` (Store::WatchRevocations).
  virtual Status Revoke(const std::string& id, TimePoint when) = 0;
  // Deletes up to `limit` pending sign-ins expired before `now` and up to
  // `limit` sessions dead (revoked or expired) before `dead_before`; the
  // count of rows deleted.
  virtual Result<int> DeleteDead(TimePoint now, TimePoint dead_before, int limit) = 0;
};

class AuditLog {
 public:
  virtual ~AuditLog() = default;
  // Assigns the record's id.
  virtual Status Append(const AuditRecord& record) = 0;
  // Newest first; all resources when `resource` is empty.
  virtual Result<std::vector<AuditRecord>> List(const std::string& resource, int limit) = 0;
};

class IdempotencyRepository {
 public:
  virtual ~IdempotencyRepository() = default;
  virtual Result<IdempotencyRecord> Get(const std::string& principal, const std::string& key) = 0;
  virtual Status Insert(const IdempotencyRecord& record) = 0;
  // OK when there is no such record.
  virtual Status Delete(const std::string& principal, const std::string& key) = 0;
  // Deletes up to `limit` (1..1000) records created before `cutoff`, oldest
  // first, and says how many.
  virtual Result<int> DeleteBefore(TimePoint cutoff, int limit) = 0;
};

class VirtualClusterRepository {
 public:
  virtual ~VirtualClusterRepository() = default;
  virtual Result<tenancy::VirtualCluster> Get(const std::string& tenant, const std::string& name) = 0;
  // Ordered by (tenant, name).
  virtual Result<std::vector<tenancy::VirtualCluster>> List(const VirtualClusterQuery& query) = 0;
  // kNotFound when the tenant does not exist.
  virtual Status Insert(const tenancy::VirtualCluster& vcluster) = 0;
  // As TenantRepository::Update.
  virtual Status Update(const tenancy::VirtualCluster& vcluster, std::int64_t expected_version) = 0;
  // kFailedPrecondition while a reservation still holds capacity for it.
  virtual Status Delete(const std::string& tenant, const std::string& name, std::int64_t expected_version) = 0;
};

// The host cluster's nodes and GPUs as the inventory controller last saw them.
class InventoryRepository {
 public:
  virtual ~InventoryRepository() = default;
  // Writes the node as observed, its GPUs and their MIG layouts replaced;
  // creates it when new. kFailedPrecondition when a GPU that left the node
  // is still reserved.
  virtual Status PutNode(const gpu::InventoryNode& node, TimePoint observed) = 0;
  // Removes a node; kFailedPrecondition while anything is reserved on it
  // (mark it gpu::NodeHealth::kGone with PutNode instead).
  virtual Status DeleteNode(const std::string& name) = 0;
  // GPUs ordered by index, MIG instances by start slice.
  virtual Result<gpu::InventoryNode> GetNode(const std::string& name) = 0;
  virtual Result<std::vector<gpu::InventoryNode>> ListNodes() = 0;  // ordered by name

  // MIG layout targets (tenancy/mig_relayout.h): GPUs being re-laid out.
  // Put replaces the GPU's target; kNotFound for a GPU not in the inventory,
  // kInvalidArgument for a config name that is no label value. A GPU that
  // leaves the inventory takes its target with it.
  virtual Status PutLayoutTarget(const tenancy::MigLayoutTarget& target) = 0;
  virtual Result<std::vector<tenancy::MigLayoutTarget>> ListLayoutTargets() = 0;  // ordered by (node, gpu)
  virtual Status DeleteLayoutTargets(const std::string& node) = 0;                // all of the node's, if any
};

// Concrete capacity held by virtual clusters; see tenancy/reservation.h.
class ReservationRepository {
 public:
  virtual ~ReservationRepository() = default;
  // Writes every row of the reservation. kAborted when a row conflicts with
  // another reservation's (overlapping MIG slices, a GPU or node taken, tier
  // mixing); kNotFound when the virtual cluster, a node or a GPU is unknown;
  // kAlreadyExists when the virtual cluster already holds one;
  // kInvalidArgument for a bad row or rows of another tier than the
  // reservation's. All or nothing.
  virtual Status Insert(const tenancy::Reservation& reservation) = 0;
  // OK when there is none.
  virtual Status Delete(const std::string& tenant, const std::string& vcluster) = 0;
  // kNotFound when there is none.
  virtual Status MarkReleasing(const std::string& tenant, const std::string& vcluster) = 0;
  // Rows in key order: shares and whole GPUs by (node, gpu), MIG instances
  // by (node, gpu, start), nodes by name.
  virtual Result<tenancy::Reservation> Get(const std::string& tenant, const std::string& vcluster) = 0;
  // Every reservation, ordered by (tenant, vcluster): what the placement engine is rebuilt from.
  virtual Result<std::vector<tenancy::Reservation>> List() = 0;
  // The reservations holding anything on `node` (each whole, its other
  // nodes' rows too), ordered by (tenant, vcluster): what one node's usage
  // is attributed to, without reading every reservation.
  virtual Result<std::vector<tenancy::Reservation>> ListOnNode(const std::string& node) = 0;
  // A number that moves with every change to the inventory or to
  // reservations (never backwards): an in-memory placement engine built at
  // one epoch is stale at any other. Reading it in a read-write transaction
  // makes any concurrent change a conflict for that transaction.
  virtual Result<std::int64_t> Epoch() = 0;
};

// A client certificate issued for a virtual cluster (CredentialService);
// never its private key, which is returned once.
struct VclusterCredential {
  std::string tenant;
  std::string vcluster;
  std::string serial;  // lower-case hex, as openssl prints it
  std::string common_name;
  std::vector<std::string> groups;
  std::string role;       // "admin", "edit", "view"
  std::string issued_by;  // the principal that asked: "admin", "tenant:<name>"
  TimePoint issue_time{};
  TimePoint expire_time{};
  std::optional<TimePoint> revoke_time;
};

// Live credentials that expire soon: neither revoked nor expired at `now`,
// expiring no later than `before`.
struct ExpiringWindow {
  TimePoint now{};
  TimePoint before{};
};

struct CredentialQuery {
  std::string tenant{};
  std::string vcluster{};      // empty: every virtual cluster of the tenant
  std::string after_serial{};  // keyset pagination in (vcluster, serial) order
  int limit = 50;
  std::string after_vcluster{};  // with an empty vcluster; empty otherwise
  std::optional<ExpiringWindow> expiring{};
};

class CredentialRepository {
 public:
  virtual ~CredentialRepository() = default;
  // kNotFound when the virtual cluster does not exist, kAlreadyExists for a serial it already has.
  virtual Status Insert(const VclusterCredential& credential) = 0;
  virtual Result<VclusterCredential> Get(const std::string& tenant, const std::string& vcluster,
                                         const std::string& serial) = 0;
  // One virtual cluster's or all of a tenant's, ordered by (vcluster, serial).
  virtual Result<std::vector<VclusterCredential>> List(const CredentialQuery& query) = 0;
  // Sets revoke_time unless it is set (the first revocation's time stays)
  // and returns the row as it is then; kNotFound for an unknown serial.
  // The first revocation is told on NOTIFY channel septa_credentials.
  virtual Result<VclusterCredential> Revoke(const std::string& tenant, const std::string& vcluster,
                                            const std::string& serial, TimePoint when) = 0;
};

// What a write outside an apply set to a field it owns does
// (core/apply_set_guard.h): shown as drift, undone by the apply set
// controller, or refused unless an admin breaks glass.
enum class DriftPolicy { kReport, kRevert, kLock };
inline std::string_view DriftPolicyName(DriftPolicy policy) {
  switch (policy) {
    case DriftPolicy::kReport: return "report";
    case DriftPolicy::kRevert: return "revert";
    case DriftPolicy::kLock: return "lock";
  }
  return "report";
}

// A GitOps apply set (migrations/0020_apply_sets.sql and 0021,
// core/apply_service.h).
struct ApplySet {
  std::string tenant{};  // "" for a platform set
  std::string name{};
  std::int64_t revision = 0;
  std::string source{};
  std::string applied_by{};
  TimePoint apply_time{};
  DriftPolicy on_drift = DriftPolicy::kReport;
  // Kinds pruned only when confirmed by name, beyond trust tiers and
  // tenants (which always are); sorted, each once.
  std::vector<std::string> protected_kinds{};
};

// Which set declared an object, and which of its fields.
struct ApplySetMember {
  std::string kind{};      // "VirtualCluster"
  std::string resource{};  // "tenants/acme/vclusters/train"
  std::string set_tenant{};
  std::string set_name{};
  std::vector<std::string> declared{};  // empty: every writable field
  // The declaration as the API received it (DeclarationDecoder turns it
  // back into one), which a revert applies again.
  std::string intent{};
  bool operator==(const ApplySetMember&) const = default;
};

class ApplySetRepository {
 public:
  virtual ~ApplySetRepository() = default;
  virtual Result<std::optional<ApplySet>> Get(const std::string& tenant, const std::string& name) = 0;
  // Inserts the set, or replaces the one of its (tenant, name).
  virtual Status Put(const ApplySet& set) = 0;
  // One owner's sets ("" : the platform's), by name.
  virtual Result<std::vector<ApplySet>> List(const std::string& tenant) = 0;
  // Every owner's sets, by (tenant, name): the apply set controller's resync.
  virtual Result<std::vector<ApplySet>> ListAll() = 0;
  // A set's members, ordered by (kind, resource).
  virtual Result<std::vector<ApplySetMember>> Members(const std::string& tenant, const std::string& name) = 0;
  // The member row of an object, whichever set it is in.
  virtual Result<std::optional<ApplySetMember>> MemberOf(const std::string& kind, const std::string& resource) = 0;
  // Inserts each row, or replaces its object's (moving it to the member's
  // set), in one statement; kNotFound when a member's set does not exist.
  virtual Status PutMembers(const std::vector<ApplySetMember>& members) = 0;
  // Removes the object's row; none is OK.
  virtual Status DeleteMember(const std::string& kind, const std::string& resource) = 0;
  // Tells the apply set controller, once the transaction commits, that a
  // member of the set was written outside it through `surface` (NOTIFY
  // septa_applyset_drift, "<tenant>/<name>/<surface>").
  virtual Status NoteDrift(const std::string& tenant, const std::string& name, std::string_view surface) = 0;
};

// Where septad writes a declared token's secret: a Secret of the host
// cluster (core/token_declaration_kind.h).
struct SecretSink {
  std::string ns{};  // the Secret's namespace
  std::string name{};
  std::string key{};  // its data key
  bool operator==(const SecretSink&) const = default;
};

// An API token declared in a platform apply set (migrations/0022): what is
// declared, and the token septad delivered for it (core/token_delivery.h).
struct TokenDeclaration {
  std::string name{};
  std::string principal{};  // "admin" | "tenant:<name>"
  Role role = Role::kViewer;
  std::int64_t ttl_seconds = 0;  // 0: the cap
  SecretSink sink{};
  std::int64_t version = 0;  // moves with every declared change
  TimePoint create_time{};
  TimePoint update_time{};
  // The token delivered last, and the declaration's version it follows.
  std::string token_id{};
  std::optional<TimePoint> token_expire_time{};
  std::int64_t token_version = 0;
  // Minted and not yet written to the sink: a crash in between leaves it
  // here, and the next delivery revokes it (its secret is lost).
  std::string pending_token_id{};
  std::int64_t deliveries = 0;
};

class TokenDeclarationRepository {
 public:
  virtual ~TokenDeclarationRepository() = default;
  virtual Result<std::optional<TokenDeclaration>> Get(const std::string& name) = 0;
  // kAlreadyExists for a name in use.
  virtual Status Insert(const TokenDeclaration& declaration) = 0;
  // Replaces the row when it is at `expected_version`; kFailedPrecondition
  // (kAborted in PostgreSQL's serialization) otherwise, kNotFound when gone.
  virtual Status Update(const TokenDeclaration& declaration, std::int64_t expected_version) = 0;
  virtual Status Delete(const std::string& name) = 0;
  // Every declaration by name: the delivery controller's resync.
  virtual Result<std::vector<TokenDeclaration>> List() = 0;
};

// One transaction. Reads see a consistent snapshot; writes become visible
// only if the function given to Store::Transact returns OK.
class Tx {
 public:
  virtual ~Tx() = default;
  virtual TrustTierRepository& TrustTiers() = 0;
  virtual TenantRepository& Tenants() = 0;
  virtual TenantMemberRepository& TenantMembers() = 0;
  virtual TokenRepository& Tokens() = 0;
  virtual PersonSessionRepository& PersonSessions() = 0;
  virtual AuditLog& Audit() = 0;
  virtual TokenDeclarationRepository& TokenDeclarations() = 0;
  virtual IdempotencyRepository& Idempotency() = 0;
  virtual VirtualClusterRepository& VirtualClusters() = 0;
  virtual InventoryRepository& Inventory() = 0;
  virtual ReservationRepository& Reservations() = 0;
  virtual CredentialRepository& Credentials() = 0;
  virtual ApplySetRepository& ApplySets() = 0;
  virtual UsageRepository& Usage() = 0;
};

// kDryRun: read-write, and always rolled back: the body runs as it would
// (reads, writes, constraint checks, placement) and its status is the
// answer, but nothing it wrote is kept (AIP-163's validate_only).
enum class TxMode { kReadOnly, kReadWrite, kDryRun };

// A committed token revocation, as told to caches (Store::WatchRevocations).
struct Revocation {
  std::string token_id;   // this token; when empty:
  std::string principal;  // every token of this principal; both empty: any token may have changed
};

class Store {
 public:
  virtual ~Store() = default;
  // Runs `body` in one transaction and commits iff it returns OK. A
  // transaction that loses a race (kAborted from the database: serialization
  // failure, deadlock) is retried a bounded number of times with `body`
  // run again from the start, so `body` must not have effects outside `tx`.
  virtual Status Transact(TxMode mode, const std::function<Status(Tx&)>& body) = 0;
  // Readiness: the database answers and every migration is applied.
  virtual Status Ready() = 0;
  // Calls `on_revocation` for every token revocation committed from now on
  // through any store on the same database (other septad replicas
  // included), and with an empty Revocation whenever some may have been
  // missed (PgStore: after (re)connecting). PgStore calls from a thread of
  // its own, FakeStore right after the commit. One watcher per store;
  // nullptr stops watching.
  virtual void WatchRevocations(std::function<void(const Revocation&)> on_revocation) = 0;
};

// Store::Transact for a body that returns a value (a Result<T>): the value
// of the run that committed, or the error. The body may run more than once.
template <typename Body>
auto TransactFor(Store& store, TxMode mode, Body&& body) -> std::invoke_result_t<Body&, Tx&> {
  std::optional<std::invoke_result_t<Body&, Tx&>> out;
  const Status st = store.Transact(mode, [&](Tx& tx) -> Status {
    out.emplace(body(tx));
    return ToStatus(*out);
  });
  if (!st.ok()) return st;
  return *std::move(out);
}

}  // namespace septa::core
