#include "services/kubesim/nodesim.h"

#include <algorithm>

#include "common/quantity.h"
#include "gpu/gpu_uuid.h"
#include "services/kube/gpu_labels.h"
#include "services/kubesim/objects.h"
#include "services/kubesim/selectors.h"
#include "services/kubesim/workload_util.h"

namespace septa::kubesim {

using nlohmann::json;

namespace {

using kube::kMigConfigLabel;
constexpr const char* kMigStateLabel = kube::kMigConfigStateLabel;

std::string ProductLabel(const gpu::GpuModel& model) {
  for (const auto& p : model.product_patterns) {
    if (p.find('*') == std::string::npos) return p;
  }
  return "NVIDIA-" + model.name;
}

bool Tolerates(const json& tolerations, const json& taint) {
  std::string effect = taint.value("effect", "");
  if (effect != "NoSchedule" && effect != "NoExecute") return true;
  for (const auto& t : tolerations) {
    std::string op = t.value("operator", "Equal");
    bool key_ok = t.value("key", "") == taint.value("key", "") || (t.value("key", "").empty() && op == "Exists");
    bool value_ok = op == "Exists" || t.value("value", "") == taint.value("value", "");
    bool effect_ok = t.value("effect", "").empty() || t.value("effect", "") == effect;
    if (key_ok && value_ok && effect_ok) return true;
  }
  return false;
}

// A pod's required node affinity, parsed once per pod, not once per node.
struct RequiredNodeAffinity {
  bool any = false;                  // it has terms: one must match
  std::vector<LabelSelector> terms;  // those that parse (ORed; a term's expressions ANDed)
};

RequiredNodeAffinity RequiredNodeAffinityOf(const json& spec) {
  using workload::Child;
  const json& terms =
      Child(Child(Child(Child(spec, "affinity"), "nodeAffinity"), "requiredDuringSchedulingIgnoredDuringExecution"),
            "nodeSelectorTerms");
  RequiredNodeAffinity affinity;
  if (!terms.is_array() || terms.empty()) return affinity;
  affinity.any = true;
  for (const auto& term : terms) {
    auto selector = LabelSelector::FromJson({{"matchExpressions", term.value("matchExpressions", json::array())}});
    if (selector.ok()) affinity.terms.push_back(*std::move(selector));
  }
  return affinity;
}

bool AffinityAllows(const RequiredNodeAffinity& affinity, const json& labels) {
  if (!affinity.any) return true;
  return std::ranges::any_of(affinity.terms, [&](const LabelSelector& term) { return term.Matches(labels); });
}

bool PowerOfTwo(int n) { return n > 0 && (n & (n - 1)) == 0; }

}  // namespace

int SimulatedGpuInstanceId(const gpu::GpuModel& model, const gpu::MigLayout& layout, std::size_t i) {
  const int total = model.memory_slices;
  const gpu::MigInstance& inst = layout[i];
  const int size = inst.profile >= 0 && inst.profile < static_cast<int>(model.mig_profiles.size())
                       ? model.mig_profiles[inst.profile].memory_slices
                       : 0;
  if (PowerOfTwo(total) && PowerOfTwo(size) && size <= total && inst.start >= 0 && inst.start % size == 0 &&
      inst.start + size <= total) {
    return total / size - 1 + inst.start / size;
  }
  return 2 * total + static_cast<int>(i);
}

NodeSim::NodeSim(Cluster& cluster, ApiServer& api, Inventory inventory, NodeSimOptions options)
    : cluster_(cluster),
      api_(api),
      inventory_(std::move(inventory)),
      options_(std::move(options)),
      pods_(std::make_shared<PodIndex>()),
      exits_(cluster, *pods_) {}

Status NodeSim::Start() {
  if (auto watched = cluster_.storage.Watch("pods", std::nullopt, pods_); !watched.ok()) {
    return Internal("watching pods: " + watched.error().message);
  }
  const gpu::Catalog& catalog = gpu::Catalog::Default();
  layouts_ = gpu::StockMigPartedConfigs(catalog);
  if (!inventory_.mig_configs_yaml.empty()) {
    auto extra = gpu::ParseMigParted(inventory_.mig_configs_yaml, "inventory migConfigs");
    if (!extra.ok()) return extra.status();
    for (auto& [name, groups] : extra->configs) layouts_.configs[name] = std::move(groups);
  }
  builtin_layouts_ = layouts_;
  for (const auto& spec : inventory_.nodes) {
    if (!spec.gpu_model.empty()) {
      const gpu::GpuModel* model = catalog.Find(spec.gpu_model);
      if (model == nullptr)
        return InvalidArgument("inventory: node " + spec.name + ": unknown GPU model \"" + spec.gpu_model + "\"");
      if (!spec.mig_config.empty() && !layouts_.configs.count(spec.mig_config))
        return InvalidArgument("inventory: node " + spec.name + ": unknown migConfig \"" + spec.mig_config + "\"");
      if (!spec.mig_config.empty() && !model->mig_capable)
        return InvalidArgument("inventory: node " + spec.name + ": " + model->name + " is not MIG-capable");
      if (auto setups = MigSetups(*model, spec.gpu_count, spec.mig_config); !setups.ok())
        return InvalidArgument("inventory: node " + spec.name + ": " + setups.status().message());
      gpu_nodes_[spec.name] = GpuNode{model, spec.gpu_count, spec.mig_config, std::nullopt};
    }
    auto created = api_.CreateObject("", "nodes", NodeObject(spec));
    if (!created.ok()) return Internal("creating node " + spec.name + ": " + created.error().message);
  }
  return Status::Ok();
}

Result<std::vector<gpu::GpuMigSetup>> NodeSim::MigSetups(const gpu::GpuModel& model, int count,
                                                         const std::string& config) const {
  std::vector<gpu::GpuMigSetup> out(count);
  if (config.empty()) return out;
  for (int i = 0; i < count; ++i) {
    auto setup = gpu::MigSetupFor(layouts_, config, model, i);
    if (!setup.ok()) return setup.status();
    out[i] = std::move(*setup);
  }
  return out;
}

std::string NodeSim::GpuIdentity(const std::string& name, const gpu::GpuModel& model,
                                 const std::vector<gpu::GpuMigSetup>& setups) {
  json gpus = json::array();
  for (std::size_t i = 0; i < setups.size(); ++i) {
    json instances = json::array();
    const gpu::MigLayout& layout = setups[i].layout;
    for (std::size_t d = 0; d < layout.size(); ++d) {
      instances.push_back({{"profile", model.mig_profiles[layout[d].profile].name},
                           {"start", layout[d].start},
                           {"giId", SimulatedGpuInstanceId(model, layout, d)}});
    }
    gpus.push_back({{"index", i},
                    {"uuid", gpu::SyntheticGpuUuid(name, static_cast<int>(i))},
                    {"migEnabled", setups[i].mig_enabled},
                    {"migDevices", std::move(instances)}});
  }
  return gpus.dump();
}

void NodeSim::GpuResources(const gpu::GpuModel& model, int count, const std::string& config, json& capacity,
                           json& labels) const {
  int whole = 0;
  std::map<std::string, int> mig;
  for (int i = 0; i < count; ++i) {
    const gpu::MigDeviceGroup* group = config.empty() ? nullptr : gpu::GroupFor(layouts_, config, model, i);
    if (group == nullptr || !group->mig_enabled) {
      ++whole;
      continue;
    }
    for (const auto& [profile, n] : group->mig_devices) mig[profile] += n;
  }
  capacity["nvidia.com/gpu"] = std::to_string(whole);
  for (auto it = labels.begin(); it != labels.end();) {  // drop the previous layout's labels
    if (it.key().rfind("nvidia.com/mig-", 0) == 0) {
      it = labels.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [profile, n] : mig) {
    capacity["nvidia.com/mig-" + profile] = std::to_string(n);
    const std::string p = "nvidia.com/mig-" + profile;
    labels[p + ".count"] = std::to_string(n);
    if (const gpu::MigProfile* mp = model.FindProfile(profile)) {
      labels[p + ".memory"] = std::to_string(mp->memory_mib);
      labels[p + ".multiprocessors"] = std::to_string(mp->sms);
      labels[p + ".slices.gi"] = std::to_string(mp->compute_slices);
      labels[p + ".slices.ci"] = std::to_string(mp->compute_slices);
    }
  }
}

json NodeSim::NodeObject(const NodeSpec& spec) const {
  json labels = {{"kubernetes.io/hostname", spec.name}, {"kubernetes.io/os", "linux"}, {"kubernetes.io/arch", "amd64"}};
  for (const auto& [k, v] : spec.labels) labels[k] = v;
  json capacity = {{"cpu", spec.cpu}, {"memory", spec.memory}, {"pods", "110"}};
  json annotations = json::object();
  if (auto it = gpu_nodes_.find(spec.name); it != gpu_nodes_.end()) {
    const gpu::GpuModel& model = *it->second.model;
    labels["nvidia.com/gpu.present"] = "true";
    labels["nvidia.com/gpu.product"] = ProductLabel(model);
    labels["nvidia.com/gpu.memory"] = std::to_string(model.memory_mib);
    labels["nvidia.com/gpu.count"] = std::to_string(spec.gpu_count);
    labels["nvidia.com/gpu.family"] = model.family;
    labels["nvidia.com/mig.capable"] = model.mig_capable ? "true" : "false";
    labels["nvidia.com/mig.strategy"] = "mixed";
    labels["nvidia.com/gpu.sharing-strategy"] = "none";
    if (model.mig_capable) {
      labels[kMigConfigLabel] = spec.mig_config.empty() ? "all-disabled" : spec.mig_config;
      labels[kMigStateLabel] = "success";
    }
    GpuResources(model, spec.gpu_count, spec.mig_config, capacity, labels);
    // Start() checked that the layout places.
    annotations[kube::kGpuIdentityAnnotation] =
        GpuIdentity(spec.name, model, *MigSetups(model, spec.gpu_count, spec.mig_config));
  }
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", spec.name}, {"labels", labels}, {"annotations", annotations}}},
          {"spec", {{"taints", spec.taints}}},
          {"status",
           {{"capacity", capacity},
            {"allocatable", capacity},
            {"conditions", {{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"}}}},
            {"addresses", {{{"type", "Hostname"}, {"address", spec.name}}}},
            {"nodeInfo",
             {{"kubeletVersion", "v1.30.0-kubesim"}, {"operatingSystem", "linux"}, {"architecture", "amd64"}}}}}};
}

void NodeSim::Tick() {
  ReconcileMig();
  Schedule();
  StartPods();
  exits_.Tick();
}

void NodeSim::ReadLayouts() {
  layouts_ = builtin_layouts_;
  ObjectPtr configmap =
      cluster_.storage.Get("configmaps", options_.mig_parted_namespace, options_.mig_parted_configmap);
  if (!configmap) return;
  const std::string text = configmap->value("data", json::object()).value("config.yaml", "");
  // A document that does not parse adds nothing: the configs it meant to name fail as unknown.
  auto custom = gpu::ParseMigParted(text, options_.mig_parted_configmap);
  if (!custom.ok()) return;
  for (auto& [name, groups] : custom->configs) layouts_.configs[name] = std::move(groups);
}

void NodeSim::ReconcileMig() {
  const TimePoint now = cluster_.clock.Now();
  for (auto& entry : gpu_nodes_) {
    // Not a structured binding: the lambdas below capture these, which clang
    // before 16 (the sanitizer builds' compiler) refuses.
    const auto& name = entry.first;
    auto& gn = entry.second;
    if (!gn.model->mig_capable) continue;
    ObjectPtr node = cluster_.storage.Get("nodes", "", name);
    if (!node) continue;
    const json labels = (*node)["metadata"].value("labels", json::object());
    std::string wanted = labels.value(kMigConfigLabel, "all-disabled");
    std::string applied = gn.applied_config.empty() ? "all-disabled" : gn.applied_config;
    std::string state = labels.value(kMigStateLabel, "");
    if (wanted == applied && !gn.pending_since) continue;
    if (!gn.pending_since) {
      if (state == "failed" && labels.value("septa.io/mig.failed-config", "") == wanted)
        continue;  // until changed again
      gn.pending_since = now;
      (void)cluster_.storage.Mutate("nodes", "", name, [&](const json* cur) -> ApiResult<Mutation> {
        if (!cur) return Mutation{};
        json next = *cur;
        next["metadata"]["labels"][kMigStateLabel] = "pending";
        return Mutation{Mutation::Kind::kPut, std::move(next)};
      });
      continue;
    }
    if (now - *gn.pending_since < options_.mig_reconfigure_delay) continue;
    gn.pending_since.reset();
    // Reconfiguring destroys MIG instances: refused while pods use any.
    bool in_use = false;
    const PodIndex::Usage used = pods_->Used();
    if (auto on_node = used.find(name); on_node != used.end()) {
      for (const auto& [res, qty] : on_node->second) in_use = in_use || (res.starts_with("nvidia.com/mig-") && qty > 0);
    }
    // An unknown layout, or one that does not fit this GPU model, fails as mig-parted would.
    ReadLayouts();
    auto setups = MigSetups(*gn.model, gn.count, wanted);
    const bool known = setups.ok();
    if (!in_use && known) gn.applied_config = wanted == "all-disabled" ? "" : wanted;
    (void)cluster_.storage.Mutate("nodes", "", name, [&](const json* cur) -> ApiResult<Mutation> {
      if (!cur) return Mutation{};
      json next = *cur;
      json& l = next["metadata"]["labels"];
      if (in_use || !known) {
        l[kMigStateLabel] = "failed";
        l["septa.io/mig.failed-config"] = wanted;
      } else {
        l[kMigStateLabel] = "success";
        l.erase("septa.io/mig.failed-config");
        json capacity = next["status"]["capacity"];
        for (auto it = capacity.begin(); it != capacity.end();) {
          if (it.key().rfind("nvidia.com/", 0) == 0) it = capacity.erase(it);
          else ++it;
        }
        GpuResources(*gn.model, gn.count, gn.applied_config, capacity, l);
        next["metadata"]["annotations"][kube::kGpuIdentityAnnotation] = GpuIdentity(name, *gn.model, *setups);
        next["status"]["capacity"] = capacity;
        next["status"]["allocatable"] = capacity;
      }
      return Mutation{Mutation::Kind::kPut, std::move(next)};
    });
  }
}

void NodeSim::Schedule() {
  std::vector<ObjectPtr> pending = pods_->Unscheduled();
  std::erase_if(pending, [&](const ObjectPtr& p) {
    return options_.scheduler_names.count(workload::Child(*p, "spec").value("schedulerName", "default-scheduler")) == 0;
  });
  if (pending.empty()) return;
  auto nodes = cluster_.storage.List("nodes", "", nullptr, 0, "");
  // What is already requested on each node.
  PodIndex::Usage used = pods_->Used();
  const std::string now = FormatRfc3339(cluster_.clock.Now());
  for (const auto& pod : pending) {
    const json& spec = workload::Child(*pod, "spec");
    auto requests = PodRequests(*pod);
    requests["pods"] += 1000;
    const json& node_selector = workload::Child(spec, "nodeSelector");
    const json& tolerations = workload::Child(spec, "tolerations");
    const RequiredNodeAffinity affinity = RequiredNodeAffinityOf(spec);
    std::string chosen;
    for (const auto& node : nodes.items) {  // read in place: up to every node for every pending pod
      const json& metadata = workload::Metadata(*node);
      const json& labels = workload::Child(metadata, "labels");
      const std::string name = metadata.value("name", "");
      bool ok = true;
      for (auto& [k, v] : node_selector.items()) ok = ok && labels.value(k, "") == v;
      ok = ok && AffinityAllows(affinity, labels);
      for (const auto& taint : workload::Child(workload::Child(*node, "spec"), "taints"))
        ok = ok && Tolerates(tolerations, taint);
      const json& alloc = workload::Child(workload::Child(*node, "status"), "allocatable");
      for (const auto& [r, q] : requests) {
        if (!ok) break;
        auto have_it = alloc.find(r);
        if (have_it == alloc.end()) {
          ok = q == 0;
          continue;
        }
        auto have = ParseQuantityMilli(have_it->get<std::string>());
        ok = have.ok() && used[name][r] + q <= *have;
      }
      if (ok) {
        chosen = name;
        break;
      }
    }
    const std::string ns = (*pod)["metadata"].value("namespace", "");
    const std::string pod_name = (*pod)["metadata"].value("name", "");
    (void)cluster_.storage.Mutate("pods", ns, pod_name, [&](const json* cur) -> ApiResult<Mutation> {
      if (!cur || !cur->value("spec", json::object()).value("nodeName", "").empty()) return Mutation{};
      json next = *cur;
      json& conditions = next["status"]["conditions"];
      if (!conditions.is_array()) conditions = json::array();
      json scheduled = {{"type", "PodScheduled"}, {"lastTransitionTime", now}};
      if (chosen.empty()) {
        for (const auto& c : conditions)
          if (c.value("type", "") == "PodScheduled" && c.value("reason", "") == "Unschedulable") return Mutation{};
        scheduled["status"] = "False";
        scheduled["reason"] = "Unschedulable";
        scheduled["message"] = "0/" + std::to_string(nodes.items.size()) + " nodes are available";
      } else {
        next["spec"]["nodeName"] = chosen;
        scheduled["status"] = "True";
      }
      json kept = json::array();
      for (const auto& c : conditions)
        if (c.value("type", "") != "PodScheduled") kept.push_back(c);
      kept.push_back(scheduled);
      conditions = kept;
      return Mutation{Mutation::Kind::kPut, std::move(next)};
    });
    if (!chosen.empty()) {
      for (const auto& [r, q] : requests) used[chosen][r] += q;
    }
  }
}

void NodeSim::StartPods() {
  const TimePoint now = cluster_.clock.Now();
  for (const auto& pod : pods_->Starting()) {
    const std::string uid = (*pod)["metadata"].value("uid", "");
    auto [it, fresh] = bound_at_.emplace(uid, now);
    if (fresh || now - it->second < options_.pod_start_delay) continue;
    bound_at_.erase(it);
    const std::string ip =
        "10.244." + std::to_string((next_pod_ip_ / 250) % 250) + "." + std::to_string(next_pod_ip_ % 250 + 1);
    ++next_pod_ip_;
    const std::string ts = FormatRfc3339(now);
    (void)cluster_.storage.Mutate(
        "pods", (*pod)["metadata"].value("namespace", ""), (*pod)["metadata"].value("name", ""),
        [&](const json* cur) -> ApiResult<Mutation> {
          if (!cur || cur->value("status", json::object()).value("phase", "") != "Pending") return Mutation{};
          json next = *cur;
          json& status = next["status"];
          status["phase"] = "Running";
          status["podIP"] = ip;
          status["podIPs"] = {{{"ip", ip}}};
          status["hostIP"] = "192.168.0.1";
          status["startTime"] = ts;
          json conditions = status.value("conditions", json::array());
          for (const char* type : {"Initialized", "ContainersReady", "Ready"})
            conditions.push_back({{"type", type}, {"status", "True"}, {"lastTransitionTime", ts}});
          status["conditions"] = conditions;
          json statuses = json::array();
          for (const auto& c : next["spec"].value("containers", json::array())) {
            statuses.push_back({{"name", c.value("name", "")},
                                {"image", c.value("image", "")},
                                {"ready", true},
                                {"started", true},
                                {"restartCount", 0},
                                {"state", {{"running", {{"startedAt", ts}}}}}});
          }
          status["containerStatuses"] = statuses;
          return Mutation{Mutation::Kind::kPut, std::move(next)};
        });
  }
}

}  // namespace septa::kubesim
