#include "services/core/tenant_member.h"

#include "common/text.h"

namespace septa::core {

namespace {
constexpr std::string_view kUserPrefix = "user:";
constexpr std::string_view kGroupPrefix = "group:";
}  // namespace

std::string_view MemberKindName(MemberKind kind) { return kind == MemberKind::kGroup ? "group" : "user"; }

std::string_view MemberRoleName(MemberRole role) {
  switch (role) {
    case MemberRole::kOwner: return "owner";
    case MemberRole::kEditor: return "editor";
    case MemberRole::kViewer: return "viewer";
  }
  return "viewer";
}

Result<MemberRole> ParseMemberRole(std::string_view field, std::string_view text) {
  if (text == "owner") return MemberRole::kOwner;
  if (text == "editor") return MemberRole::kEditor;
  if (text == "viewer") return MemberRole::kViewer;
  if (text.empty()) return InvalidField(std::string(field), "is required: owner, editor or viewer");
  return InvalidField(std::string(field), "must be owner, editor or viewer, not " + QuotedExcerpt(text));
}

std::string MemberText(MemberKind kind, std::string_view name) {
  return std::string(MemberKindName(kind)) + ":" + std::string(name);
}

Result<MemberId> ParseMember(std::string_view field, std::string_view text) {
  MemberId id;
  if (text.starts_with(kUserPrefix)) {
    id = {MemberKind::kUser, std::string(text.substr(kUserPrefix.size()))};
  } else if (text.starts_with(kGroupPrefix)) {
    id = {MemberKind::kGroup, std::string(text.substr(kGroupPrefix.size()))};
  } else if (text.empty()) {
    return InvalidField(std::string(field), "is required: user:<name> or group:<name>");
  } else {
    return InvalidField(std::string(field),
                        "must be user:<name> or group:<name> (the name as the identity "
                        "provider's username or groups claim gives it), not " +
                            QuotedExcerpt(text));
  }
  SEPTA_RETURN_IF_ERROR(CheckMemberName(field, id.name));
  return id;
}

Status CheckMemberName(std::string_view field, std::string_view name) {
  if (name.empty()) return InvalidField(std::string(field), "names no one: the name after user: or group: is empty");
  return ValidateText(field, name, kMaxMemberNameBytes);
}

bool IsMemberName(std::string_view name) { return CheckMemberName("name", name).ok(); }

std::string MemberResource(std::string_view tenant, MemberKind kind, std::string_view name) {
  return "tenants/" + std::string(tenant) + "/members/" + MemberText(kind, name);
}

}  // namespace septa::core
