// People's sign-in (docs/identity.md "People"): a person's ID token from
// one of the identity providers septad trusts to sign people in (an
// oidc_issuers entry with a client_id) is a bearer credential. It names a
// person (the provider's username and groups claims); the person acts, per
// request, as the principal its memberships give it in the one tenant the
// request names (its tenant field, or the Septa-Tenant header / septa-tenant
// metadata), or as an admin when one of its groups is one of the issuer's
// admin_groups. So the one authorization table (services/apiv1/auth_rule.h)
// and every use case keep their single-tenant Principal.
//
// Memberships are read from tenant_members, cached a few seconds; a change
// of a tenant's members is told to every replica (migrations/0027) and
// drops the cache at once (Forget).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "services/core/auth.h"
#include "services/core/model.h"
#include "services/core/store.h"
#include "services/core/tenant_member.h"

namespace septa::core {

// A person, as a verified ID token names them.
struct Person {
  std::string issuer{};               // "iss": one of oidc_issuers
  std::string user{};                 // the issuer's username claim
  std::vector<std::string> groups{};  // its groups claim: sorted, unique, at most kMaxMemberGroups
  TimePoint expire_time{};            // the token's "exp"
};

// Verifies a person's ID token (services/oidc implements it).
class PersonTokenVerifier {
 public:
  virtual ~PersonTokenVerifier() = default;
  // kUnauthenticated, the reason in the message (for septad's log: the
  // client is told only that the token was refused), for a token no
  // people-signing provider issued to Septa's sign-in clients, expired, or
  // with an unusable username or groups claim; kUnavailable when the
  // provider's keys cannot be fetched and none are known yet.
  virtual Result<Person> VerifyPerson(std::string_view token) = 0;
  // The ID token a portal sign-in's code was redeemed for: as VerifyPerson,
  // and its "nonce" must be the one the sign-in sent (OpenID Connect Core
  // 3.1.3.7), so a token replayed from another sign-in is refused.
  virtual Result<Person> VerifySignIn(std::string_view token, std::string_view nonce) = 0;
};

// What one tenant is to a person: the strongest role of the person's own
// membership and its groups', and the members that gave it.
struct Membership {
  std::string tenant{};
  MemberRole role = MemberRole::kViewer;
  std::vector<std::string> via{};  // "user:<name>", "group:<name>" (MemberText), ordered
  bool operator==(const Membership&) const = default;
};

// One Membership per tenant of `members` (rows of any tenants, as
// TenantMemberRepository::ListFor gives them), ordered by tenant.
std::vector<Membership> MembershipsOf(std::span<const TenantMember> members);

// Whether one of the person's groups (sorted, as Person keeps them) is one
// of `admin_groups`, by exact name.
bool InAdminGroup(const Person& person, std::span<const std::string> admin_groups);

// The principal a person acts as. Admin (owner) when one of its groups is
// in `admin_groups`; otherwise the member of `tenant` it is (owner, editor
// or viewer), and when `tenant` is empty the one tenant it is a member of,
// if it is of exactly one. A tenant it is no member of, or none named when
// it is a member of several, gives a principal of no tenant: it sees no
// tenant (kNotFound, as for a token: existence does not leak) and lists
// none; GetCaller lists its memberships. The principal's `person` is the
// user's name, for the audit.
Result<Principal> PrincipalOfPerson(const Person& person, std::span<const Membership> memberships,
                                    std::span<const std::string> admin_groups, std::string_view tenant);

// The Principal's role for a member's: an editor is kEditor.
Role RoleOfMember(MemberRole role);

// Whether a bearer token is a JWT's shape (three base64url parts), which a
// Septa API token never is: the transports send it to PeopleAuthenticator.
bool LooksLikeJwt(std::string_view bearer);

struct PeopleSettings {
  // Per issuer, the groups whose members are admins (owners).
  std::unordered_map<std::string, std::vector<std::string>> admin_groups{};
  std::chrono::milliseconds cache_ttl{5000};  // memberships read once per person this long
};

class PeopleAuthenticator {
 public:
  // `verifier` null: no provider signs people in, and every person's token
  // is refused as such.
  PeopleAuthenticator(Store& store, const Clock& clock, std::shared_ptr<PersonTokenVerifier> verifier,
                      PeopleSettings settings);

  bool enabled() const { return verifier_ != nullptr; }
  // The person a bearer ID token names. Refusals are kUnauthenticated with
  // one message for the client ("the identity token was refused: ..."),
  // the verifier's reason logged at warn with `request_id`. A token
  // verified once is known by its SHA-256 until its "exp", so that a
  // person's every request does not verify a signature again
  // (docs/BENCHMARKS.md "People's ID tokens").
  Result<Person> Verify(std::string_view token, std::string_view request_id);
  // The principal `person` acts as for a request naming `tenant` (empty:
  // none), as PrincipalOfPerson, its memberships read (or cached).
  Result<Principal> PrincipalFor(const Person& person, std::string_view tenant);
  // Every tenant `person` is a member of, and whether it is an admin.
  Result<std::vector<Membership>> Memberships(const Person& person);
  bool IsAdmin(const Person& person) const;
  // A change of some tenant's members (or any revocation): memberships are
  // read again.
  void Forget();

 private:
  struct Cached {
    std::vector<Membership> memberships;
    TimePoint fetched_at;
  };
  std::span<const std::string> AdminGroupsOf(const std::string& issuer) const;

  Store& store_;
  const Clock& clock_;
  std::shared_ptr<PersonTokenVerifier> verifier_;
  PeopleSettings settings_;
  std::mutex mu_;
  std::unordered_map<std::string, Cached> cache_;  // by issuer, user and groups
  std::uint64_t generation_ = 0;                   // bumped by Forget
  std::mutex verified_mu_;
  std::unordered_map<std::string, Person> verified_;  // by the token's SHA-256, until its expiry
};

// Who a request's bearer credential is: an API token's principal, or a
// person (an ID token, LooksLikeJwt) and the principal it acts as in
// `tenant` (the request's tenant field or selector; empty: none). The
// errors are the authenticators'.
struct Caller {
  Principal principal{};
  std::shared_ptr<const Person> person{};
};
Result<Caller> AuthenticateBearer(Authenticator& tokens, PeopleAuthenticator& people, std::string_view bearer,
                                  std::string_view tenant, std::string_view request_id);

// The tenant selector of a request that names no tenant in its fields (the
// Septa-Tenant header, septa-tenant metadata): empty, or a tenant's name
// (kInvalidArgument naming `field` otherwise).
inline constexpr char kTenantSelectorHeader[] = "Septa-Tenant";
inline constexpr char kTenantSelectorMetadata[] = "septa-tenant";
Status CheckTenantSelector(std::string_view field, std::string_view selector);

// What GetCaller answers: who the caller is and, for a person, every
// tenant it is a member of.
struct CallerDescription {
  Principal principal{};  // as this request acts
  std::shared_ptr<const Person> person{};
  bool admin_by_group = false;  // a person in one of its issuer's admin_groups
  std::vector<Membership> memberships{};
};
Result<CallerDescription> DescribeCaller(const RequestContext& ctx, PeopleAuthenticator& people);

}  // namespace septa::core
