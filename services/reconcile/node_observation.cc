#include "services/reconcile/node_observation.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <map>
#include <optional>
#include <set>

#include "common/documents.h"
#include "common/quantity.h"
#include "gpu/gpu_uuid.h"
#include "gpu/mig_geometry.h"
#include "services/kube/gpu_labels.h"

namespace septa::reconcile {

namespace {

using nlohmann::json;

constexpr int kMaxGpusPerNode = 64;
constexpr const char* kUnschedulableTaint = "node.kubernetes.io/unschedulable";
constexpr const char* kSharingStrategyLabel = "nvidia.com/gpu.sharing-strategy";

// The member `key` of `object`, or nullptr when absent or `object` is not an object.
const json* Member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string Keyed(const std::string& path, const std::string& key) { return path + "[\"" + key + "\"]"; }

std::string LabelField(const char* label) { return Keyed("metadata.labels", label); }

const std::string* Label(const gpu::InventoryNode& node, const char* key) {
  auto it = node.labels.find(key);
  return it == node.labels.end() ? nullptr : &it->second;
}

// A quantity in thousandths; Kubernetes serializes quantities as strings.
Result<long long> Quantity(const json& value, const std::string& field) {
  if (!value.is_string()) return InvalidField(field, "must be a quantity string");
  auto parsed = ParseQuantityMilli(value.get_ref<const std::string&>());
  if (!parsed.ok()) return InvalidField(field, parsed.status().message());
  return *parsed;
}

Result<int> FitInt(long long value, const std::string& field) {
  if (value > INT_MAX) return InvalidField(field, "too large");
  return static_cast<int>(value);
}

Status ObserveLabels(const json& metadata, gpu::InventoryNode& node) {
  const json* labels = Member(metadata, "labels");
  if (labels == nullptr || labels->is_null()) return Status::Ok();
  if (!labels->is_object()) return InvalidField("metadata.labels", "must be a map of strings");
  for (const auto& [key, value] : labels->items()) {
    if (!value.is_string()) return InvalidField(Keyed("metadata.labels", key), "must be a string");
    node.labels.emplace(key, value.get<std::string>());
  }
  return Status::Ok();
}

Status ObserveTaints(const json& node_object, gpu::InventoryNode& node) {
  const json* spec = Member(node_object, "spec");
  const json* taints = spec == nullptr ? nullptr : Member(*spec, "taints");
  if (taints != nullptr && !taints->is_null()) {
    if (!taints->is_array()) return InvalidField("spec.taints", "must be a list");
    for (std::size_t i = 0; i < taints->size(); ++i) {
      const json& t = (*taints)[i];
      const std::string where = "spec.taints[" + std::to_string(i) + "]";
      if (!t.is_object()) return InvalidField(where, "must be a taint object");
      gpu::Taint taint;
      for (auto [field, target] : {std::pair{"key", &taint.key}, {"value", &taint.value}, {"effect", &taint.effect}}) {
        const json* v = Member(t, field);
        if (v == nullptr || v->is_null()) continue;
        if (!v->is_string()) return InvalidField(where + "." + field, "must be a string");
        *target = v->get<std::string>();
      }
      if (taint.key.empty()) return InvalidField(where + ".key", "required");
      node.taints.push_back(std::move(taint));
    }
  }
  const json* unschedulable = spec == nullptr ? nullptr : Member(*spec, "unschedulable");
  if (unschedulable != nullptr && !unschedulable->is_null() && !unschedulable->is_boolean())
    return InvalidField("spec.unschedulable", "must be a boolean");
  const bool cordoned = unschedulable != nullptr && unschedulable->is_boolean() && unschedulable->get<bool>();
  const bool tainted = std::any_of(node.taints.begin(), node.taints.end(), [](const gpu::Taint& t) {
    return t.key == kUnschedulableTaint && t.effect == "NoSchedule";
  });
  if (cordoned && !tainted) node.taints.push_back({kUnschedulableTaint, "", "NoSchedule"});
  return Status::Ok();
}

Status ObserveHealth(const json* status, gpu::InventoryNode& node) {
  node.health = gpu::NodeHealth::kNotReady;  // until the kubelet says Ready
  const json* conditions = status == nullptr ? nullptr : Member(*status, "conditions");
  if (conditions == nullptr || conditions->is_null()) return Status::Ok();
  if (!conditions->is_array()) return InvalidField("status.conditions", "must be a list");
  for (const json& c : *conditions) {
    const json* type = Member(c, "type");
    if (type == nullptr || *type != "Ready") continue;
    const json* value = Member(c, "status");
    if (value != nullptr && *value == "True") node.health = gpu::NodeHealth::kReady;
  }
  return Status::Ok();
}

// What the device plugin advertises: nvidia.com/gpu and nvidia.com/mig-* in
// allocatable, by resource name, zero counts left out.
using Resources = std::map<std::string, long long>;

Result<Resources> AdvertisedGpuResources(const json* allocatable) {
  Resources out;
  if (allocatable == nullptr) return out;
  for (const auto& [name, value] : allocatable->items()) {
    if (name != kube::kGpuResource && name.rfind(kube::kMigResourcePrefix, 0) != 0) continue;
    const std::string field = Keyed("status.allocatable", name);
    auto milli = Quantity(value, field);
    if (!milli.ok()) return milli.status();
    if (*milli % 1000 != 0) return InvalidField(field, "must be a whole number of devices");
    if (*milli > 0) out[name] = *milli / 1000;
  }
  return out;
}

Resources ExpectedResources(const gpu::GpuModel& model, const std::vector<gpu::InventoryGpu>& gpus) {
  Resources out;
  for (const gpu::InventoryGpu& g : gpus) {
    if (!g.mig_enabled) {
      ++out[kube::kGpuResource];
      continue;
    }
    for (const gpu::MigInstance& inst : g.mig_layout)
      ++out[kube::kMigResourcePrefix + model.mig_profiles[inst.profile].name];
  }
  return out;
}

std::string Describe(const Resources& resources) {
  if (resources.empty()) return "no GPU resources";
  std::string out;
  for (const auto& [name, count] : resources) {
    if (!out.empty()) out += ' ';
    out += name + "=" + std::to_string(count);
  }
  return out;
}

// Compares the devices the GPUs should advertise with allocatable. With
// time-slicing or MPS, nvidia.com/gpu counts replicas, not GPUs: not compared.
std::optional<ObservationIssue> CheckAllocatable(const gpu::GpuModel& model, const std::vector<gpu::InventoryGpu>& gpus,
                                                 Resources advertised, const gpu::InventoryNode& node,
                                                 const std::string& claim) {
  Resources expected = ExpectedResources(model, gpus);
  const std::string* sharing = Label(node, kSharingStrategyLabel);
  if (sharing != nullptr && *sharing != "none") {
    expected.erase(kube::kGpuResource);
    advertised.erase(kube::kGpuResource);
  }
  if (expected == advertised) return std::nullopt;
  return ObservationIssue{"AllocatableDisagrees", "allocatable advertises " + Describe(advertised) + ", but " + claim +
                                                      " gives " + Describe(expected)};
}

// A MIG device's "giId", when the annotation carries it, as the id of the
// instance starting at `start`. Usage attribution finds an instance by it, so
// two instances of one GPU never share one.
Status ObserveGpuInstanceId(const json& device, int start, const std::string& where, std::map<int, int>& gi_ids) {
  const json* id = Member(device, "giId");
  if (id == nullptr || id->is_null()) return Status::Ok();
  const std::string field = where + ".giId";
  if (!id->is_number_integer() || id->get<long long>() < 0 || id->get<long long>() > INT_MAX)
    return InvalidField(field, "must be a non-negative integer");
  const int gi_id = id->get<int>();
  if (std::ranges::any_of(gi_ids, [&](const auto& known) { return known.second == gi_id; }))
    return InvalidField(field, "GPU instance " + std::to_string(gi_id) + " appears twice on the GPU");
  gi_ids[start] = gi_id;
  return Status::Ok();
}

Result<std::vector<gpu::InventoryGpu>> GpusFromIdentity(const std::string& text, const gpu::GpuModel& model,
                                                        bool mig_capable, int count) {
  const std::string field = Keyed("metadata.annotations", kube::kGpuIdentityAnnotation);
  auto parsed = ParseJson(text);
  if (!parsed.ok() || !parsed->is_array()) return InvalidField(field, "must be a JSON array of GPUs");
  const json& gpus = *parsed;
  if (static_cast<int>(gpus.size()) != count) {
    return InvalidField(field, "lists " + std::to_string(gpus.size()) + " GPUs but " + kube::kGpuCountLabel + " says " +
                                   std::to_string(count));
  }
  std::vector<gpu::InventoryGpu> out(count);
  std::vector<bool> seen(count, false);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const json& g = gpus[i];
    const std::string where = field + "[" + std::to_string(i) + "]";
    const json* index = Member(g, "index");
    if (index == nullptr || !index->is_number_integer() || index->get<long long>() < 0 ||
        index->get<long long>() >= count || seen[index->get<int>()]) {
      return InvalidField(where + ".index", "must be a distinct GPU index below " + std::to_string(count));
    }
    const int at = index->get<int>();
    seen[at] = true;
    gpu::InventoryGpu& gpu = out[at];
    gpu.model = model.name;
    gpu.index = at;
    const json* uuid = Member(g, "uuid");
    if (uuid == nullptr || !uuid->is_string() || uuid->get_ref<const std::string&>().empty())
      return InvalidField(where + ".uuid", "required");
    gpu.uuid = uuid->get<std::string>();
    const json* enabled = Member(g, "migEnabled");
    if (enabled == nullptr || !enabled->is_boolean()) return InvalidField(where + ".migEnabled", "must be a boolean");
    gpu.mig_enabled = enabled->get<bool>();
    if (gpu.mig_enabled && !mig_capable) return InvalidField(where + ".migEnabled", model.name + " is not MIG-capable");
    const json* devices = Member(g, "migDevices");
    if (devices == nullptr || devices->is_null()) continue;
    if (!devices->is_array()) return InvalidField(where + ".migDevices", "must be a list");
    if (!gpu.mig_enabled && !devices->empty())
      return InvalidField(where + ".migDevices", "MIG instances on a GPU with MIG disabled");
    for (std::size_t d = 0; d < devices->size(); ++d) {
      const json& dev = (*devices)[d];
      const std::string dev_where = where + ".migDevices[" + std::to_string(d) + "]";
      const json* profile = Member(dev, "profile");
      const int p = profile != nullptr && profile->is_string() ? model.ProfileIndex(profile->get<std::string>()) : -1;
      if (p < 0) return InvalidField(dev_where + ".profile", "not a MIG profile of " + model.name);
      const json* start = Member(dev, "start");
      if (start == nullptr || !start->is_number_integer()) return InvalidField(dev_where + ".start", "must be a slice");
      gpu.mig_layout.push_back({p, start->get<int>()});
      if (Status id = ObserveGpuInstanceId(dev, start->get<int>(), dev_where, gpu.mig_gi_ids); !id.ok()) return id;
    }
    if (!gpu.mig_enabled) continue;
    if (Status valid = gpu::ValidateLayout(model, gpu.mig_layout); !valid.ok())
      return InvalidField(where + ".migDevices", valid.message());
  }
  return out;
}

// Every GPU's MIG setup under the layout `config` names, or the issue why not.
std::optional<ObservationIssue> PlaceConfig(const gpu::MigPartedConfig& mig_configs, const std::string& config,
                                            const gpu::GpuModel& model, std::vector<gpu::InventoryGpu>& gpus) {
  for (gpu::InventoryGpu& g : gpus) {
    auto setup = gpu::MigSetupFor(mig_configs, config, model, g.index);
    if (IsNotFound(setup)) {
      return ObservationIssue{"UnknownMigConfig", std::string(kube::kMigConfigLabel) + " names \"" + config +
                                                      "\", which no mig-parted config defines"};
    }
    if (!setup.ok()) return ObservationIssue{"InvalidMigConfig", setup.status().message()};
    g.mig_enabled = setup->mig_enabled;
    g.mig_layout = std::move(setup->layout);
  }
  return std::nullopt;
}

Status ObserveGpus(const json* allocatable, const json& metadata, const gpu::Catalog& catalog,
                   const gpu::MigPartedConfig& mig_configs, NodeObservation& out) {
  gpu::InventoryNode& node = out.node;
  auto advertised = AdvertisedGpuResources(allocatable);
  if (!advertised.ok()) return advertised.status();
  if (const std::string* config = Label(node, kube::kMigConfigLabel)) node.mig_config = *config;
  if (const std::string* state = Label(node, kube::kMigConfigStateLabel)) node.mig_config_state = *state;

  const std::string* product = Label(node, kube::kGpuProductLabel);
  if (product == nullptr) {
    if (!advertised->empty()) {
      out.issues.push_back({"GpuLabelsMissing", "allocatable advertises " + Describe(*advertised) +
                                                    " but there is no " + kube::kGpuProductLabel +
                                                    " label (is GPU feature discovery running?)"});
    }
    return Status::Ok();  // a CPU node
  }
  const gpu::GpuModel* model = catalog.FindByProduct(*product);
  if (model == nullptr) {
    out.issues.push_back({"UnknownGpuProduct", "GPU product \"" + *product +
                                                   "\" is not in the GPU catalog: the node is observed without GPUs "
                                                   "until the catalog knows the model"});
    return Status::Ok();
  }
  const std::string* count_label = Label(node, kube::kGpuCountLabel);
  if (count_label == nullptr)
    return InvalidField(LabelField(kube::kGpuCountLabel), std::string("required with ") + kube::kGpuProductLabel);
  int count = 0;
  const char* end = count_label->data() + count_label->size();
  if (auto [ptr, ec] = std::from_chars(count_label->data(), end, count);
      ec != std::errc() || ptr != end || count < 1 || count > kMaxGpusPerNode) {
    return InvalidField(
        LabelField(kube::kGpuCountLabel),
        "must be a number of GPUs from 1 to " + std::to_string(kMaxGpusPerNode) + ", got \"" + *count_label + "\"");
  }
  // The catalog knows what the model can do; GFD saying "false" means MIG
  // mode is off for this card (e.g. disabled in firmware).
  const std::string* capable_label = Label(node, kube::kMigCapableLabel);
  const bool mig_capable = model->mig_capable && (capable_label == nullptr || *capable_label != "false");

  const json* annotations = Member(metadata, "annotations");
  const json* identity = annotations == nullptr ? nullptr : Member(*annotations, kube::kGpuIdentityAnnotation);
  if (identity != nullptr) {
    if (!identity->is_string())
      return InvalidField(Keyed("metadata.annotations", kube::kGpuIdentityAnnotation), "must be a string");
    auto gpus = GpusFromIdentity(identity->get<std::string>(), *model, mig_capable, count);
    if (!gpus.ok()) return gpus.status();
    node.gpus = std::move(*gpus);
    if (auto issue = CheckAllocatable(*model, node.gpus, *advertised, node, "the GPUs' identity annotation"))
      out.issues.push_back(std::move(*issue));
    return Status::Ok();
  }

  for (int i = 0; i < count; ++i) node.gpus.push_back({model->name, i, gpu::SyntheticGpuUuid(node.name, i), false, {}});
  std::optional<ObservationIssue> unsettled;
  const std::string claim = std::to_string(count) + " whole " + model->name;
  if (!mig_capable || node.mig_config.empty()) {
    const bool mig_advertised = std::any_of(advertised->begin(), advertised->end(), [](const auto& r) {
      return r.first.rfind(kube::kMigResourcePrefix, 0) == 0;
    });
    if (mig_advertised) {
      unsettled = {"MigLayoutUnknown", "allocatable advertises MIG devices but no " +
                                           std::string(kube::kMigConfigLabel) + " label names their layout"};
    } else if (auto issue = CheckAllocatable(*model, node.gpus, *advertised, node, claim)) {
      out.issues.push_back(std::move(*issue));  // whole GPUs: the layout is known anyway
    }
  } else if (node.mig_config_state != "success") {
    const bool failed = node.mig_config_state == "failed";
    unsettled = {failed ? "MigReconfigurationFailed" : "MigReconfiguring",
                 std::string(kube::kMigConfigLabel) + "=" + node.mig_config + " is " +
                     (node.mig_config_state.empty() ? "not reported" : node.mig_config_state) +
                     (failed ? ": the GPUs keep a layout the labels do not tell" : "")};
  } else {
    unsettled = PlaceConfig(mig_configs, node.mig_config, *model, node.gpus);
    if (!unsettled)
      unsettled = CheckAllocatable(*model, node.gpus, *advertised, node, "layout \"" + node.mig_config + "\"");
  }
  if (unsettled) {
    out.layout_settled = false;
    for (gpu::InventoryGpu& g : node.gpus) {
      g.mig_enabled = false;
      g.mig_layout.clear();
    }
    out.issues.push_back(std::move(*unsettled));
  }
  return Status::Ok();
}

}  // namespace

Result<NodeObservation> ObserveNode(const json& node_object, const gpu::Catalog& catalog,
                                    const gpu::MigPartedConfig& mig_configs) {
  NodeObservation out;
  gpu::InventoryNode& node = out.node;
  if (!node_object.is_object()) return InvalidArgument("a Node must be a JSON object");
  const json* metadata = Member(node_object, "metadata");
  const json* name = metadata == nullptr ? nullptr : Member(*metadata, "name");
  if (name == nullptr || !name->is_string() || name->get_ref<const std::string&>().empty())
    return InvalidField("metadata.name", "required");
  node.name = name->get<std::string>();
  if (Status s = ObserveLabels(*metadata, node); !s.ok()) return s;
  if (Status s = ObserveTaints(node_object, node); !s.ok()) return s;

  const json* status = Member(node_object, "status");
  if (Status s = ObserveHealth(status, node); !s.ok()) return s;
  const json* allocatable = status == nullptr ? nullptr : Member(*status, "allocatable");
  if (allocatable != nullptr && !allocatable->is_object())
    return InvalidField("status.allocatable", "must be a map of quantities");
  if (const json* cpu = allocatable == nullptr ? nullptr : Member(*allocatable, "cpu")) {
    auto milli = Quantity(*cpu, "status.allocatable.cpu");
    if (!milli.ok()) return milli.status();
    auto fit = FitInt(*milli, "status.allocatable.cpu");
    if (!fit.ok()) return fit.status();
    node.cpu_milli = *fit;
  }
  if (const json* memory = allocatable == nullptr ? nullptr : Member(*allocatable, "memory")) {
    auto milli = Quantity(*memory, "status.allocatable.memory");
    if (!milli.ok()) return milli.status();
    auto fit = FitInt(*milli / 1000 / (1024 * 1024), "status.allocatable.memory");
    if (!fit.ok()) return fit.status();
    node.memory_mib = *fit;
  }
  if (Status s = ObserveGpus(allocatable, *metadata, catalog, mig_configs, out); !s.ok()) return s;
  return out;
}

}  // namespace septa::reconcile
