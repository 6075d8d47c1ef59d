#include "gpu/catalog.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cmath>

#include "common/documents.h"
#include "gpu/catalog_default.h"
#include "gpu/yaml_field_error.h"

namespace septa::gpu {
namespace {

template <typename T>
T Required(const YAML::Node& node, const char* key, const std::string& path) {
  const YAML::Node value = node[key];
  if (!value) throw YamlFieldError{path + "." + key, "is required"};
  try {
    return value.as<T>();
  } catch (const YAML::Exception&) {
    throw YamlFieldError{path + "." + key, "has the wrong type"};
  }
}

template <typename T>
T Optional(const YAML::Node& node, const char* key, const std::string& path, T fallback) {
  if (!node[key]) return fallback;
  return Required<T>(node, key, path);
}

MigProfile ParseProfile(const YAML::Node& node, const std::string& path, int gpu_slices) {
  MigProfile p;
  p.name = Required<std::string>(node, "name", path);
  p.profile_id = Optional<int>(node, "id", path, -1);
  p.compute_slices = Required<int>(node, "compute", path);
  p.memory_slices = Required<int>(node, "slices", path);
  p.memory_mib = static_cast<int>(std::lround(Required<double>(node, "memory_gib", path) * 1024));
  p.sms = Optional<int>(node, "sms", path, 0);
  p.max_count = Required<int>(node, "max", path);
  p.media_extensions = Optional<bool>(node, "me", path, false);
  p.starts = Required<std::vector<int>>(node, "starts", path);
  p.unconfirmed = Optional<std::vector<std::string>>(node, "unconfirmed", path, {});
  if (p.memory_slices <= 0 || p.memory_slices > gpu_slices) {
    throw YamlFieldError{path + ".slices", "must be in 1.." + std::to_string(gpu_slices)};
  }
  if (p.starts.empty()) throw YamlFieldError{path + ".starts", "must not be empty"};
  for (int start : p.starts) {
    if (start < 0 || start + p.memory_slices > gpu_slices) {
      throw YamlFieldError{path + ".starts", "start " + std::to_string(start) + " runs past the GPU's " +
                                                 std::to_string(gpu_slices) + " memory slices"};
    }
  }
  if (p.max_count <= 0) throw YamlFieldError{path + ".max", "must be positive"};
  return p;
}

GpuModel ParseModel(const YAML::Node& node, const std::string& path) {
  GpuModel m;
  m.name = Required<std::string>(node, "name", path);
  const std::string here = path + "[" + m.name + "]";
  m.family = Optional<std::string>(node, "family", here, "");
  m.product_patterns = Optional<std::vector<std::string>>(node, "products", here, {});
  m.pci_device_ids = Optional<std::vector<std::string>>(node, "pci_device_ids", here, {});
  m.memory_mib = Required<int>(node, "memory_mib", here);
  m.sms = Optional<int>(node, "sms", here, 0);
  m.balanced_layout = Optional<std::vector<std::string>>(node, "balanced", here, {});
  m.unconfirmed = Optional<std::vector<std::string>>(node, "unconfirmed", here, {});
  if (const YAML::Node mig = node["mig"]) {
    m.mig_capable = true;
    m.memory_slices = Required<int>(mig, "memory_slices", here + ".mig");
    m.compute_slices = Required<int>(mig, "compute_slices", here + ".mig");
    if (m.memory_slices <= 0 || m.memory_slices > 8) {
      throw YamlFieldError{here + ".mig.memory_slices", "must be in 1..8"};
    }
    const YAML::Node profiles = node["profiles"];
    if (!profiles || !profiles.IsSequence()) throw YamlFieldError{here + ".profiles", "is required for a MIG model"};
    for (std::size_t i = 0; i < profiles.size(); ++i) {
      m.mig_profiles.push_back(
          ParseProfile(profiles[i], here + ".profiles[" + std::to_string(i) + "]", m.memory_slices));
    }
    for (const std::string& name : m.balanced_layout) {
      if (!m.FindProfile(name)) throw YamlFieldError{here + ".balanced", "unknown profile " + name};
    }
  }
  return m;
}

bool EqualsIgnoreCase(char a, char b) {
  return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
}

}  // namespace

bool MigProfile::AllowsStart(int start) const { return std::find(starts.begin(), starts.end(), start) != starts.end(); }

const MigProfile* GpuModel::FindProfile(std::string_view profile_name) const {
  const int i = ProfileIndex(profile_name);
  return i < 0 ? nullptr : &mig_profiles[i];
}

int GpuModel::ProfileIndex(std::string_view profile_name) const {
  for (std::size_t i = 0; i < mig_profiles.size(); ++i) {
    if (mig_profiles[i].name == profile_name) return static_cast<int>(i);
  }
  return -1;
}

bool ProductPatternMatches(std::string_view pattern, std::string_view label) {
  // Iterative glob with backtracking to the last '*'.
  std::size_t p = 0, l = 0, star = std::string_view::npos, mark = 0;
  while (l < label.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = l;
    } else if (p < pattern.size() && EqualsIgnoreCase(pattern[p], label[l])) {
      ++p;
      ++l;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      l = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

Result<Catalog> Catalog::FromYaml(std::string_view yaml_text, std::string_view source) {
  Catalog catalog;
  SEPTA_RETURN_IF_ERROR(catalog.Merge(yaml_text, source));
  return catalog;
}

Status Catalog::Merge(std::string_view yaml_text, std::string_view source) {
  std::vector<GpuModel> parsed;
  auto document = ParseYaml(yaml_text);
  if (!document.ok()) return InvalidArgument(std::string(source) + ": " + document.status().message());
  try {
    const YAML::Node& root = *document;
    const YAML::Node models = root["models"];
    if (!models || !models.IsSequence()) {
      return InvalidField("models", std::string(source) + ": a sequence of GPU models is required");
    }
    for (std::size_t i = 0; i < models.size(); ++i) {
      parsed.push_back(ParseModel(models[i], "models[" + std::to_string(i) + "]"));
    }
  } catch (const YamlFieldError& e) {
    return InvalidField(e.field, std::string(source) + ": " + e.message);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(std::string(source) + ": " + e.what());
  }
  for (GpuModel& model : parsed) {
    auto same = std::find_if(models_.begin(), models_.end(), [&](const GpuModel& m) { return m.name == model.name; });
    if (same != models_.end()) {
      *same = std::move(model);
    } else {
      models_.push_back(std::move(model));
    }
  }
  return Status::Ok();
}

const Catalog& Catalog::Default() {
  static const Catalog catalog = [] {
    Result<Catalog> parsed = FromYaml(kDefaultCatalogYaml, "built-in catalog");
    assert(parsed.ok());
    return std::move(parsed).value();
  }();
  return catalog;
}

const GpuModel* Catalog::Find(std::string_view canonical_name) const {
  for (const GpuModel& m : models_) {
    if (m.name == canonical_name) return &m;
  }
  return nullptr;
}

const GpuModel* Catalog::FindByProduct(std::string_view product_label) const {
  std::string_view label = product_label;
  if (const std::size_t mig = label.find("-MIG-"); mig != std::string_view::npos) label = label.substr(0, mig);
  if (label.ends_with("-SHARED")) label.remove_suffix(7);
  for (const GpuModel& m : models_) {
    for (const std::string& pattern : m.product_patterns) {
      if (ProductPatternMatches(pattern, label)) return &m;
    }
  }
  return nullptr;
}

}  // namespace septa::gpu
