// Gangs: pods a tenant wants scheduled together or not at all (a
// distributed training job's workers). On a shared host KAI-Scheduler
// groups pods by their first owner reference (GPU-FACTS.md), and a virtual
// cluster's host pods have no meaningful owner, so Septa makes the groups
// itself (SYNCER-FACTS.md "What changes in a pod on the way down").
//
// A tenant names a pod's gang with two annotations on the virtual pod:
// `septa.dev/gang: <name>` and `septa.dev/gang-size: "<N>"`, the number of
// members that must be placeable at once. On the host the gang is
// HostObjectName(name, namespace, vcluster) and:
// - KAI: a PodGroup (scheduling.run.ai/v2alpha2) of that name in the host
//   namespace, minMember N and the virtual cluster's leaf queue, which the
//   syncer creates before the first member; each member gets the
//   annotations `pod-group-name` and `kai.scheduler/skip-podgrouper: "true"`;
// - Kueue: the label `kueue.x-k8s.io/pod-group-name` and the annotation
//   `kueue.x-k8s.io/pod-group-total-count: "N"` (Kueue's plain-pod groups).
// With no batch scheduler (default, or the syncer binding nodes itself) a
// gang cannot be honoured, so its pods are refused, never run one by one.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <variant>

#include "tenancy/sync/pod_translation.h"

namespace septa::tenancy::sync {

inline constexpr std::string_view kGangAnnotation = "septa.dev/gang";
inline constexpr std::string_view kGangSizeAnnotation = "septa.dev/gang-size";
// A gang larger than this is a typo, not a job.
inline constexpr int kMaxGangSize = 10'000;

struct Gang {
  std::string name;  // as the tenant named it
  int size = 0;
  bool operator==(const Gang&) const = default;
};

// The gang `virtual_pod` asks for: none (std::monostate), one, or why not.
std::variant<std::monostate, Gang, Refusal> GangOf(const SyncSettings& settings, const nlohmann::json& virtual_pod);

// The host name of gang `name` of namespace `ns` of `vcluster`.
std::string HostGangName(std::string_view name, std::string_view ns, std::string_view vcluster);

// Marks `host_pod` (of virtual namespace `ns`) as a member of `gang` for the
// configured scheduler.
void PatchGang(nlohmann::json& host_pod, const SyncSettings& settings, const VirtualClusterView& vcluster,
               const std::string& ns, const Gang& gang);

// The gang a host pod belongs to: its KAI pod-group-name annotation; "" for none.
std::string HostGangOf(const nlohmann::json& host_pod);

// KAI's PodGroup for `gang` of namespace `ns`, with the bookkeeping labels
// of every synced object (septa.dev/synced, tenant, vcluster, namespace).
nlohmann::json HostPodGroup(const VirtualClusterView& vcluster, const std::string& ns, const Gang& gang);

// HostGangName is not injective: gang "g-x-r" of namespace "s" and "g" of
// "r-x-s" share "g-x-r-x-s-x-<vcluster>". The virtual namespace of the gang
// whose member `host_pod` is, when it is in host gang `group` (KAI's
// annotation or Kueue's label) and that namespace is not `ns`; "" otherwise.
// A PodGroup records its gang's namespace in kVirtualNamespaceLabel.
std::string OtherGangNamespace(const nlohmann::json& host_pod, std::string_view group, std::string_view ns);
// Why a member of `gang` of `ns` does not run: its host gang name `group` is
// a gang's of namespace `other_ns` (the two would be scheduled as one).
Refusal GangNameTaken(std::string_view ns, const Gang& gang, std::string_view group, std::string_view other_ns);

// Whether the PodGroup read from the host asks what `want` asks (minMember, queue).
bool PodGroupUpToDate(const nlohmann::json& want, const nlohmann::json& host_group);

}  // namespace septa::tenancy::sync
