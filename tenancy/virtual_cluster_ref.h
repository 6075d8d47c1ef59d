// The name of one virtual cluster: its tenant and its own name. The one
// place "<tenant>/<vcluster>" (the provisioner's controller key, a NOTIFY
// payload, a log line's name for it) and the API resource name
// "tenants/<tenant>/vclusters/<vcluster>" are spelled.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace septa::tenancy {

// "<tenant>/<vcluster>".
std::string VirtualClusterText(std::string_view tenant, std::string_view vcluster);
// "tenants/<tenant>/vclusters/<vcluster>" (the audit log's and the API's resource name).
std::string VirtualClusterResource(std::string_view tenant, std::string_view vcluster);

struct VirtualClusterRef {
  std::string tenant;
  std::string vcluster;

  std::string ToString() const { return VirtualClusterText(tenant, vcluster); }
  friend bool operator==(const VirtualClusterRef&, const VirtualClusterRef&) = default;
  friend auto operator<=>(const VirtualClusterRef&, const VirtualClusterRef&) = default;
};

// The inverse of ToString: exactly one slash between two non-empty names
// (names never hold one: names.h), else nullopt.
std::optional<VirtualClusterRef> ParseVirtualClusterRef(std::string_view text);

}  // namespace septa::tenancy
