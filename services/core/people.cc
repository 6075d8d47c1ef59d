#include "services/core/people.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

#include "services/core/crypto.h"
#include "services/core/validation.h"

namespace septa::core {

namespace {

// Stronger roles first, so that the strongest of several is the least.
int Rank(MemberRole role) {
  switch (role) {
    case MemberRole::kOwner: return 0;
    case MemberRole::kEditor: return 1;
    case MemberRole::kViewer: return 2;
  }
  return 2;
}

bool IsBase64UrlPart(std::string_view part) {
  return !part.empty() && std::ranges::all_of(part, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

constexpr std::size_t kMaxCachedPeople = 10000;

std::string CacheKey(const Person& person) {
  // NUL cannot be in a verified claim: the parts cannot run together.
  std::string key = person.issuer + '\0' + person.user;
  for (const std::string& group : person.groups) key += '\0' + group;
  return key;
}

}  // namespace

std::vector<Membership> MembershipsOf(std::span<const TenantMember> members) {
  std::map<std::string, Membership> by_tenant;
  for (const TenantMember& member : members) {
    auto [it, added] = by_tenant.try_emplace(member.tenant, Membership{.tenant = member.tenant, .role = member.role});
    if (!added && Rank(member.role) < Rank(it->second.role)) it->second.role = member.role;
    it->second.via.push_back(MemberText(member));
  }
  std::vector<Membership> out;
  out.reserve(by_tenant.size());
  for (auto& [tenant, membership] : by_tenant) {
    std::ranges::sort(membership.via);
    out.push_back(std::move(membership));
  }
  return out;
}

Role RoleOfMember(MemberRole role) {
  switch (role) {
    case MemberRole::kOwner: return Role::kOwner;
    case MemberRole::kEditor: return Role::kEditor;
    case MemberRole::kViewer: return Role::kViewer;
  }
  return Role::kViewer;
}

bool InAdminGroup(const Person& person, std::span<const std::string> admin_groups) {
  return std::ranges::any_of(
      admin_groups, [&](const std::string& group) { return std::ranges::binary_search(person.groups, group); });
}

Result<Principal> PrincipalOfPerson(const Person& person, std::span<const Membership> memberships,
                                    std::span<const std::string> admin_groups, std::string_view tenant) {
  Principal principal;
  principal.person = person.user;
  principal.role = Role::kViewer;
  if (InAdminGroup(person, admin_groups)) {
    principal.admin = true;
    principal.role = Role::kOwner;
    return principal;
  }
  const Membership* chosen = nullptr;
  if (tenant.empty()) {
    if (memberships.size() == 1) chosen = &memberships.front();
  } else {
    auto found = std::ranges::find(memberships, tenant, &Membership::tenant);
    if (found != memberships.end()) chosen = &*found;
  }
  if (chosen != nullptr) {
    principal.tenant = chosen->tenant;
    principal.role = RoleOfMember(chosen->role);
  }
  return principal;
}

bool LooksLikeJwt(std::string_view bearer) {
  const std::size_t first = bearer.find('.');
  if (first == std::string_view::npos) return false;
  const std::size_t second = bearer.find('.', first + 1);
  if (second == std::string_view::npos) return false;
  return IsBase64UrlPart(bearer.substr(0, first)) && IsBase64UrlPart(bearer.substr(first + 1, second - first - 1)) &&
         IsBase64UrlPart(bearer.substr(second + 1));
}

PeopleAuthenticator::PeopleAuthenticator(Store& store, const Clock& clock,
                                         std::shared_ptr<PersonTokenVerifier> verifier, PeopleSettings settings)
    : store_(store), clock_(clock), verifier_(std::move(verifier)), settings_(std::move(settings)) {
  for (auto& [issuer, groups] : settings_.admin_groups) std::ranges::sort(groups);
}

Result<Person> PeopleAuthenticator::Verify(std::string_view token, std::string_view request_id) {
  if (verifier_ == nullptr) {
    return Unauthenticated(
        "the identity token was refused: septad signs no people in (no oidc_issuers entry has a client_id)");
  }
  const std::string digest = Sha256Hex(token);
  const TimePoint now = clock_.Now();
  {
    std::lock_guard lock(verified_mu_);
    auto known = verified_.find(digest);
    if (known != verified_.end() && now < known->second.expire_time) return known->second;
  }
  Result<Person> person = verifier_->VerifyPerson(token);
  if (person.ok()) {
    std::lock_guard lock(verified_mu_);
    // Bounded: each entry is good until its token expires (minutes).
    if (verified_.size() >= kMaxCachedPeople) {
      std::erase_if(verified_, [&](const auto& e) { return now >= e.second.expire_time; });
      if (verified_.size() >= kMaxCachedPeople) verified_.clear();
    }
    verified_.insert_or_assign(digest, *person);
    return person;
  }
  if (person.status().code() != Code::kUnauthenticated) return person;
  spdlog::warn("people: request_id={} an identity token was refused: {}", request_id, person.status().message());
  return Unauthenticated("the identity token was refused (septad's log says why, by this request's id)");
}

std::span<const std::string> PeopleAuthenticator::AdminGroupsOf(const std::string& issuer) const {
  auto found = settings_.admin_groups.find(issuer);
  if (found == settings_.admin_groups.end()) return {};
  return found->second;
}

bool PeopleAuthenticator::IsAdmin(const Person& person) const {
  return InAdminGroup(person, AdminGroupsOf(person.issuer));
}

Result<std::vector<Membership>> PeopleAuthenticator::Memberships(const Person& person) {
  const std::string key = CacheKey(person);
  const TimePoint now = clock_.Now();
  std::uint64_t generation = 0;
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end() && now - it->second.fetched_at < settings_.cache_ttl) return it->second.memberships;
    generation = generation_;
  }
  SEPTA_ASSIGN_OR_RETURN(const std::vector<TenantMember> members, TransactFor(store_, TxMode::kReadOnly, [&](Tx& tx) {
                           return tx.TenantMembers().ListFor(person.user, person.groups);
                         }));
  std::vector<Membership> memberships = MembershipsOf(members);
  if (settings_.cache_ttl.count() > 0) {
    std::lock_guard lock(mu_);
    // A change told while we read may be newer than what we read.
    if (generation == generation_) {
      // Bounded: people come and go, and each entry is good for cache_ttl.
      if (cache_.size() >= kMaxCachedPeople) {
        std::erase_if(cache_, [&](const auto& e) { return now - e.second.fetched_at >= settings_.cache_ttl; });
        if (cache_.size() >= kMaxCachedPeople) cache_.clear();
      }
      cache_[key] = Cached{memberships, now};
    }
  }
  return memberships;
}

Result<Principal> PeopleAuthenticator::PrincipalFor(const Person& person, std::string_view tenant) {
  if (IsAdmin(person)) return PrincipalOfPerson(person, {}, AdminGroupsOf(person.issuer), tenant);
  SEPTA_ASSIGN_OR_RETURN(const std::vector<Membership> memberships, Memberships(person));
  return PrincipalOfPerson(person, memberships, AdminGroupsOf(person.issuer), tenant);
}

void PeopleAuthenticator::Forget() {
  std::lock_guard lock(mu_);
  ++generation_;
  cache_.clear();
}

Result<Caller> AuthenticateBearer(Authenticator& tokens, PeopleAuthenticator& people, std::string_view bearer,
                                  std::string_view tenant, std::string_view request_id) {
  Caller caller;
  if (!LooksLikeJwt(bearer)) {
    SEPTA_ASSIGN_OR_RETURN(caller.principal, tokens.Authenticate(bearer));
    return caller;
  }
  SEPTA_ASSIGN_OR_RETURN(Person person, people.Verify(bearer, request_id));
  caller.person = std::make_shared<const Person>(std::move(person));
  SEPTA_ASSIGN_OR_RETURN(caller.principal, people.PrincipalFor(*caller.person, tenant));
  return caller;
}

Status CheckTenantSelector(std::string_view field, std::string_view selector) {
  if (selector.empty()) return Status::Ok();
  return ValidateTenantName(field, selector);
}

Result<CallerDescription> DescribeCaller(const RequestContext& ctx, PeopleAuthenticator& people) {
  CallerDescription out{.principal = ctx.principal, .person = ctx.person};
  if (ctx.person == nullptr) return out;
  out.admin_by_group = people.IsAdmin(*ctx.person);
  SEPTA_ASSIGN_OR_RETURN(out.memberships, people.Memberships(*ctx.person));
  return out;
}

}  // namespace septa::core
