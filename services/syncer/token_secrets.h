// The tenant's service account tokens on the host. For every synced pod
// that mounts one (tenancy/sync MountsServiceAccountToken), the virtual API
// mints a token bound to the virtual pod (TokenRequest; the lifetime asked,
// capped by the tier) and the syncer writes it, with the virtual API
// server's CA and the namespace, into the host Secret TokenSecretName(uid)
// that the host pod mounts: before the host pod is created, and again at 80 %
// of the token's lifetime (the kubelet refreshes mounted secrets). A token
// secret goes once neither the virtual pod nor a host pod of that UID is
// there. Tokens are never logged.
//
// Keys "<tenant>/<vcluster>/tokens/<virtual namespace>/<virtual pod UID>"
// (TokenKey) collect; the token secrets are read from ObjectCopier's host
// secret informer (they carry septa.dev/synced=true, and kind "Pod").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "services/kube/client.h"
#include "services/kube/watch.h"
#include "services/reconcile/controller.h"
#include "services/syncer/virtual_cluster_watches.h"

namespace septa::syncer {

class TokenSecrets {
 public:
  // `host_secrets`: the informer on the host's synced secrets, started.
  TokenSecrets(kube::Client& host, HostInformerRef host_secrets, const Clock& clock);

  // The token secret of `virtual_pod` exists and is not due: minted and
  // written when it is missing, records another pod or is due. When to look
  // again; nullopt when the pod mounts no token.
  Result<std::optional<TimePoint>> Ensure(WatchedCluster& cluster, const nlohmann::json& virtual_pod);

  // The token secret of the virtual pod `uid` in `ns`, deleted when neither
  // that virtual pod nor a host pod written for it is there (confirmed by
  // live reads). `host_pods`: the host informer on synced pods.
  reconcile::Outcome Reconcile(WatchedCluster& cluster, const std::string& ns, const std::string& uid,
                               const kube::Informer& host_pods);

  // The TokenKeys of the token secrets in `host_namespace` of this virtual cluster.
  std::vector<TokenKey> TokenKeys(const std::string& host_namespace, const VirtualClusterRef& cluster) const;

 private:
  kube::Client& host_;
  const HostInformerRef host_secrets_;
  const Clock& clock_;
};

}  // namespace septa::syncer
