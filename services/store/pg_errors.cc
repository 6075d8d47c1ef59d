#include "services/store/pg_errors.h"

#include <map>
#include <pqxx/pqxx>
#include <regex>
#include <string_view>

namespace septa::store {
namespace {

// What a violated constraint of migrations/ means to an API caller.
struct ConstraintMeaning {
  Code code;
  std::string field;  // empty when no request field is to blame
  std::string description;
};

constexpr char kNotNegative[] = "must not be negative";
constexpr char kFiniteNotNegative[] = "must be a finite number, not negative";
constexpr char kGiIdRange[] = "must be -1 (a whole GPU or a share) or a GPU-instance id";
constexpr char kSha256Hex[] = "must be a SHA-256 digest in lower-case hex";
constexpr char kPrintableName[] =
    "must be 1-256 bytes of one line of printable text: no control or bidi formatting characters";

const std::map<std::string, ConstraintMeaning>& ConstraintMeanings() {
  static const auto* meanings = new std::map<std::string, ConstraintMeaning>{
      {"trust_tiers_pkey", {Code::kAlreadyExists, "", "a trust tier with this name already exists"}},
      {"trust_tiers_name_format",
       {Code::kInvalidArgument, "name",
        "must be a DNS-1123 label of 1-40 characters: lower-case letters, digits and '-', "
        "starting and ending with a letter or digit"}},
      {"trust_tiers_gpu_sharing_known",
       {Code::kInvalidArgument, "gpu_sharing", "must be FRACTIONAL, MIG, WHOLE_GPU or WHOLE_NODE"}},
      {"trust_tiers_credential_ttl_positive", {Code::kInvalidArgument, "credential_ttl_max", "must be positive"}},
      {"trust_tiers_api_limits_objects_nonnegative", {Code::kInvalidArgument, "api_limits.objects", kNotNegative}},
      {"trust_tiers_api_limits_object_bytes_nonnegative",
       {Code::kInvalidArgument, "api_limits.object_bytes", kNotNegative}},
      {"trust_tiers_api_limits_watches_nonnegative", {Code::kInvalidArgument, "api_limits.watches", kNotNegative}},
      {"trust_tiers_api_limits_requests_in_flight_nonnegative",
       {Code::kInvalidArgument, "api_limits.requests_in_flight", kNotNegative}},
      // migrations/0018_trust_tier_version.sql
      {"trust_tiers_version_positive", {Code::kInvalidArgument, "version", "must be positive"}},
      {"tenants_pkey", {Code::kAlreadyExists, "", "a tenant with this name already exists"}},
      {"tenants_name_format",
       {Code::kInvalidArgument, "name",
        "must be a DNS-1123 label of 1-40 characters: lower-case letters, digits and '-', "
        "starting and ending with a letter or digit"}},
      {"tenants_trust_tier_fkey", {Code::kInvalidArgument, "trust_tier", "no such trust tier"}},
      {"tenants_version_positive", {Code::kInvalidArgument, "version", "must be positive"}},
      // migrations/0005_tenant_quota.sql
      {"tenants_quota_gpu_milli_nonnegative", {Code::kInvalidArgument, "quota.gpu_milli", kNotNegative}},
      {"tenants_quota_cpu_milli_nonnegative", {Code::kInvalidArgument, "quota.cpu_milli", kNotNegative}},
      {"tenants_quota_memory_mib_nonnegative", {Code::kInvalidArgument, "quota.memory_mib", kNotNegative}},
      {"tenants_quota_pods_nonnegative", {Code::kInvalidArgument, "quota.pods", kNotNegative}},
      {"tenants_quota_vclusters_nonnegative", {Code::kInvalidArgument, "quota.vclusters", kNotNegative}},
      {"api_tokens_pkey", {Code::kAlreadyExists, "", "an API token with this id already exists"}},
      {"api_tokens_secret_hash_key", {Code::kAlreadyExists, "", "an API token with this secret already exists"}},
      {"api_tokens_id_format", {Code::kInvalidArgument, "id", "must be 8-64 lower-case hex digits"}},
      {"api_tokens_principal_format", {Code::kInvalidArgument, "principal", "must be \"admin\" or \"tenant:<name>\""}},
      {"api_tokens_secret_hash_format", {Code::kInvalidArgument, "secret_hash", kSha256Hex}},
      {"api_tokens_kind_known", {Code::kInvalidArgument, "kind", "must be api, session or sign_in"}},
      {"api_tokens_parent_by_kind",
       {Code::kInvalidArgument, "parent_id", "a session or sign-in code has a parent token, an API token none"}},
      {"api_tokens_parent_fkey", {Code::kInvalidArgument, "parent_id", "no such token"}},
      {"audit_log_action_present", {Code::kInvalidArgument, "action", "must not be empty"}},
      {"idempotency_keys_pkey", {Code::kAlreadyExists, "", "this idempotency key was already used"}},
      {"idempotency_keys_key_present", {Code::kInvalidArgument, "key", "must not be empty"}},
      {"leases_name_format", {Code::kInvalidArgument, "name", "must be 1-200 characters"}},
      {"leases_holder_format", {Code::kInvalidArgument, "holder", "must be 1-200 characters"}},
      // migrations/0003_capacity.sql
      {"virtual_clusters_pkey", {Code::kAlreadyExists, "", "a virtual cluster with this name already exists"}},
      {"virtual_clusters_name_format",
       {Code::kInvalidArgument, "name",
        "must be a DNS-1123 label of 1-40 characters: lower-case letters, digits and '-', "
        "starting and ending with a letter or digit"}},
      {"virtual_clusters_tenant_fkey", {Code::kNotFound, "", "no such tenant"}},
      {"virtual_clusters_quota_cpu_milli_nonnegative", {Code::kInvalidArgument, "quota.cpu_milli", kNotNegative}},
      {"virtual_clusters_quota_memory_mib_nonnegative", {Code::kInvalidArgument, "quota.memory_mib", kNotNegative}},
      {"virtual_clusters_quota_pods_nonnegative", {Code::kInvalidArgument, "quota.pods", kNotNegative}},
      {"virtual_clusters_queue_over_quota_weight_nonnegative",
       {Code::kInvalidArgument, "queue.over_quota_weight", kNotNegative}},
      // migrations/0017_api_limits.sql
      {"virtual_clusters_api_limits_objects_nonnegative", {Code::kInvalidArgument, "api_limits.objects", kNotNegative}},
      {"virtual_clusters_api_limits_object_bytes_nonnegative",
       {Code::kInvalidArgument, "api_limits.object_bytes", kNotNegative}},
      {"virtual_clusters_api_limits_watches_nonnegative", {Code::kInvalidArgument, "api_limits.watches", kNotNegative}},
      {"virtual_clusters_api_limits_requests_in_flight_nonnegative",
       {Code::kInvalidArgument, "api_limits.requests_in_flight", kNotNegative}},
      {"virtual_clusters_generation_positive", {Code::kInvalidArgument, "generation", "must be positive"}},
      {"virtual_clusters_version_positive", {Code::kInvalidArgument, "version", "must be positive"}},
      // migrations/0016_host_namespace_unique.sql
      {"virtual_clusters_host_namespace_key",
       {Code::kAlreadyExists, "host_namespace", "is the host namespace of another virtual cluster"}},
      {"inventory_nodes_name_format",
       {Code::kInvalidArgument, "name",
        "must be a DNS-1123 subdomain of at most 253 characters: lower-case letters, digits, '-' and '.', "
        "starting and ending with a letter or digit"}},
      {"inventory_nodes_cpu_milli_nonnegative", {Code::kInvalidArgument, "cpu_milli", kNotNegative}},
      {"inventory_nodes_memory_mib_nonnegative", {Code::kInvalidArgument, "memory_mib", kNotNegative}},
      {"inventory_nodes_mig_config_state_known",
       {Code::kInvalidArgument, "mig_config_state", "must be empty, pending, rebooting, success or failed"}},
      {"mig_layout_targets_mig_config_label", {Code::kInvalidArgument, "mig_config", "must be a label value"}},
      {"inventory_gpus_index_nonnegative", {Code::kInvalidArgument, "gpus.index", kNotNegative}},
      {"inventory_gpus_model_present", {Code::kInvalidArgument, "gpus.model", "must not be empty"}},
      {"inventory_mig_instances_pkey",
       {Code::kInvalidArgument, "gpus.mig_layout", "two instances of one GPU start at the same slice"}},
      {"inventory_mig_instances_profile_nonnegative",
       {Code::kInvalidArgument, "gpus.mig_layout.profile", kNotNegative}},
      {"inventory_mig_instances_start_nonnegative", {Code::kInvalidArgument, "gpus.mig_layout.start", kNotNegative}},
      // migrations/0024_mig_instance_ids.sql
      {"inventory_mig_instances_gi_id_nonnegative", {Code::kInvalidArgument, "gpus.mig_gi_ids", kNotNegative}},
      {"inventory_mig_instances_gi_id_key",
       {Code::kInvalidArgument, "gpus.mig_gi_ids", "two instances of one GPU have the same GPU-instance id"}},
      {"reservations_pkey", {Code::kAlreadyExists, "", "the virtual cluster already holds a reservation"}},
      {"reservations_vcluster_fkey", {Code::kNotFound, "", "no such virtual cluster"}},
      // migrations/0011_vcluster_credentials.sql
      {"vcluster_credentials_pkey", {Code::kAlreadyExists, "", "a credential with this serial already exists"}},
      {"vcluster_credentials_vcluster_fkey", {Code::kNotFound, "", "no such virtual cluster"}},
      {"vcluster_credentials_serial_hex", {Code::kInvalidArgument, "serial", "must be 16-40 lower-case hex digits"}},
      {"vcluster_credentials_role_known", {Code::kInvalidArgument, "role", "must be admin, edit or view"}},
      {"vcluster_credentials_lifetime", {Code::kInvalidArgument, "expire_time", "must be after issue_time"}},
      // migrations/0020_apply_sets.sql
      {"apply_sets_name_dns_label", {Code::kInvalidArgument, "apply_set", "must be a DNS label"}},
      {"apply_sets_revision_positive", {Code::kInvalidArgument, "revision", "must be positive"}},
      {"apply_set_members_kind_known", {Code::kInvalidArgument, "kind", "must be TrustTier, Tenant or VirtualCluster"}},
      {"apply_set_members_set_fkey", {Code::kNotFound, "", "no such apply set"}},
      // migrations/0026_tenant_members.sql
      {"tenant_members_pkey", {Code::kAlreadyExists, "", "the tenant already has this member"}},
      {"tenant_members_tenant_fkey", {Code::kNotFound, "", "no such tenant"}},
      {"tenant_members_kind_known", {Code::kInvalidArgument, "kind", "must be user or group"}},
      {"tenant_members_name_format", {Code::kInvalidArgument, "name", kPrintableName}},
      {"tenant_members_role_known", {Code::kInvalidArgument, "role", "must be owner, editor or viewer"}},
      {"tenant_members_version_positive", {Code::kInvalidArgument, "version", "must be positive"}},
      // migrations/0028_person_sessions.sql
      {"person_sign_ins_pkey", {Code::kAlreadyExists, "", "a sign-in with this state is already pending"}},
      {"person_sign_ins_state_hash_format", {Code::kInvalidArgument, "state_hash", kSha256Hex}},
      {"person_sign_ins_issuer_length", {Code::kInvalidArgument, "issuer", "must be 1-2048 bytes"}},
      {"person_sign_ins_browser_hash_format", {Code::kInvalidArgument, "browser_hash", kSha256Hex}},
      {"person_sign_ins_code_verifier_format",
       {Code::kInvalidArgument, "code_verifier", "must be 43-128 characters of A-Z, a-z, 0-9, '-', '.', '_' and '~'"}},
      {"person_sign_ins_nonce_length", {Code::kInvalidArgument, "nonce", "must be 1-256 bytes"}},
      {"person_sign_ins_client_length", {Code::kInvalidArgument, "client", "must be at most 64 bytes"}},
      {"person_sign_ins_return_to_path",
       {Code::kInvalidArgument, "return_to", "must be a path of the portal: '/' first, at most 2048 bytes"}},
      {"person_sign_ins_lifetime", {Code::kInvalidArgument, "expire_time", "must be after create_time"}},
      {"person_sessions_pkey", {Code::kAlreadyExists, "", "a portal session with this id already exists"}},
      {"person_sessions_id_format", {Code::kInvalidArgument, "id", "must be 16 lower-case hex digits"}},
      {"person_sessions_secret_hash_format", {Code::kInvalidArgument, "secret_hash", kSha256Hex}},
      {"person_sessions_issuer_length", {Code::kInvalidArgument, "issuer", "must be 1-2048 bytes"}},
      {"person_sessions_username_format", {Code::kInvalidArgument, "user", kPrintableName}},
      {"person_sessions_groups_format",
       {Code::kInvalidArgument, "groups",
        "must be at most 1000 names of 1-256 bytes of one line of printable text: no control or bidi formatting "
        "characters"}},
      {"person_sessions_id_token_length", {Code::kInvalidArgument, "id_token", "must be 1-65536 bytes"}},
      {"person_sessions_refresh_token_length",
       {Code::kInvalidArgument, "refresh_token", "must be at most 65536 bytes"}},
      {"person_sessions_version_nonnegative", {Code::kInvalidArgument, "version", kNotNegative}},
      {"person_sessions_lifetime", {Code::kInvalidArgument, "expire_time", "must be after create_time"}},
      {"node_holds_node_fkey", {Code::kNotFound, "", "no such node in the inventory"}},
      {"gpu_holds_gpu_fkey", {Code::kNotFound, "", "no such GPU in the inventory"}},
      {"reservation_mig_slices_on_gpu",
       {Code::kInvalidArgument, "mig", "slices must lie within the GPU's 8 memory slices"}},
      {"reservation_mig_profile_present", {Code::kInvalidArgument, "mig.profile", "must not be empty"}},
      {"reservation_shares_milli_gpu_range",
       {Code::kInvalidArgument, "shares.milli_gpu", "must be between 1 and 1000"}},
      {"reservation_shares_gpu_memory_mib_nonnegative",
       {Code::kInvalidArgument, "shares.gpu_memory_mib", kNotNegative}},
      {"reservation_shares_pkey", {Code::kInvalidArgument, "shares", "a GPU appears twice"}},
      {"reservation_nodes_reservation_fkey",
       {Code::kInvalidArgument, "nodes", "only an exclusive reservation holds whole nodes"}},
      {"reservation_gpus_reservation_fkey",
       {Code::kInvalidArgument, "gpus", "only a dedicated reservation holds whole GPUs"}},
      {"reservation_mig_reservation_fkey",
       {Code::kInvalidArgument, "mig", "only an isolated reservation holds MIG instances"}},
      {"reservation_shares_reservation_fkey",
       {Code::kInvalidArgument, "shares", "only a shared reservation holds GPU shares"}},
      // Double booking refused: another reservation holds the capacity.
      {"reservation_mig_slices_overlap", {Code::kAborted, "", "the MIG slices are taken on that GPU"}},
      {"reservation_mig_pkey", {Code::kAborted, "", "the MIG slices are taken on that GPU"}},
      {"reservation_gpus_pkey", {Code::kAborted, "", "the GPU is taken whole"}},
      {"reservation_nodes_pkey", {Code::kAborted, "", "the node is taken whole"}},
      {"gpu_holds_whole_alone", {Code::kAborted, "", "the GPU is reserved whole by another reservation"}},
      {"node_holds_exclusive_alone", {Code::kAborted, "", "the node is reserved exclusively"}},
      {"gpu_holds_node_mode_fkey", {Code::kAborted, "", "the node is reserved exclusively"}},
      {"gpu_holds_shares_fit", {Code::kAborted, "", "the GPU's shares would exceed 1000 milli-GPU"}},
      {"reservation_mig_gpu_mode_fkey",
       {Code::kAborted, "", "the GPU holds shares or a whole-GPU reservation, never MIG instances beside them"}},
      {"reservation_shares_gpu_mode_fkey",
       {Code::kAborted, "", "the GPU holds MIG instances or a whole-GPU reservation, never shares beside them"}},
      {"reservation_gpus_gpu_mode_fkey", {Code::kAborted, "", "the GPU is held by another reservation"}},
      {"reservation_nodes_node_mode_fkey", {Code::kAborted, "", "the node holds other reservations"}},
      // migrations/0023_usage.sql: the rows of a usage scrape (core::UsageScrapeBatch) and a price.
      {"usage_minutes_gi_id_range", {Code::kInvalidArgument, "minutes.entity.gi_id", kGiIdRange}},
      {"usage_minutes_weight_nonnegative", {Code::kInvalidArgument, "minutes.weight", kFiniteNotNegative}},
      {"usage_minutes_allocated_gpu_seconds_nonnegative",
       {Code::kInvalidArgument, "minutes.allocated_gpu_seconds", kFiniteNotNegative}},
      {"usage_minutes_measured_gpu_seconds_nonnegative",
       {Code::kInvalidArgument, "minutes.measured_gpu_seconds", kFiniteNotNegative}},
      {"usage_minutes_used_gpu_seconds_nonnegative",
       {Code::kInvalidArgument, "minutes.used_gpu_seconds", kFiniteNotNegative}},
      {"usage_minutes_waste_gpu_seconds_nonnegative",
       {Code::kInvalidArgument, "minutes.waste_gpu_seconds", kFiniteNotNegative}},
      {"usage_minutes_cost_nonnegative", {Code::kInvalidArgument, "minutes.cost", kFiniteNotNegative}},
      {"usage_minutes_activity_max_nonnegative", {Code::kInvalidArgument, "minutes.activity_max", kFiniteNotNegative}},
      {"usage_minutes_reserved_memory_mib_nonnegative",
       {Code::kInvalidArgument, "minutes.reserved_memory_mib", kFiniteNotNegative}},
      {"usage_minutes_used_memory_mib_nonnegative",
       {Code::kInvalidArgument, "minutes.used_memory_mib", kFiniteNotNegative}},
      {"usage_minutes_samples_nonnegative", {Code::kInvalidArgument, "minutes.samples", kNotNegative}},
      {"usage_pool_minutes_capacity_gpu_seconds_nonnegative",
       {Code::kInvalidArgument, "pool.capacity_gpu_seconds", kFiniteNotNegative}},
      {"usage_pool_minutes_reserved_gpu_seconds_nonnegative",
       {Code::kInvalidArgument, "pool.reserved_gpu_seconds", kFiniteNotNegative}},
      {"usage_pool_minutes_used_gpu_seconds_nonnegative",
       {Code::kInvalidArgument, "pool.used_gpu_seconds", kFiniteNotNegative}},
      {"usage_idle_gi_id_range", {Code::kInvalidArgument, "idle.entity.gi_id", kGiIdRange}},
      {"usage_idle_window_activity_max_nonnegative",
       {Code::kInvalidArgument, "idle.window_activity_max", kFiniteNotNegative}},
      {"usage_idle_window_used_memory_mib_nonnegative",
       {Code::kInvalidArgument, "idle.window_used_memory_mib", kFiniteNotNegative}},
      {"usage_idle_idle_ms_nonnegative", {Code::kInvalidArgument, "idle.idle_ms", kNotNegative}},
      {"gpu_prices_per_gpu_hour_nonnegative", {Code::kInvalidArgument, "per_gpu_hour", kFiniteNotNegative}},
  };
  return *meanings;
}

// A foreign key violated by deleting the referenced row (rather than by
// inserting a reference) means something else: the row is still in use.
const std::map<std::string, ConstraintMeaning>& ReferencedRowMeanings() {
  static const auto* meanings = new std::map<std::string, ConstraintMeaning>{
      {"tenants_trust_tier_fkey",
       {Code::kFailedPrecondition, "", "tenants still have the trust tier; move them to another first"}},
      {"virtual_clusters_tenant_fkey",
       {Code::kFailedPrecondition, "", "the tenant still owns virtual clusters; delete them first"}},
      {"reservations_vcluster_fkey",
       {Code::kFailedPrecondition, "", "a reservation still holds capacity for the virtual cluster"}},
      {"node_holds_node_fkey",
       {Code::kFailedPrecondition, "", "capacity is reserved on the node; mark it Gone instead of deleting it"}},
      {"gpu_holds_gpu_fkey", {Code::kFailedPrecondition, "", "capacity is reserved on a GPU that left the node"}},
  };
  return *meanings;
}

// libpq reports the constraint only inside the message text:
// ... violates check constraint "tenants_name_format" ...
std::string ConstraintName(const std::string& message) {
  static const std::regex kConstraint(R"(constraint \"([^\"]+)\")");
  std::smatch match;
  return std::regex_search(message, match, kConstraint) ? match[1].str() : "";
}

Status ConstraintViolation(const pqxx::sql_error& e, Code fallback) {
  const std::string constraint = ConstraintName(e.what());
  // PostgreSQL's message for a foreign key that a deletion would break.
  const bool referenced = std::string_view(e.what()).find("update or delete on table") != std::string_view::npos;
  const auto& meanings =
      referenced && ReferencedRowMeanings().count(constraint) ? ReferencedRowMeanings() : ConstraintMeanings();
  const auto it = meanings.find(constraint);
  if (it == meanings.end()) return Status(fallback, "constraint " + constraint + " violated: " + e.what());
  const ConstraintMeaning& meaning = it->second;
  if (meaning.field.empty()) return Status(meaning.code, meaning.description);
  return Status(meaning.code, meaning.field + ": " + meaning.description, {{meaning.field, meaning.description}});
}

// SQLSTATEs without a dedicated libpqxx 6.4 exception class.
constexpr char kReadOnlyTransaction[] = "25006";
constexpr char kLockNotAvailable[] = "55P03";
constexpr char kQueryCanceled[] = "57014";  // statement_timeout
constexpr char kAdminShutdown[] = "57P01";
constexpr char kCannotConnectNow[] = "57P03";

}  // namespace

TranslatedError TranslateDatabaseError(const std::exception& error) {
  if (const auto* e = dynamic_cast<const pqxx::transaction_rollback*>(&error)) {
    // serialization_failure, deadlock_detected, statement_completion_unknown
    return {Aborted(std::string("transaction lost a race: ") + e->what()), true, false};
  }
  if (const auto* e = dynamic_cast<const pqxx::in_doubt_error*>(&error)) {
    return {Unavailable(std::string("connection lost during commit; the outcome is unknown: ") + e->what()), false,
            true};
  }
  if (const auto* e = dynamic_cast<const pqxx::broken_connection*>(&error)) {
    return {Unavailable(std::string("database connection lost: ") + e->what()), false, true};
  }
  if (const auto* e = dynamic_cast<const pqxx::unique_violation*>(&error)) {
    return {ConstraintViolation(*e, Code::kAlreadyExists)};
  }
  if (const auto* e = dynamic_cast<const pqxx::foreign_key_violation*>(&error)) {
    return {ConstraintViolation(*e, Code::kFailedPrecondition)};
  }
  if (const auto* e = dynamic_cast<const pqxx::integrity_constraint_violation*>(&error)) {
    return {ConstraintViolation(*e, Code::kInvalidArgument)};  // check, not-null, exclusion
  }
  if (const auto* e = dynamic_cast<const pqxx::sql_error*>(&error)) {
    const std::string& state = e->sqlstate();
    if (state == kReadOnlyTransaction) return {FailedPrecondition(std::string("write in a read-only transaction"))};
    if (state == kQueryCanceled || state == kLockNotAvailable) {
      return {Unavailable(std::string("database statement timed out: ") + e->what())};
    }
    if (state == kAdminShutdown || state == kCannotConnectNow) {
      return {Unavailable(std::string("database is shutting down: ") + e->what()), false, true};
    }
    return {Internal("database error " + state + ": " + e->what())};
  }
  return {Internal(std::string("store: ") + error.what())};
}

}  // namespace septa::store
