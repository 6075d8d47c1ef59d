// NVIDIA mig-parted configuration files (`version: v1`, `mig-configs`): parse
// them into named layouts, render them back, and build the stock layouts
// (`all-disabled`, `all-enabled`, `all-balanced`, `all-<profile>`) from the catalog.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "gpu/catalog.h"
#include "gpu/mig_geometry.h"

namespace septa::gpu {

// One entry of a named config: which devices it applies to and their MIG setup.
struct MigDeviceGroup {
  std::vector<std::string> device_filter;  // PCI device ids ("0x233010DE"); empty = any device
  bool all_devices = true;                 // `devices: all`
  std::vector<int> devices;                // GPU indices when not all
  bool mig_enabled = false;
  // Profile name -> instance count, in document order.
  std::vector<std::pair<std::string, int>> mig_devices;

  bool operator==(const MigDeviceGroup&) const = default;
};

struct MigPartedConfig {
  std::map<std::string, std::vector<MigDeviceGroup>> configs;  // by config name

  bool operator==(const MigPartedConfig&) const = default;
};

// Errors name `source` and the config / entry / field at fault.
Result<MigPartedConfig> ParseMigParted(std::string_view yaml_text, std::string_view source);

// The canonical YAML text of a config (parses back to an equal value).
std::string RenderMigParted(const MigPartedConfig& config);

// all-disabled; all-enabled (MIG on, no instances); all-balanced with one entry
// per MIG family; all-<profile> filling each GPU with the profile
// (e.g. all-1g.10gb, all-3g.40gb), one entry per model that has it.
MigPartedConfig StockMigPartedConfigs(const Catalog& catalog);

// One more instance of `profile` in the group's `mig-devices`.
void AddMigDevice(MigDeviceGroup& group, const std::string& profile);

// Adds GPU `index` of `model` with `layout` (instances in creation order) to a
// named config's groups, sharing the entry of GPUs of the same model and layout.
void AddGpuLayout(std::vector<MigDeviceGroup>& groups, const GpuModel& model, int index, const MigLayout& layout);

// The device groups of `config_name` that apply to GPU `index` of `model`
// (device filter and device list both match); the last matching group wins as in
// mig-parted. nullptr when none applies.
const MigDeviceGroup* GroupFor(const MigPartedConfig& config, std::string_view config_name, const GpuModel& model,
                               int index);

// What config `config_name` makes of GPU `index` of `model`: MIG on or off and,
// when on, its instances placed with PlaceCounts (creation order). A GPU that no
// group applies to keeps MIG off. NotFound when there is no such config;
// InvalidArgument when a profile is not the model's or the instances do not fit.
struct GpuMigSetup {
  bool mig_enabled = false;
  MigLayout layout;
};
Result<GpuMigSetup> MigSetupFor(const MigPartedConfig& config, std::string_view config_name, const GpuModel& model,
                                int index);

}  // namespace septa::gpu
