// The roles a tenant credential for a virtual cluster can carry, the group
// (a client certificate's O) each maps to, and the built-in ClusterRole that
// group is bound to inside every virtual cluster (host::
// VirtualClusterRoleBindings, which either control plane seeds). One table,
// so the issuers' groups and the bindings cannot drift.
#pragma once

#include <array>
#include <string_view>

namespace septa::tenancy {

struct VclusterRole {
  std::string_view name;          // as requested: "admin", "edit", "view"
  std::string_view group;         // the certificate's O
  std::string_view cluster_role;  // the built-in ClusterRole bound to the group
};

inline constexpr std::array<VclusterRole, 3> kVclusterRoles{{
    {"admin", "septa:admin", "cluster-admin"},
    {"edit", "septa:edit", "edit"},
    {"view", "septa:view", "view"},
}};

}  // namespace septa::tenancy
