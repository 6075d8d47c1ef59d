// Septa's domain records as the use cases and the store see them. Transports
// convert them to and from the API v1 messages (services/apiv1).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "tenancy/quota.h"
#include "tenancy/trust_tier.h"

namespace septa::core {

// One trust tier type for the whole code base (tenancy/trust_tier.h).
using tenancy::TrustTier;

// A suspended tenant keeps its records but uses nothing (docs/ARCHITECTURE.md
// "Suspension"): its API tokens only read, no credential is issued for it,
// its virtual clusters' APIs refuse its credentials, and its workloads are
// stopped as sleep stops them, until an admin makes it active again.
enum class TenantState { kActive, kSuspended };

struct Tenant {
  std::string name;  // DNS-1123 label, 1-40 chars, immutable
  std::string display_name;
  std::string trust_tier;
  std::map<std::string, std::string> labels;
  TenantState state = TenantState::kActive;
  tenancy::TenantQuota quota;  // set by admins; every field absent: unlimited
  TimePoint create_time{};
  TimePoint update_time{};
  std::int64_t version = 0;  // bumped by every change; the etag is derived from it
};

// The clock's time at the precision PostgreSQL stores (microseconds), so a
// record returned by a write equals the same record read back later.
inline TimePoint Now(const Clock& clock) { return std::chrono::floor<std::chrono::microseconds>(clock.Now()); }

// The etag clients see for a resource version ("7" -> "\"7\"" in HTTP headers).
std::string EtagOf(std::int64_t version);
// OK when `if_match` is empty or the etag of `version`; FAILED_PRECONDITION
// naming `what` (e.g. `tenant "acme"`) otherwise.
Status CheckEtag(std::string_view if_match, std::int64_t version, std::string_view what);

// An API token is an owner's or a viewer's; a person acts as an editor too
// (a tenant member's role): it writes the tenant's resources but manages
// neither its tokens nor its members (RequireOwner).
enum class Role { kOwner, kEditor, kViewer };

// Who makes a request. Admins may do anything; a tenant principal acts only
// on its own tenant, and a viewer only reads.
struct Principal {
  bool admin = false;
  std::string tenant;  // set when !admin
  Role role = Role::kViewer;
  // A tenant principal whose tenant is suspended: it may read, never write
  // (RequireWriter), whatever its role.
  bool suspended = false;
  std::string token_id;  // the API token that authenticated the request
  // A token scoped to these apply sets (of its principal) applies and diffs
  // them only, and writes nothing else (RequireWriter); empty: not scoped.
  std::vector<std::string> apply_sets{};
  // A person signed in through an identity provider (people.h): its user
  // name, which the audit records beside the principal; empty for a token.
  std::string person{};
  std::string ToString() const;  // "admin" or "tenant:<name>"
};

// What a row of api_tokens is (migrations/0019): an API token (a bearer
// token), a browser session made from one (accepted only as the portal's
// cookie), or a one-time sign-in code that becomes a session.
enum class TokenKind { kApi, kSession, kSignIn };

struct ApiToken {
  std::string id;         // public identifier (hex), part of the secret's text
  std::string principal;  // "admin" or "tenant:<name>"
  Role role = Role::kOwner;
  std::string secret_hash;  // SHA-256 of the secret, hex; the secret itself is never stored
  std::string description;
  TimePoint create_time{};
  std::optional<TimePoint> expire_time;
  std::optional<TimePoint> revoke_time;
  TokenKind kind = TokenKind::kApi;
  std::string parent_id;                  // the API token a session or sign-in code was made from; empty for kApi
  std::vector<std::string> apply_sets{};  // its scope (Principal::apply_sets); empty: none
};

// One audited mutation, written in the same transaction as the change.
struct AuditRecord {
  std::int64_t id = 0;  // assigned by the store
  TimePoint time{};
  std::string principal;
  std::string action;    // "tenant.create", "token.revoke", ...
  std::string resource;  // "tenants/acme", "tokens/3fa2..."
  std::string old_etag;  // empty when the resource did not exist
  std::string new_etag;  // empty when the resource is gone
  std::string request_id;
  std::string surface{};  // where the request came in: SurfaceName (auth.h)
  // What the action adds in words: for applyset.drift and
  // applyset.break_glass, the write and the owned fields it changed (and
  // the admin's reason); empty for most.
  std::string detail{};
};

// A create retried with the same Idempotency-Key returns the first answer.
struct IdempotencyRecord {
  std::string principal;
  std::string key;
  std::string request_hash;  // SHA-256 of the canonical request
  std::string resource;      // what the first request created, e.g. "tenants/acme"
  TimePoint create_time{};
};

}  // namespace septa::core
