#include "services/store/pg_errors.h"

#include <map>
#include <pqxx/pqxx>
#include <regex>

namespace septa::store {
namespace {

// What a violated constraint of migrations/ means to an API caller.
struct ConstraintMeaning {
  Code code;
  std::string field;  // empty for kAlreadyExists
  std::string description;
};

const std::map<std::string, ConstraintMeaning>& ConstraintMeanings() {
  static const auto* meanings = new std::map<std::string, ConstraintMeaning>{
      {"tenants_pkey", {Code::kAlreadyExists, "", "a tenant with this name already exists"}},
      {"tenants_name_format",
       {Code::kInvalidArgument, "name",
        "must be a DNS-1123 label of 1-40 characters: lower-case letters, digits and '-', "
        "starting and ending with a letter or digit"}},
      {"tenants_trust_tier_fkey", {Code::kInvalidArgument, "trust_tier", "no such trust tier"}},
      {"tenants_version_positive", {Code::kInvalidArgument, "version", "must be positive"}},
      {"api_tokens_pkey", {Code::kAlreadyExists, "", "an API token with this id already exists"}},
      {"api_tokens_secret_hash_key", {Code::kAlreadyExists, "", "an API token with this secret already exists"}},
      {"api_tokens_id_format", {Code::kInvalidArgument, "id", "must be 8-64 lower-case hex digits"}},
      {"api_tokens_principal_format", {Code::kInvalidArgument, "principal", "must be \"admin\" or \"tenant:<name>\""}},
      {"api_tokens_secret_hash_format",
       {Code::kInvalidArgument, "secret_hash", "must be a SHA-256 digest in lower-case hex"}},
      {"audit_log_action_present", {Code::kInvalidArgument, "action", "must not be empty"}},
      {"idempotency_keys_pkey", {Code::kAlreadyExists, "", "this idempotency key was already used"}},
      {"idempotency_keys_key_present", {Code::kInvalidArgument, "key", "must not be empty"}},
      {"leases_name_format", {Code::kInvalidArgument, "name", "must be 1-200 characters"}},
      {"leases_holder_format", {Code::kInvalidArgument, "holder", "must be 1-200 characters"}},
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
  const auto& meanings = ConstraintMeanings();
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
