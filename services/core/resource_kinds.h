// The kinds a declaration may name, and the one dispatch Apply and Diff
// (GitOps) use over them: plan what writing a declared object would do,
// do it in the caller's transaction, or delete it. A kind joins by
// satisfying ResourceKind (resource_kind.h) and taking its place in
// DeclaredObject; nothing here names a field of any kind.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "gpu/catalog.h"
#include "services/core/resource_kind.h"
#include "services/core/tenant_kind.h"
#include "services/core/token_declaration_kind.h"
#include "services/core/trust_tier_kind.h"
#include "services/core/virtual_cluster_kind.h"

namespace septa::core {

using DeclaredObject = std::variant<TrustTier, Tenant, tenancy::VirtualCluster, TokenDeclaration>;

// An object as a document declares it: its values, and which of its
// writable fields the document sets.
struct Declaration {
  DeclaredObject object;
  DeclaredFields declared;
};

enum class PlannedAction { kCreate, kUpdate, kUnchanged };

struct PlannedChange {
  std::string_view kind;  // "Tenant"
  std::string resource;   // "tenants/acme/vclusters/train"
  PlannedAction action = PlannedAction::kUnchanged;
  // The declared fields that differ (for a create, those set); never an output-only one.
  std::vector<FieldChange> fields;
  // The declared paths as the kind writes them (CheckDeclared).
  DeclaredFields declared;
};

class ResourceKinds {
 public:
  explicit ResourceKinds(const gpu::Catalog& catalog) : vclusters_(catalog) {}

  // Called with the plan before anything is written; an error it returns
  // is Apply's, with nothing written.
  using Gate = std::function<Status(const PlannedChange&)>;
  // Validates the declaration and compares it with the live object read in
  // scope's transaction (the plan), then, once `gate` passed the plan,
  // creates or updates as planned in that transaction.
  Result<PlannedChange> Apply(WriteScope& scope, const Declaration& declaration, const Gate& gate = nullptr) const;
  // Deletes the live object `object` names (validated as given, so pass
  // its identity alone); false when there is none.
  Result<bool> Delete(WriteScope& scope, const DeclaredObject& object) const;

  // "VirtualCluster", and "tenants/acme/vclusters/train".
  std::string_view KindOf(const DeclaredObject& object) const;
  std::string ResourceNameOf(const DeclaredObject& object) const;
  // The object holding only the identity that KindOf and ResourceNameOf
  // give (as a set's member rows keep it); INVALID_ARGUMENT otherwise.
  Result<DeclaredObject> IdentityOf(std::string_view kind, std::string_view resource) const;

 private:
  // Calls f(kind, object) with the kind of the object's type.
  template <class F>
  decltype(auto) Dispatch(const DeclaredObject& object, F&& f) const {
    return std::visit([&](const auto& o) -> decltype(auto) { return f(For(o), o); }, object);
  }
  const TrustTierKind& For(const TrustTier&) const { return tiers_; }
  const TenantKind& For(const Tenant&) const { return tenants_; }
  const VirtualClusterKind& For(const tenancy::VirtualCluster&) const { return vclusters_; }
  const TokenDeclarationKind& For(const TokenDeclaration&) const { return tokens_; }

  TrustTierKind tiers_;
  TenantKind tenants_;
  VirtualClusterKind vclusters_;
  TokenDeclarationKind tokens_;
};

}  // namespace septa::core
