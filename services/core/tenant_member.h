// Tenant members (docs/identity.md "Members"): a user or a group of the
// identity providers septad trusts (oidc_issuers), each with a role in one
// tenant. A person who signs in acts with the role its memberships give it
// (people.h).
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"

namespace septa::core {

// Who a member is: one user, or everyone the provider puts in a group.
enum class MemberKind { kUser, kGroup };

// What a member may do in its tenant: an owner all that the tenant's owner
// tokens may, and manage its members; an editor write the tenant's
// resources but not its members or tokens; a viewer read. A person acts
// with the Role of the same name (RoleOfMember); API tokens are owners' or
// viewers' only.
enum class MemberRole { kOwner, kEditor, kViewer };

// A member's name, as the provider's username or groups claim gives it.
inline constexpr std::size_t kMaxMemberNameBytes = 256;
// Members one tenant may have.
inline constexpr int kMaxTenantMembers = 1000;
// Groups one TenantMemberRepository::ListFor may ask about: a provider's
// groups claim as sign-in reads it, bounded.
inline constexpr std::size_t kMaxMemberGroups = 1000;

struct MemberId {
  MemberKind kind = MemberKind::kUser;
  std::string name{};
  auto operator<=>(const MemberId&) const = default;
};

struct TenantMember {
  std::string tenant{};
  MemberKind kind = MemberKind::kUser;
  std::string name{};  // 1-256 bytes of one line of printable text
  MemberRole role = MemberRole::kViewer;
  TimePoint create_time{};
  TimePoint update_time{};
  std::int64_t version = 0;  // bumped by every change; the etag is derived from it
  bool operator==(const TenantMember&) const = default;
};

std::string_view MemberKindName(MemberKind kind);  // "user", "group"
std::string_view MemberRoleName(MemberRole role);  // "owner", "editor", "viewer"
// The error names `field`.
Result<MemberRole> ParseMemberRole(std::string_view field, std::string_view text);

// "user:<name>" or "group:<name>", as the API and septactl write a member.
std::string MemberText(MemberKind kind, std::string_view name);
inline std::string MemberText(const TenantMember& member) { return MemberText(member.kind, member.name); }
// The inverse of MemberText; a refusal names `field` and quotes no more of
// `text` than QuotedExcerpt does.
Result<MemberId> ParseMember(std::string_view field, std::string_view text);

// 1-256 bytes of one line of printable text (ValidateText): what
// migrations/0026's tenant_members_name_format admits.
Status CheckMemberName(std::string_view field, std::string_view name);
bool IsMemberName(std::string_view name);

// "tenants/acme/members/user:alice@acme.test": the member's audit resource.
std::string MemberResource(std::string_view tenant, MemberKind kind, std::string_view name);

}  // namespace septa::core
