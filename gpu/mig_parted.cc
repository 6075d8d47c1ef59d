#include "gpu/mig_parted.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>

#include "common/documents.h"
#include "gpu/yaml_field_error.h"

namespace septa::gpu {
namespace {

std::vector<std::string> ParseFilter(const YAML::Node& node, const std::string& path) {
  if (node.IsScalar()) return {node.as<std::string>()};
  if (!node.IsSequence()) throw YamlFieldError{path, "must be a device id or a list of them"};
  return node.as<std::vector<std::string>>();
}

MigDeviceGroup ParseGroup(const YAML::Node& node, const std::string& path) {
  if (!node.IsMap()) throw YamlFieldError{path, "must be a map"};
  MigDeviceGroup group;
  if (const YAML::Node filter = node["device-filter"])
    group.device_filter = ParseFilter(filter, path + ".device-filter");
  const YAML::Node devices = node["devices"];
  if (!devices) throw YamlFieldError{path + ".devices", "is required"};
  if (devices.IsScalar() && devices.as<std::string>() == "all") {
    group.all_devices = true;
  } else if (devices.IsSequence()) {
    group.all_devices = false;
    try {
      group.devices = devices.as<std::vector<int>>();
    } catch (const YAML::Exception&) {
      throw YamlFieldError{path + ".devices", "must be `all` or a list of GPU indices"};
    }
  } else {
    throw YamlFieldError{path + ".devices", "must be `all` or a list of GPU indices"};
  }
  const YAML::Node enabled = node["mig-enabled"];
  if (!enabled) throw YamlFieldError{path + ".mig-enabled", "is required"};
  try {
    group.mig_enabled = enabled.as<bool>();
  } catch (const YAML::Exception&) {
    throw YamlFieldError{path + ".mig-enabled", "must be true or false"};
  }
  if (const YAML::Node mig_devices = node["mig-devices"]) {
    if (!mig_devices.IsMap()) throw YamlFieldError{path + ".mig-devices", "must map profile names to counts"};
    for (const auto& entry : mig_devices) {
      const std::string profile = entry.first.as<std::string>();
      int count = 0;
      try {
        count = entry.second.as<int>();
      } catch (const YAML::Exception&) {
        throw YamlFieldError{path + ".mig-devices." + profile, "must be a count"};
      }
      if (count < 0) throw YamlFieldError{path + ".mig-devices." + profile, "must not be negative"};
      group.mig_devices.emplace_back(profile, count);
    }
    if (!group.mig_enabled && !group.mig_devices.empty()) {
      throw YamlFieldError{path + ".mig-devices", "given although mig-enabled is false"};
    }
  }
  return group;
}

bool SameDeviceId(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

MigDeviceGroup AllDevices(std::vector<std::string> filter, bool mig_enabled,
                          std::vector<std::pair<std::string, int>> mig_devices) {
  MigDeviceGroup group;
  group.device_filter = std::move(filter);
  group.all_devices = true;
  group.mig_enabled = mig_enabled;
  group.mig_devices = std::move(mig_devices);
  return group;
}

std::string ProfileSuffix(const std::string& profile) {
  // mig-parted's stock names write "+me" as ".me" (all-1g.10gb.me).
  std::string out = profile;
  if (const std::size_t plus = out.find('+'); plus != std::string::npos) out[plus] = '.';
  return out;
}

}  // namespace

Result<MigPartedConfig> ParseMigParted(std::string_view yaml_text, std::string_view source) {
  MigPartedConfig out;
  auto document = ParseYaml(yaml_text);
  if (!document.ok()) return InvalidArgument(std::string(source) + ": " + document.status().message());
  try {
    const YAML::Node& root = *document;
    if (!root.IsMap()) return InvalidArgument(std::string(source) + ": not a mig-parted config");
    const YAML::Node version = root["version"];
    if (!version || version.as<std::string>() != "v1") {
      return InvalidField("version", std::string(source) + ": must be v1");
    }
    const YAML::Node configs = root["mig-configs"];
    if (!configs || !configs.IsMap()) {
      return InvalidField("mig-configs", std::string(source) + ": a map of named configs is required");
    }
    for (const auto& entry : configs) {
      const std::string name = entry.first.as<std::string>();
      const std::string path = "mig-configs." + name;
      if (!entry.second.IsSequence()) throw YamlFieldError{path, "must be a list of device groups"};
      std::vector<MigDeviceGroup>& groups = out.configs[name];
      for (std::size_t i = 0; i < entry.second.size(); ++i) {
        groups.push_back(ParseGroup(entry.second[i], path + "[" + std::to_string(i) + "]"));
      }
    }
  } catch (const YamlFieldError& e) {
    return InvalidField(e.field, std::string(source) + ": " + e.message);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(std::string(source) + ": " + e.what());
  }
  return out;
}

std::string RenderMigParted(const MigPartedConfig& config) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "version" << YAML::Value << "v1";
  out << YAML::Key << "mig-configs" << YAML::Value << YAML::BeginMap;
  for (const auto& [name, groups] : config.configs) {
    out << YAML::Key << name << YAML::Value << YAML::BeginSeq;
    for (const MigDeviceGroup& g : groups) {
      out << YAML::BeginMap;
      if (!g.device_filter.empty()) {
        out << YAML::Key << "device-filter" << YAML::Value << YAML::Flow << g.device_filter;
      }
      out << YAML::Key << "devices" << YAML::Value;
      if (g.all_devices) {
        out << "all";
      } else {
        out << YAML::Flow << g.devices;
      }
      out << YAML::Key << "mig-enabled" << YAML::Value << g.mig_enabled;
      if (g.mig_enabled) {
        out << YAML::Key << "mig-devices" << YAML::Value << YAML::BeginMap;
        for (const auto& [profile, count] : g.mig_devices) {
          out << YAML::Key << YAML::DoubleQuoted << profile << YAML::Value << count;
        }
        out << YAML::EndMap;
      }
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

MigPartedConfig StockMigPartedConfigs(const Catalog& catalog) {
  MigPartedConfig out;
  out.configs["all-disabled"] = {AllDevices({}, false, {})};
  out.configs["all-enabled"] = {AllDevices({}, true, {})};
  for (const GpuModel& model : catalog.models()) {
    if (!model.mig_capable) continue;
    if (!model.balanced_layout.empty()) {
      MigDeviceGroup balanced = AllDevices(model.pci_device_ids, true, {});
      for (const std::string& profile : model.balanced_layout) AddMigDevice(balanced, profile);
      out.configs["all-balanced"].push_back(std::move(balanced));
    }
    for (const MigProfile& profile : model.mig_profiles) {
      // Fill the GPU: as many as fit by memory slices and by the profile's own cap.
      const int fit = std::min(profile.max_count, static_cast<int>(profile.starts.size()));
      out.configs["all-" + ProfileSuffix(profile.name)].push_back(
          AllDevices(model.pci_device_ids, true, {{profile.name, fit}}));
    }
  }
  return out;
}

const MigDeviceGroup* GroupFor(const MigPartedConfig& config, std::string_view config_name, const GpuModel& model,
                               int index) {
  auto it = config.configs.find(std::string(config_name));
  if (it == config.configs.end()) return nullptr;
  const MigDeviceGroup* found = nullptr;
  for (const MigDeviceGroup& g : it->second) {
    const bool filter_ok = g.device_filter.empty() ||
                           std::any_of(g.device_filter.begin(), g.device_filter.end(), [&](const std::string& id) {
                             return std::any_of(model.pci_device_ids.begin(), model.pci_device_ids.end(),
                                                [&](const std::string& own) { return SameDeviceId(id, own); });
                           });
    const bool device_ok = g.all_devices || std::find(g.devices.begin(), g.devices.end(), index) != g.devices.end();
    if (filter_ok && device_ok) found = &g;
  }
  return found;
}

Result<GpuMigSetup> MigSetupFor(const MigPartedConfig& config, std::string_view config_name, const GpuModel& model,
                                int index) {
  if (config.configs.count(std::string(config_name)) == 0) {
    return NotFound("no mig-parted config \"" + std::string(config_name) + "\"");
  }
  const MigDeviceGroup* group = GroupFor(config, config_name, model, index);
  if (group == nullptr || !group->mig_enabled) return GpuMigSetup{};
  std::vector<int> counts(model.mig_profiles.size(), 0);
  for (const auto& [profile, count] : group->mig_devices) {
    const int p = model.ProfileIndex(profile);
    if (p < 0) {
      return InvalidArgument("mig-parted config \"" + std::string(config_name) + "\": " + model.name +
                             " has no MIG profile \"" + profile + "\"");
    }
    counts[p] += count;
  }
  auto layout = PlaceCounts(model, counts);
  if (!layout.ok()) {
    return InvalidArgument("mig-parted config \"" + std::string(config_name) + "\", GPU " + std::to_string(index) +
                           ": " + layout.status().message());
  }
  return GpuMigSetup{true, std::move(*layout)};
}

void AddMigDevice(MigDeviceGroup& group, const std::string& profile) {
  auto it = std::find_if(group.mig_devices.begin(), group.mig_devices.end(),
                         [&](const auto& e) { return e.first == profile; });
  if (it == group.mig_devices.end()) {
    group.mig_devices.emplace_back(profile, 1);
  } else {
    ++it->second;
  }
}

void AddGpuLayout(std::vector<MigDeviceGroup>& groups, const GpuModel& model, int index, const MigLayout& layout) {
  MigDeviceGroup group;
  group.device_filter = model.pci_device_ids;
  group.all_devices = false;
  group.devices = {index};
  group.mig_enabled = true;
  for (const MigInstance& inst : layout) AddMigDevice(group, model.mig_profiles[inst.profile].name);
  auto same = std::find_if(groups.begin(), groups.end(), [&](const MigDeviceGroup& o) {
    return !o.all_devices && o.device_filter == group.device_filter && o.mig_devices == group.mig_devices;
  });
  if (same != groups.end()) {
    same->devices.push_back(index);
  } else {
    groups.push_back(std::move(group));
  }
}

}  // namespace septa::gpu
