// GPU models as data: memory, SMs, MIG capability and, per MIG profile, the
// geometry NVIDIA documents (GPU-FACTS.md). The built-in default lives as YAML
// text in catalog_default.cc; an admin YAML file (same schema) can extend it or
// override models by canonical name. Values not confirmed by an NVIDIA capture
// are listed in `unconfirmed` so they stay visibly provisional.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace septa::gpu {

struct MigProfile {
  std::string name;        // "3g.40gb", "1g.10gb+me"
  int profile_id = -1;     // nvidia-smi GPU instance profile ID; -1 when unknown
  int compute_slices = 0;  // the "Ng" of the name
  int memory_slices = 0;   // contiguous memory slices occupied (3g takes 4, 7g takes 8)
  int memory_mib = 0;
  int sms = 0;                           // multiprocessors
  int max_count = 0;                     // most instances of this profile on one GPU
  bool media_extensions = false;         // "+me": at most one such instance per GPU
  std::vector<int> starts;               // allowed first memory slice
  std::vector<std::string> unconfirmed;  // field names not confirmed by a capture

  bool AllowsStart(int start) const;
};

struct GpuModel {
  std::string name;                           // canonical: "H100-80GB", "T4"
  std::string family;                         // "ampere", "hopper", ...
  std::vector<std::string> product_patterns;  // GFD nvidia.com/gpu.product, '*' wildcards
  std::vector<std::string> pci_device_ids;    // mig-parted device-filter ids, "0x233010DE"
  int memory_mib = 0;
  int sms = 0;
  bool mig_capable = false;
  int memory_slices = 0;   // 8 (A30: 4); 0 when not MIG-capable
  int compute_slices = 0;  // 7 (A30: 4)
  std::vector<MigProfile> mig_profiles;
  std::vector<std::string> balanced_layout;  // stock all-balanced profile names, repeated per instance
  std::vector<std::string> unconfirmed;

  // nullptr when the model has no such profile.
  const MigProfile* FindProfile(std::string_view profile_name) const;
  int ProfileIndex(std::string_view profile_name) const;  // -1 when absent
};

class Catalog {
 public:
  // The built-in models of GPU-FACTS.md plus the openb trace's models.
  static const Catalog& Default();

  // Parses a catalog document; errors name `source` and the offending field.
  static Result<Catalog> FromYaml(std::string_view yaml_text, std::string_view source);

  // Adds the models of another document; a model with an existing canonical
  // name replaces the old entry entirely.
  Status Merge(std::string_view yaml_text, std::string_view source);

  const GpuModel* Find(std::string_view canonical_name) const;
  // Matches a GFD product label ("NVIDIA-H100-80GB-HBM3"); a "-MIG-<profile>"
  // suffix (single strategy) and a "-SHARED" suffix (time-slicing rename) are ignored.
  const GpuModel* FindByProduct(std::string_view product_label) const;
  const std::vector<GpuModel>& models() const { return models_; }

 private:
  std::vector<GpuModel> models_;
};

// Glob match with '*' only, case-insensitive (GFD labels vary in case: "PCIe"/"PCIE").
bool ProductPatternMatches(std::string_view pattern, std::string_view label);

}  // namespace septa::gpu
