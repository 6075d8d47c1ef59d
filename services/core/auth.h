// Authentication (bearer API tokens) and the authorization rules every use
// case applies. Token text: "septa_<id>_<secret>", id = 16 hex digits,
// secret = 256 random bits as base64url. Only SHA-256(secret) is stored.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "services/core/model.h"
#include "services/core/store.h"

namespace septa::core {

// Where a request came in, as audit records and drift reports name it.
enum class Surface {
  kSystem,    // septad itself: bootstrap, controllers, an apply set's revert
  kRest,      // REST with a bearer token
  kPortal,    // REST with the portal's session cookie
  kGrpc,      // gRPC from any client but septactl
  kSeptactl,  // gRPC from septactl (its user agent)
};
std::string_view SurfaceName(Surface surface);  // "system", "rest", "portal", "grpc", "septactl"

struct Person;  // people.h

// What a use case knows about the request it serves.
struct RequestContext {
  Principal principal{};
  std::string request_id{};
  Surface surface = Surface::kSystem;
  // An admin's reason to write fields a locked apply set owns (the
  // Septa-Break-Glass header, metadata septa-break-glass): checked by
  // CheckBreakGlassReason, audited with every record of the request.
  std::string break_glass{};
  // The person whose ID token authenticated the request (its principal is
  // the one its memberships give it here); null for an API token.
  std::shared_ptr<const Person> person{};
};

// A break-glass reason as a client sent it: 1-500 printable characters,
// or none.
Status CheckBreakGlassReason(std::string_view reason, std::string_view field);

// The client's request id when it is 1-128 characters of [A-Za-z0-9._-],
// otherwise a fresh random one.
std::string AcceptOrMakeRequestId(std::string_view from_client, RandomSource& random);

// The token of an Authorization header (HTTP) or metadata entry (gRPC):
// what follows the "Bearer" scheme, named in any case (RFC 7235) and one
// space; empty for any other header, so both transports refuse a token
// sent without its scheme alike.
std::string_view BearerToken(std::string_view authorization);

// A token's id and secret as issued: 16 hex digits and 256 random bits.
inline constexpr std::size_t kTokenIdBytes = 8;
inline constexpr std::size_t kTokenSecretBytes = 32;

// Unrevoked and unexpired at `now`: what the Authenticator accepts of a row.
bool IsLive(const ApiToken& token, TimePoint now);

struct ParsedTokenText {
  std::string id;
  std::string secret;
};
// nullopt unless `text` has the shape of a Septa token.
std::optional<ParsedTokenText> ParseTokenText(std::string_view text);
std::string FormatTokenText(std::string_view id, std::string_view secret);
// The cookie value of a person's portal session (person_sign_in.h):
// "septa_person_<id>_<secret>", never a bearer token's shape.
std::string FormatPersonCookie(std::string_view id, std::string_view secret);
std::optional<ParsedTokenText> ParsePersonCookie(std::string_view text);

// "admin" | "tenant:<name>" with a role; the error names `field`.
Result<Principal> ParsePrincipal(std::string_view field, std::string_view text, Role role);
std::string_view RoleName(Role role);  // "owner", "editor", "viewer"
// An API token's role: "owner" or "viewer" (never an editor's).
Result<Role> ParseRole(std::string_view field, std::string_view text);

// A principal signed in to the portal, and until when.
struct AuthenticatedSession {
  Principal principal;  // token_id: the session's
  TimePoint expire_time{};
  // A person's session (person_sign_in.h): the person, whose principal is
  // chosen per request as for its ID token; null for an API token's.
  std::shared_ptr<const Person> person{};
};

// Resolves a bearer token to a principal. Verified tokens are cached for
// `cache_ttl` so that a hot read path costs no database round trip; a
// revocation made through this process takes effect at once (Forget), one
// made by another replica within `cache_ttl`.
class Authenticator {
 public:
  Authenticator(Store& store, const Clock& clock, std::chrono::milliseconds cache_ttl = std::chrono::seconds(5));

  // kUnauthenticated for a missing, malformed, unknown, expired or revoked
  // API token, and for a session's or sign-in code's text (those are no
  // bearer tokens). A tenant's principal is `suspended` while its tenant is,
  // read with the token and cached with it; a change of a tenant's state is
  // told to Forget as a revocation of its tokens (migrations/0015).
  Result<Principal> Authenticate(std::string_view bearer);
  // The same for the portal's session cookie: only a session, live, made
  // from an API token that is still live.
  Result<AuthenticatedSession> AuthenticateSession(std::string_view cookie);
  void Forget(const std::string& token_id);
  // Drops what a committed revocation makes stale (all of the cache for an
  // empty one); wire it to Store::WatchRevocations so that revocations made
  // on other replicas take effect at once instead of after cache_ttl.
  void Forget(const Revocation& revocation);

 private:
  struct LookedUp {
    ApiToken token;
    bool tenant_suspended = false;
  };
  struct CachedToken {
    LookedUp found;
    TimePoint fetched_at;
  };
  Result<LookedUp> Lookup(const std::string& id);
  // The live row of `kind` that `text` is, its parent live too; `what` names
  // it in errors ("bearer token", "session").
  Result<LookedUp> Verify(std::string_view text, TokenKind kind, std::string_view what);

  Store& store_;
  const Clock& clock_;
  std::chrono::milliseconds cache_ttl_;
  std::mutex mu_;
  std::unordered_map<std::string, CachedToken> cache_;
  std::uint64_t forget_generation_ = 0;  // bumped by every Forget
};

// Authorization. A principal that may not see a tenant gets kNotFound (so
// that existence does not leak); one that sees but may not change it gets
// kPermissionDenied.
bool CanSeeTenant(const Principal& p, std::string_view tenant);
Status RequireSeeTenant(const Principal& p, std::string_view tenant);
// kPermissionDenied for a suspended tenant's principal, naming `what` it may not do.
Status RequireNotSuspended(const Principal& p, std::string_view what);
// RequireNotSuspended, then the token must not be scoped to apply sets
// (those write only through their sets: RequireApplySetInScope) and the
// role must be an owner's or an editor's.
Status RequireWriter(const Principal& p, std::string_view what);
// RequireWriter, and an owner's role: who manages a tenant's access (its
// tokens and members), which a person who is an editor may not.
Status RequireOwner(const Principal& p, std::string_view what);
// kPermissionDenied (field apply_set) when `p` is scoped to apply sets and
// `set` is not one of them.
Status RequireApplySetInScope(const Principal& p, std::string_view set);
// A token's scope as a client or the configuration gives it: at most
// kMaxScopedApplySets apply set names (DNS-1123 labels); errors name `field`.
inline constexpr std::size_t kMaxScopedApplySets = 16;
Status CheckApplySetScope(std::string_view field, const std::vector<std::string>& sets);
// For a call that acts in its principal's own tenant (an apply set's): a
// principal of no tenant (a person a member of several tenants, or none,
// who named none) is refused, naming the Septa-Tenant selector.
Status RequireOwnTenant(const Principal& p);
Status RequireAdmin(const Principal& p, std::string_view what);
Status RequireAdminWriter(const Principal& p, std::string_view what);

}  // namespace septa::core
