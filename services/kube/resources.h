// The Kubernetes and scheduler resources Septa reads and writes on host
// clusters, declared once so every caller names the same group, version and
// scope.
#pragma once

#include "services/kube/client.h"

namespace septa::kube {

inline const Resource kNamespaces{"", "v1", "namespaces", false};
inline const Resource kNodes{"", "v1", "nodes", false};
inline const Resource kPods{"", "v1", "pods", true};
inline const Resource kConfigMaps{"", "v1", "configmaps", true};
inline const Resource kSecrets{"", "v1", "secrets", true};
inline const Resource kEvents{"", "v1", "events", true};
inline const Resource kServiceAccounts{"", "v1", "serviceaccounts", true};
inline const Resource kServices{"", "v1", "services", true};
inline const Resource kEndpoints{"", "v1", "endpoints", true};
inline const Resource kPersistentVolumeClaims{"", "v1", "persistentvolumeclaims", true};
inline const Resource kResourceQuotas{"", "v1", "resourcequotas", true};
inline const Resource kLimitRanges{"", "v1", "limitranges", true};
inline const Resource kDeployments{"apps", "v1", "deployments", true};
inline const Resource kReplicaSets{"apps", "v1", "replicasets", true};
inline const Resource kStatefulSets{"apps", "v1", "statefulsets", true};
inline const Resource kJobs{"batch", "v1", "jobs", true};
// Create only: the API server answers whether a bearer token is good.
inline const Resource kTokenReviews{"authentication.k8s.io", "v1", "tokenreviews", false};

// KAI scheduler (GPU-FACTS.md): its queue tree is cluster-scoped.
inline const Resource kKaiQueues{"scheduling.run.ai", "v2", "queues", false};
// Its gangs, one per group of pods scheduled together.
inline const Resource kKaiPodGroups{"scheduling.run.ai", "v2alpha2", "podgroups", true};

// Kueue: flavors and cluster queues are cluster-scoped, local queues live in a namespace.
inline const Resource kResourceFlavors{"kueue.x-k8s.io", "v1beta2", "resourceflavors", false};
inline const Resource kClusterQueues{"kueue.x-k8s.io", "v1beta2", "clusterqueues", false};
inline const Resource kLocalQueues{"kueue.x-k8s.io", "v1beta2", "localqueues", true};

}  // namespace septa::kube
