#include "services/core/auth.h"

#include <algorithm>
#include <cctype>

#include "common/text.h"
#include "services/base/mac.h"
#include "services/core/crypto.h"
#include "services/core/validation.h"

namespace septa::core {

namespace {
constexpr std::string_view kTokenPrefix = "septa_";
constexpr std::string_view kPersonCookiePrefix = "septa_person_";
constexpr std::size_t kIdHexLen = 16;
constexpr std::size_t kSecretLen = 43;  // 32 bytes as unpadded base64url
constexpr std::string_view kTenantPrefix = "tenant:";

bool IsHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}
}  // namespace

std::string_view SurfaceName(Surface surface) {
  switch (surface) {
    case Surface::kSystem: return "system";
    case Surface::kRest: return "rest";
    case Surface::kPortal: return "portal";
    case Surface::kGrpc: return "grpc";
    case Surface::kSeptactl: return "septactl";
  }
  return "system";
}

Status CheckBreakGlassReason(std::string_view reason, std::string_view field) {
  constexpr std::size_t kMaxReason = 500;
  if (reason.size() > kMaxReason) {
    return InvalidField(std::string(field),
                        "holds " + std::to_string(reason.size()) + " bytes; at most " + std::to_string(kMaxReason));
  }
  for (const char c : reason) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return InvalidField(std::string(field), "holds a control character; give the reason as one line of text");
    }
  }
  return Status::Ok();
}

std::string AcceptOrMakeRequestId(std::string_view from_client, RandomSource& random) {
  constexpr std::size_t kMaxRequestId = 128;
  bool ok = !from_client.empty() && from_client.size() <= kMaxRequestId;
  for (char c : from_client) {
    const bool allowed =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    ok = ok && allowed;
  }
  if (ok) return std::string(from_client);
  // The id only correlates log lines: without entropy the request still runs
  // (anything that needs a secret fails with UNAVAILABLE on its own).
  auto made = RandomHex(random, 8);
  return made.ok() ? *std::move(made) : std::string("no-entropy");
}

std::string_view BearerToken(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size()) return {};
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return {};
  }
  return authorization.substr(kScheme.size());
}

namespace {
// "<prefix><id>_<secret>": a token's text, or a person's session cookie.
std::optional<ParsedTokenText> ParseSecretText(std::string_view prefix, std::string_view text) {
  if (!text.starts_with(prefix)) return std::nullopt;
  text.remove_prefix(prefix.size());
  if (text.size() != kIdHexLen + 1 + kSecretLen || text[kIdHexLen] != '_') return std::nullopt;
  std::string_view id = text.substr(0, kIdHexLen);
  if (!IsHex(id)) return std::nullopt;
  return ParsedTokenText{std::string(id), std::string(text.substr(kIdHexLen + 1))};
}
std::string FormatSecretText(std::string_view prefix, std::string_view id, std::string_view secret) {
  std::string out(prefix);
  out += id;
  out += '_';
  out += secret;
  return out;
}
}  // namespace

std::optional<ParsedTokenText> ParseTokenText(std::string_view text) { return ParseSecretText(kTokenPrefix, text); }

bool IsLive(const ApiToken& token, TimePoint now) {
  return !token.revoke_time && (!token.expire_time || now < *token.expire_time);
}

std::string FormatTokenText(std::string_view id, std::string_view secret) {
  return FormatSecretText(kTokenPrefix, id, secret);
}

std::string FormatPersonCookie(std::string_view id, std::string_view secret) {
  return FormatSecretText(kPersonCookiePrefix, id, secret);
}

std::optional<ParsedTokenText> ParsePersonCookie(std::string_view text) {
  return ParseSecretText(kPersonCookiePrefix, text);
}

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kOwner: return "owner";
    case Role::kEditor: return "editor";
    case Role::kViewer: return "viewer";
  }
  return "viewer";
}

Result<Role> ParseRole(std::string_view field, std::string_view text) {
  if (text == "owner") return Role::kOwner;
  if (text == "viewer") return Role::kViewer;
  return InvalidField(std::string(field), "must be \"owner\" or \"viewer\"");
}

Result<Principal> ParsePrincipal(std::string_view field, std::string_view text, Role role) {
  Principal p;
  p.role = role;
  if (text == "admin") {
    p.admin = true;
    return p;
  }
  if (text.starts_with(kTenantPrefix)) {
    std::string_view name = text.substr(kTenantPrefix.size());
    SEPTA_RETURN_IF_ERROR(ValidateTenantName(field, name));
    p.tenant = std::string(name);
    return p;
  }
  return InvalidField(std::string(field), "must be \"admin\" or \"tenant:<name>\"");
}

Authenticator::Authenticator(Store& store, const Clock& clock, std::chrono::milliseconds cache_ttl)
    : store_(store), clock_(clock), cache_ttl_(cache_ttl) {}

Result<Authenticator::LookedUp> Authenticator::Lookup(const std::string& id) {
  const TimePoint now = clock_.Now();
  std::uint64_t generation = 0;
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(id);
    if (it != cache_.end() && now - it->second.fetched_at < cache_ttl_) return it->second.found;
    generation = forget_generation_;
  }
  LookedUp looked_up;
  Status st = store_.Transact(TxMode::kReadOnly, [&](Tx& tx) -> Status {
    auto found = tx.Tokens().Get(id);
    SEPTA_RETURN_IF_ERROR(found);
    looked_up.token = *std::move(found);
    return Status::Ok();
  });
  if (!st.ok()) return st;
  // A read of its own (one statement each, no snapshot transaction to
  // begin and commit): a state changed in between is told to Forget anyway.
  if (looked_up.token.principal.starts_with(kTenantPrefix)) {
    const std::string tenant = looked_up.token.principal.substr(kTenantPrefix.size());
    st = store_.Transact(TxMode::kReadOnly, [&](Tx& tx) -> Status {
      auto owner = tx.Tenants().Get(tenant);
      if (IsNotFound(owner)) return Status::Ok();  // deleted: its tokens are revoked
      SEPTA_RETURN_IF_ERROR(owner);
      looked_up.tenant_suspended = owner->state == TenantState::kSuspended;
      return Status::Ok();
    });
    if (!st.ok()) return st;
  }
  if (cache_ttl_.count() > 0) {
    std::lock_guard lock(mu_);
    // A revocation told while we read may be older than what we read: keep
    // nothing rather than a row it made stale.
    if (generation == forget_generation_) cache_[id] = CachedToken{looked_up, now};
  }
  return looked_up;
}

Result<Authenticator::LookedUp> Authenticator::Verify(std::string_view text, TokenKind kind, std::string_view what) {
  const std::string invalid = "invalid " + std::string(what);
  std::optional<ParsedTokenText> parsed = ParseTokenText(text);
  if (!parsed) return Unauthenticated(invalid);
  Result<LookedUp> found = Lookup(parsed->id);
  if (!found.ok()) {
    if (IsNotFound(found)) return Unauthenticated(invalid);
    return found.status();
  }
  const ApiToken& token = found->token;
  if (!base::ConstantTimeEquals(Sha256Hex(parsed->secret), token.secret_hash) || token.kind != kind) {
    return Unauthenticated(invalid);
  }
  const TimePoint now = clock_.Now();
  if (token.revoke_time) return Unauthenticated(std::string(what) + " has been revoked");
  if (token.expire_time && now >= *token.expire_time) return Unauthenticated(std::string(what) + " has expired");
  if (!token.parent_id.empty()) {
    // Made from an API token: it ends when that one does, at once on this
    // replica and within a notification on the others (Forget).
    Result<LookedUp> parent = Lookup(token.parent_id);
    if (!parent.ok() && !IsNotFound(parent)) return parent.status();
    if (!parent.ok() || !IsLive(parent->token, now)) {
      return Unauthenticated(std::string(what) + " has ended: the API token it was made from was revoked or expired");
    }
  }
  return found;
}

namespace {
Result<Principal> PrincipalOf(const ApiToken& token, bool tenant_suspended) {
  Result<Principal> principal = ParsePrincipal("principal", token.principal, token.role);
  if (!principal.ok()) return Internal("stored token has an invalid principal");
  principal->token_id = token.id;
  principal->suspended = !principal->admin && tenant_suspended;
  principal->apply_sets = token.apply_sets;
  return principal;
}
}  // namespace

Result<Principal> Authenticator::Authenticate(std::string_view bearer) {
  if (bearer.empty()) return Unauthenticated("missing bearer token: send \"Authorization: Bearer <token>\"");
  Result<LookedUp> found = Verify(bearer, TokenKind::kApi, "bearer token");
  SEPTA_RETURN_IF_ERROR(found);
  return PrincipalOf(found->token, found->tenant_suspended);
}

Result<AuthenticatedSession> Authenticator::AuthenticateSession(std::string_view cookie) {
  Result<LookedUp> found = Verify(cookie, TokenKind::kSession, "session");
  SEPTA_RETURN_IF_ERROR(found);
  auto principal = PrincipalOf(found->token, found->tenant_suspended);
  SEPTA_RETURN_IF_ERROR(principal);
  return AuthenticatedSession{*std::move(principal), found->token.expire_time.value_or(TimePoint::max())};
}

void Authenticator::Forget(const std::string& token_id) {
  std::lock_guard lock(mu_);
  ++forget_generation_;
  cache_.erase(token_id);
}

void Authenticator::Forget(const Revocation& revocation) {
  std::lock_guard lock(mu_);
  ++forget_generation_;
  if (!revocation.token_id.empty()) {
    cache_.erase(revocation.token_id);
  } else if (!revocation.principal.empty()) {
    std::erase_if(cache_,
                  [&](const auto& entry) { return entry.second.found.token.principal == revocation.principal; });
  } else {
    cache_.clear();
  }
}

bool CanSeeTenant(const Principal& p, std::string_view tenant) {
  // A principal of no tenant (a person naming none of its tenants) sees none.
  return p.admin || (!p.tenant.empty() && p.tenant == tenant);
}

Status RequireSeeTenant(const Principal& p, std::string_view tenant) {
  if (CanSeeTenant(p, tenant)) return Status::Ok();
  // Escaped: the name comes from the client, unchecked (a URL's %-escapes).
  return NotFound("tenant \"" + EscapeControlCharacters(tenant) + "\" not found");
}

Status RequireNotSuspended(const Principal& p, std::string_view what) {
  if (!p.suspended) return Status::Ok();
  return PermissionDenied("tenant \"" + p.tenant + "\" is suspended: its tokens may read but not " + std::string(what) +
                          " until an admin makes it ACTIVE again");
}

Status RequireWriter(const Principal& p, std::string_view what) {
  SEPTA_RETURN_IF_ERROR(RequireNotSuspended(p, what));
  if (!p.apply_sets.empty()) {
    return PermissionDenied("a token scoped to the apply sets " + Join(p.apply_sets, ", ") +
                            " may only apply and diff them, not " + std::string(what));
  }
  if (p.role != Role::kViewer) return Status::Ok();
  return PermissionDenied("a viewer may not " + std::string(what));
}

Status RequireOwner(const Principal& p, std::string_view what) {
  SEPTA_RETURN_IF_ERROR(RequireWriter(p, what));
  if (p.role == Role::kOwner) return Status::Ok();
  return PermissionDenied("an editor may not " + std::string(what) + ": only the tenant's owners may");
}

Status RequireApplySetInScope(const Principal& p, std::string_view set) {
  if (p.apply_sets.empty() || std::find(p.apply_sets.begin(), p.apply_sets.end(), set) != p.apply_sets.end()) {
    return Status::Ok();
  }
  return FieldError(
      Code::kPermissionDenied, "apply_set",
      "this token is scoped to the apply sets " + Join(p.apply_sets, ", ") + ", not " + QuotedExcerpt(set));
}

Status CheckApplySetScope(std::string_view field, const std::vector<std::string>& sets) {
  if (sets.size() > kMaxScopedApplySets) {
    return InvalidField(std::string(field), "names " + std::to_string(sets.size()) + " apply sets; at most " +
                                                std::to_string(kMaxScopedApplySets));
  }
  for (std::size_t i = 0; i < sets.size(); ++i) {
    if (!IsDns1123Label(sets[i])) {
      return InvalidField(std::string(field) + "[" + std::to_string(i) + "]",
                          QuotedExcerpt(sets[i]) + " is not an apply set name (a DNS-1123 label)");
    }
  }
  return Status::Ok();
}

Status RequireOwnTenant(const Principal& p) {
  if (p.admin || !p.tenant.empty()) return Status::Ok();
  return InvalidField("Septa-Tenant",
                      "name the tenant to act in: the Septa-Tenant header (gRPC: septa-tenant metadata) of a tenant "
                      "you are a member of");
}

Status RequireAdmin(const Principal& p, std::string_view what) {
  if (p.admin) return Status::Ok();
  return PermissionDenied("only an admin may " + std::string(what));
}

Status RequireAdminWriter(const Principal& p, std::string_view what) {
  SEPTA_RETURN_IF_ERROR(RequireAdmin(p, what));
  return RequireWriter(p, what);
}

}  // namespace septa::core
