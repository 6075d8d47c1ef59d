// What one Kubernetes Node object says about the node and its GPUs, as the
// inventory controller stores it: a pure function of the object (as the
// informer hands it), the GPU catalog and the mig-parted layouts.
//
// Sources, most direct first:
//  - per-GPU identity: kubesim's annotation kube::kGpuIdentityAnnotation (UUID,
//    MIG mode, instances with their GPU-instance ids) when present: it
//    describes the devices as they are;
//  - otherwise GPU feature discovery labels: nvidia.com/gpu.product (matched
//    in the catalog), nvidia.com/gpu.count, nvidia.com/mig.capable, and the
//    layout named by nvidia.com/mig.config placed through the mig-parted
//    configs, with stable synthetic UUIDs (gpu::SyntheticGpuUuid) and no
//    GPU-instance ids (labels do not tell them);
//  - allocatable nvidia.com/gpu and nvidia.com/mig-<profile> (what the device
//    plugin advertises) to check the labels' claim.
//
// What is true when they disagree: labels name the layout wanted, and only
// `nvidia.com/mig.config.state=success` says the GPUs have it. While the state
// is pending, rebooting or failed, or when allocatable disagrees with the
// layout the labels name, the GPUs' current layout cannot be told from the
// object: the observation says so (layout_settled false, with an issue), and
// the controller keeps the layouts it stored last and places nothing new on
// the node's GPUs until it settles. The identity annotation, when present,
// always wins (it is what the devices have); a disagreeing allocatable is
// then only reported as an issue.
//
// Health: the Ready condition alone (True -> kReady; False, Unknown or absent
// -> kNotReady), a statement about the kubelet. A cordoned node
// (spec.unschedulable) stays Ready and carries the taint
// node.kubernetes.io/unschedulable:NoSchedule, which Kubernetes itself adds to
// cordoned nodes, so placement sees cordons as the scheduler does.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "gpu/catalog.h"
#include "gpu/inventory.h"
#include "gpu/mig_parted.h"

namespace septa::reconcile {

// Something the controller should tell (log, node condition) although the
// node was observed: the GPUs could not be (fully) known.
struct ObservationIssue {
  std::string reason;  // CamelCase, for a condition: "UnknownGpuProduct", "MigReconfiguring", ...
  std::string message;
  bool operator==(const ObservationIssue&) const = default;
};

struct NodeObservation {
  gpu::InventoryNode node;
  // False when the GPUs' current MIG layout cannot be told (see above): each
  // GPU's mig_enabled / mig_layout are then not observed (left off and empty).
  bool layout_settled = true;
  std::vector<ObservationIssue> issues;
};

// An InvalidArgument naming the field (`status.allocatable.cpu`,
// `metadata.labels["nvidia.com/gpu.count"]`, ...) when the object is
// malformed. A node whose GPU product the catalog does not know is observed
// without GPUs, with the issue "UnknownGpuProduct". Missing cpu or memory
// (a node not yet reporting) read as 0.
Result<NodeObservation> ObserveNode(const nlohmann::json& node, const gpu::Catalog& catalog,
                                    const gpu::MigPartedConfig& mig_configs);

}  // namespace septa::reconcile
