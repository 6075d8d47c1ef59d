// API tokens declared in Git as a resource kind (resource_kind.h): a
// declaration says who the token is (an admin or a tenant principal), its
// role, its lifetime and the Secret of the host cluster its secret goes
// to — never the secret, which septad mints and writes only to that Secret
// (token_delivery.h). Only admins declare them, in the platform's apply
// sets: the sink is a namespace of the host cluster, which a tenant must
// not choose. A change of principal, role or sink, and a deletion, revoke
// the token delivered so far at once; a new lifetime applies to the next
// token.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "services/core/resource_kind.h"
#include "services/core/store.h"

namespace septa::core {

// "apitokens/ci-deployer".
std::string TokenDeclarationResource(std::string_view name);

// Lifetimes shorter than this would rotate too often to be useful.
inline constexpr std::chrono::seconds kMinDeclaredTokenTtl{std::chrono::minutes(5)};

class TokenDeclarationKind {
 public:
  using Object = TokenDeclaration;
  static constexpr std::string_view kKind = "ApiToken";

  std::string ResourceName(const TokenDeclaration& d) const { return TokenDeclarationResource(d.name); }
  // principal, role, ttl, deliver_to (written whole).
  Result<DeclaredFields> CheckDeclared(const DeclaredFields& declared) const;
  // Admin writers only, and the name (an identity alone passes: prune).
  Status Validate(const RequestContext& ctx, const TokenDeclaration& d) const;
  // The principal, lifetime and sink, as Create and Update write them.
  Status CheckSpec(const TokenDeclaration& d) const;
  Result<std::optional<TokenDeclaration>> Get(Tx& tx, const TokenDeclaration& key) const;
  // A tenant principal's tenant must exist.
  Result<TokenDeclaration> Create(WriteScope& scope, const TokenDeclaration& draft) const;
  Result<TokenDeclaration> Update(WriteScope& scope, const TokenDeclaration& live, const TokenDeclaration& desired,
                                  const DeclaredFields& declared) const;
  // Revokes the tokens it delivered and minted.
  Status Delete(WriteScope& scope, const TokenDeclaration& live) const;
  std::vector<FieldChange> Diff(const TokenDeclaration& live, const TokenDeclaration& desired,
                                const DeclaredFields& declared) const;
};

static_assert(ResourceKind<TokenDeclarationKind>);

}  // namespace septa::core
