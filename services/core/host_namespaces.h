// Where the names of a virtual cluster's host objects outside the provisioner
// and the syncer come from (a control plane on the host, the Vault mounts):
// the host namespace stored with it, given once at create
// (tenancy/host/names.h). Derived again, a changed name function would move
// an existing virtual cluster's namespace and mounts.
#pragma once

#include <functional>
#include <string>

#include "common/status.h"
#include "services/core/virtual_object_store.h"

namespace septa::core {

class Store;

using HostNamespaceOf = std::function<Result<std::string>(const VirtualClusterKey&)>;

// The stored host namespace, read from `store` at each call. A virtual
// cluster without a row (only its removal asks then) or not named yet
// (a row of an older septad) gets the one HostNamespaceName gives now.
HostNamespaceOf StoredHostNamespaces(Store& store);

}  // namespace septa::core
