// kubesim's dcgm-exporter: the text one scrape answers, rendered from what
// the simulated GPUs did (docs/kubesim.md, "dcgm-exporter"). A test double
// of NVIDIA's exporter as ../shared/docs/USAGE-FACTS.md §1 describes it:
// the label template of §1.3 in its order, the names, label spellings and
// units of the exporter's versions (§1.2), and the pod labels of its two
// pod-mapping modes (§1.4). No state, no clock: DcgmExporters (dcgm_exporter.h)
// measures, this renders.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace septa::kubesim {

// The exporter releases whose output differs in what Septa reads (§1.2):
//  - k4_8_2: 4.8.2 and before, the node in a `Hostname` label;
//  - k4_8_3: 4.8.3 (4.6.0-4.8.3), `hostname` (#655);
//  - k4_9: 4.9.0 (DCGM 4.7): the renamed fields and their units, the driver
//    label DCGM_FI_SYSTEM_DRIVER_VERSION, DCGM_FI_DEV_FB_CAPACITY_BYTES on.
enum class DcgmExporterVersion { k4_8_2, k4_8_3, k4_9 };
std::string_view DcgmExporterVersionName(DcgmExporterVersion version);  // "4.8.2", "4.8.3", "4.9"
// "4.8.2" (or any older 4.x, "4.5.3-4.8.2"), "4.8.3", "4.9", "4.9.0".
Result<DcgmExporterVersion> ParseDcgmExporterVersion(std::string_view text);

// How the exporter labels series with pods (`--kubernetes`, §1.4):
//  - kOff: no pod labels;
//  - kLastPodWins: the default: a device's series carry the pod the
//    kubelet's pod-resources list names last for it; the others get none;
//  - kVirtualGpus: `--kubernetes-virtual-gpus`: one copy of each series per
//    pod on the device, with a `vgpu` label.
enum class DcgmPodMapping { kOff, kLastPodWins, kVirtualGpus };
std::string_view DcgmPodMappingName(DcgmPodMapping mapping);  // "off", "last-pod-wins", "virtual-gpus"
Result<DcgmPodMapping> ParseDcgmPodMapping(std::string_view text);

struct DcgmExporterProfile {
  DcgmExporterVersion version = DcgmExporterVersion::k4_8_3;
  DcgmPodMapping mapping = DcgmPodMapping::kLastPodWins;
  // In the virtual-GPUs mode: GPU_UTIL and FB_USED per pod (the exporter's
  // PR #594), each pod's own value on its copy, beside the device's series;
  // false: every copy carries the device's value (#582).
  bool per_process_values = true;
  // `--use-old-namespace`: `uuid`, `pod_name`, `pod_namespace`, `container_name`.
  bool old_namespace = false;
  std::string driver_version = "580.159.04";  // the driver label's value (§5's H100)
};

// One pod on a device, in the order of the kubelet's pod-resources list.
struct DcgmPodOnDevice {
  std::string namespace_name{};
  std::string pod{};
  std::string container{};
  std::string vgpu{};       // its replica on a shared GPU, "0" when alone
  double busy_percent = 0;  // its own share of time busy, 0..100
  double memory_mib = 0;    // what it holds on the device
};

// A whole GPU, or one GPU instance of a MIG GPU (then the series of the
// parent's device fields, power and energy, carry the parent's values).
struct DcgmDevice {
  int gpu = 0;         // NVML index
  std::string uuid{};  // the physical GPU's, MIG instances too
  std::string pci_bus_id{};
  std::string model_name{};    // as the driver names it: "NVIDIA H100 80GB HBM3"
  std::optional<int> gi_id{};  // set for a MIG instance
  std::string mig_profile{};   // "3g.40gb" on a MIG instance
  double busy_percent = 0;     // the device's share of time busy, 0..100
  double total_mib = 0;        // its memory (a MIG instance: the profile's)
  double used_mib = 0;
  double reserved_mib = 0;
  double power_watts = 0;
  double energy_millijoules = 0;  // since the driver loaded
  std::vector<DcgmPodOnDevice> pods{};
};

// The exposition (text format 0.0.4) of one node's exporter: each metric's
// HELP and TYPE, then its series, one per device (with pod mapping: as the
// mode says), labels in the template order of §1.3: gpu, UUID, pci_bus_id,
// device, modelName, [GPU_I_PROFILE, GPU_I_ID], Hostname|hostname, the
// driver label, then container, namespace, pod, vgpu (sorted, as Go's
// templates range maps). Metrics: power, energy, GPU_UTIL (whole GPUs only:
// not reported per MIG instance, §1.5), FB_FREE, FB_USED, FB_RESERVED and
// GR_ENGINE_ACTIVE, under the version's names and units (dcgm_text.cc);
// 4.9's names of the FB_* fields and of the energy counter are not known
// (§1.2), so its profile leaves them out and adds FB_CAPACITY_BYTES.
std::string RenderDcgmText(std::string_view node, const std::vector<DcgmDevice>& devices,
                           const DcgmExporterProfile& profile);

}  // namespace septa::kubesim
