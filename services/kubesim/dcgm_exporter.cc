#include "services/kubesim/dcgm_exporter.h"

#include <algorithm>
#include <array>
#include <boost/beast/http/field.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <tuple>

#include "common/documents.h"
#include "common/fnv.h"
#include "common/quantity.h"
#include "common/time_point.h"
#include "gpu/catalog.h"
#include "services/kube/gpu_labels.h"
#include "services/kubesim/nodesim.h"
#include "services/kubesim/workload_util.h"

namespace septa::kubesim {

namespace bhttp = boost::beast::http;
using nlohmann::json;

namespace {

// A decimal number without sign or exponent ("48.6"), as std::from_chars reads it.
std::optional<double> PlainNumber(std::string_view text) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; }))
    return std::nullopt;
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> Percent(std::string_view text) {
  auto value = PlainNumber(text);
  if (!value || *value > 100) return std::nullopt;
  return value;
}

}  // namespace

std::optional<SimulatedUtilization> ParseSimulatedUtilization(std::string_view text) {
  const auto dash = text.find('-');
  if (dash == std::string_view::npos) {
    const auto percent = Percent(text);
    if (!percent) return std::nullopt;
    return SimulatedUtilization{*percent, *percent};
  }
  const auto low = Percent(text.substr(0, dash));
  const auto high = Percent(text.substr(dash + 1));
  if (!low || !high || *low > *high) return std::nullopt;
  return SimulatedUtilization{*low, *high};
}

std::optional<double> ParseSimulatedMemoryMib(std::string_view text) {
  if (text.empty() || text.size() > 12 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return PlainNumber(text);
}

// The running pods of each node, kept from the storage's pod events.
class DcgmExporters::RunningPods final : public WatchSink {
 public:
  std::vector<ObjectPtr> OnNode(const std::string& node) const {
    std::lock_guard lock(mu_);
    std::vector<ObjectPtr> out;
    if (auto it = by_node_.find(node); it != by_node_.end()) {
      for (const auto& [key, pod] : it->second) out.push_back(pod);
    }
    return out;
  }

  bool Deliver(const WatchEvent& event) override {
    const json& pod = *event.object;
    const json& metadata = workload::Metadata(pod);
    const std::string key = metadata.value("namespace", "") + "/" + metadata.value("name", "");
    std::lock_guard lock(mu_);
    if (auto was = node_of_.find(key); was != node_of_.end()) {
      if (auto on = by_node_.find(was->second); on != by_node_.end()) {
        on->second.erase(key);
        if (on->second.empty()) by_node_.erase(on);
      }
      node_of_.erase(was);
    }
    if (event.type == WatchEvent::Type::kDeleted || workload::Phase(pod) != "Running") return true;
    const std::string node = workload::Child(pod, "spec").value("nodeName", "");
    if (node.empty()) return true;
    by_node_[node][key] = event.object;
    node_of_[key] = node;
    return true;
  }
  bool Bookmark(std::uint64_t) override { return true; }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::map<std::string, ObjectPtr>> by_node_;  // node -> "<ns>/<name>" -> pod
  std::map<std::string, std::string> node_of_;
};

namespace {

// A whole GPU (start -1) or the MIG instance starting at `start`.
struct DcgmDeviceKey {
  int gpu = 0;
  int start = -1;
  auto operator<=>(const DcgmDeviceKey&) const = default;
};

// What the node's GPUs are, from its labels and identity annotation.
struct DcgmSimDevice {
  DcgmDeviceKey key{};
  std::string uuid{};
  std::string profile{};  // MIG
  int gi_id = -1;         // MIG
  double total_mib = 0;
  double compute_share = 1;  // of its GPU: compute slices / the GPU's
};

struct DcgmSimLayout {
  std::string model_name;
  std::vector<DcgmSimDevice> devices;  // by GPU index, then GPU-instance id
  std::map<std::string, int> index_of_uuid;
};

// "NVIDIA-H100-80GB-HBM3" -> "NVIDIA H100 80GB HBM3", the driver's spelling.
std::string ModelNameOf(std::string product) {
  std::replace(product.begin(), product.end(), '-', ' ');
  return product;
}

std::optional<DcgmSimLayout> LayoutOf(const json& node) {
  const json& metadata = workload::Metadata(node);
  const std::string product = workload::Child(metadata, "labels").value(kube::kGpuProductLabel, "");
  const gpu::GpuModel* model = gpu::Catalog::Default().FindByProduct(product);
  const json& annotations = workload::Child(metadata, "annotations");
  const auto identity_text = annotations.find(kube::kGpuIdentityAnnotation);
  if (model == nullptr || identity_text == annotations.end() || !identity_text->is_string()) return std::nullopt;
  auto identity = ParseJson(identity_text->get_ref<const std::string&>());
  if (!identity.ok() || !identity->is_array()) return std::nullopt;
  DcgmSimLayout layout;
  layout.model_name = ModelNameOf(product);
  try {
    for (const json& g : *identity) {
      const int index = g.at("index").get<int>();
      const std::string uuid = g.at("uuid").get<std::string>();
      layout.index_of_uuid[uuid] = index;
      if (!g.value("migEnabled", false)) {
        layout.devices.push_back({.key = {index, -1},
                                  .uuid = uuid,
                                  .profile = "",
                                  .gi_id = -1,
                                  .total_mib = static_cast<double>(model->memory_mib),
                                  .compute_share = 1});
        continue;
      }
      gpu::MigLayout mig;
      for (const json& d : g.value("migDevices", json::array())) {
        const int profile = model->ProfileIndex(d.at("profile").get<std::string>());
        if (profile < 0) return std::nullopt;
        mig.push_back({profile, d.at("start").get<int>()});
      }
      std::vector<DcgmSimDevice> instances;
      const json& devices = g.value("migDevices", json::array());
      for (std::size_t i = 0; i < mig.size(); ++i) {
        const gpu::MigProfile& profile = model->mig_profiles[mig[i].profile];
        // The id the MIG manager published; the same rule when it did not.
        const int gi_id = devices[i].value("giId", SimulatedGpuInstanceId(*model, mig, i));
        instances.push_back({.key = {index, mig[i].start},
                             .uuid = uuid,
                             .profile = profile.name,
                             .gi_id = gi_id,
                             .total_mib = static_cast<double>(profile.memory_mib),
                             .compute_share = model->compute_slices > 0
                                                  ? static_cast<double>(profile.compute_slices) / model->compute_slices
                                                  : 0});
      }
      std::sort(instances.begin(), instances.end(),
                [](const DcgmSimDevice& a, const DcgmSimDevice& b) { return a.gi_id < b.gi_id; });
      layout.devices.insert(layout.devices.end(), instances.begin(), instances.end());
    }
  } catch (const json::exception&) {
    return std::nullopt;
  }
  std::stable_sort(layout.devices.begin(), layout.devices.end(),
                   [](const DcgmSimDevice& a, const DcgmSimDevice& b) { return a.key.gpu < b.key.gpu; });
  return layout;
}

// Who holds a device: a pod's container, alone or sharing it.
struct DcgmHolder {
  std::string uid;
  std::string container;
  bool exclusive = true;
  double fraction = 1;  // of the GPU, when shared
};

// A count of a resource in a container's limits (else requests), 0 when absent.
long long CountOf(const json& container, const std::string& resource) {
  const json& resources = workload::Child(container, "resources");
  for (const char* kind : {"limits", "requests"}) {
    const json& amounts = workload::Child(resources, kind);
    auto it = amounts.find(resource);
    if (it == amounts.end()) continue;
    if (it->is_number()) return std::max<long long>(0, it->get<long long>());
    if (!it->is_string()) return 0;
    auto milli = ParseQuantityMilli(it->get_ref<const std::string&>());
    return milli.ok() ? *milli / 1000 : 0;
  }
  return 0;
}

std::string StringAnnotation(const json& pod, const char* key) {
  const json& annotations = workload::Child(workload::Metadata(pod), "annotations");
  auto it = annotations.find(key);
  return it != annotations.end() && it->is_string() ? it->get<std::string>() : "";
}

// The GPU indices a pod is pinned to on `node`: HAMi's device pin, else the
// GPUs Septa's placement recorded (tenancy/sync PodAssignment); the device
// plugin reads neither, kubesim stands in for a pinning device plugin.
std::vector<int> PinnedGpus(const json& pod, const std::string& node, const DcgmSimLayout& layout) {
  std::vector<int> out;
  const std::string hami = StringAnnotation(pod, "nvidia.com/use-gpuuuid");
  for (std::size_t at = 0; !hami.empty() && at <= hami.size();) {
    const std::size_t comma = std::min(hami.find(',', at), hami.size());
    if (auto it = layout.index_of_uuid.find(hami.substr(at, comma - at)); it != layout.index_of_uuid.end())
      out.push_back(it->second);
    at = comma + 1;
  }
  if (!out.empty()) return out;
  auto assignment = ParseJson(StringAnnotation(pod, "septa.dev/assignment"));
  if (!assignment.ok() || !assignment->is_object() || assignment->value("node", "") != node) return out;
  const json& gpus = workload::Child(*assignment, "gpus");
  if (!gpus.is_array()) return out;
  for (const json& g : gpus) {
    if (g.is_number_integer()) out.push_back(g.get<int>());
  }
  return out;
}

// A share of one GPU, from KAI's annotations: gpu-fraction, or gpu-memory in MiB.
std::optional<double> KaiFraction(const json& pod, double gpu_memory_mib) {
  if (auto fraction = PlainNumber(StringAnnotation(pod, "gpu-fraction")); fraction && *fraction > 0) {
    return std::min(*fraction, 1.0);
  }
  if (auto memory = PlainNumber(StringAnnotation(pod, "gpu-memory")); memory && *memory > 0 && gpu_memory_mib > 0) {
    return std::min(*memory / gpu_memory_mib, 1.0);
  }
  return std::nullopt;
}

// The order the kubelet allocated the pods in (and its pod-resources list names them in).
std::tuple<std::string, std::string, std::string> StartOrder(const json& pod) {
  const json& metadata = workload::Metadata(pod);
  return {workload::Child(pod, "status").value("startTime", ""), metadata.value("creationTimestamp", ""),
          metadata.value("namespace", "") + "/" + metadata.value("name", "")};
}

}  // namespace

struct DcgmExporters::NodeState {
  std::mt19937_64 random;
  TimePoint energy_at{};                                     // the energy counters are integrated up to here
  std::map<std::string, double> energy_mj;                   // by GPU UUID
  std::map<DcgmDeviceKey, std::vector<DcgmHolder>> holders;  // in allocation order
  std::set<std::string> placed;                              // uids of the pods allocated so far

  // The kubelet's device allocation for a pod that just started.
  void Place(const json& pod, const std::string& node, const DcgmSimLayout& layout) {
    const std::string uid = workload::Uid(pod);
    const std::vector<int> pins = PinnedGpus(pod, node, layout);
    auto held = [&](const DcgmDeviceKey& key) -> const std::vector<DcgmHolder>& {
      static const std::vector<DcgmHolder> kNone;
      auto it = holders.find(key);
      return it == holders.end() ? kNone : it->second;
    };
    // Whole (non-MIG) GPUs, the pinned ones first.
    std::vector<const DcgmSimDevice*> whole;
    for (int pin : pins) {
      for (const DcgmSimDevice& d : layout.devices)
        if (d.key.gpu == pin && d.key.start < 0) whole.push_back(&d);
    }
    for (const DcgmSimDevice& d : layout.devices) {
      if (d.key.start < 0 && std::find(whole.begin(), whole.end(), &d) == whole.end()) whole.push_back(&d);
    }
    auto place_whole = [&](const std::string& container, long long count, bool exclusive, double fraction) {
      for (const DcgmSimDevice* d : whole) {
        if (count == 0) break;
        const auto& on = held(d->key);
        double taken = 0;
        bool blocked = false;
        for (const DcgmHolder& h : on) {
          taken += h.fraction;
          blocked = blocked || h.exclusive || h.uid == uid;
        }
        if (blocked || (exclusive && !on.empty()) || taken + fraction > 1 + 1e-9) continue;
        holders[d->key].push_back({uid, container, exclusive, fraction});
        --count;
      }
    };
    const json& containers = workload::Child(workload::Child(pod, "spec"), "containers");
    if (!containers.is_array() || containers.empty()) return;
    bool asked = false;
    for (const json& c : containers) {
      const std::string name = c.value("name", "");
      const long long gpus = CountOf(c, kube::kGpuResource);
      if (gpus > 0) {
        asked = true;
        place_whole(name, gpus, true, 1.0);
      }
      for (const auto& [resource, amount] : workload::Child(workload::Child(c, "resources"), "limits").items()) {
        if (!resource.starts_with(kube::kMigResourcePrefix)) continue;
        std::string profile = resource.substr(std::string_view(kube::kMigResourcePrefix).size());
        if (profile.ends_with(".me")) profile.replace(profile.size() - 3, 1, "+");  // ".me" is "+me" in a resource name
        long long count = CountOf(c, resource);
        asked = asked || count > 0;
        for (const DcgmSimDevice& d : layout.devices) {
          if (count == 0) break;
          if (d.key.start < 0 || d.profile != profile || !held(d.key).empty()) continue;
          holders[d.key].push_back({uid, name, true, 1});
          --count;
        }
      }
    }
    if (asked) return;
    // KAI's fractions ask for no device: the share of one GPU.
    const double memory = whole.empty() ? 0 : whole.front()->total_mib;
    if (auto fraction = KaiFraction(pod, memory)) place_whole(containers[0].value("name", ""), 1, false, *fraction);
  }
};

DcgmExporters::DcgmExporters(Cluster& cluster, ApiServer& api, DcgmSimOptions options)
    : cluster_(cluster), api_(api), options_(std::move(options)), pods_(std::make_shared<RunningPods>()) {}

DcgmExporters::~DcgmExporters() { Stop(); }

std::string DcgmExporters::PodName(std::string_view node) {
  std::array<char, 17> hex{};
  std::snprintf(hex.data(), hex.size(), "%016llx", static_cast<unsigned long long>(Fnv1a64(node)));
  return "nvidia-dcgm-exporter-" + std::string(hex.data(), 10);
}

Status DcgmExporters::Start(const std::vector<std::string>& nodes) {
  if (auto watched = cluster_.storage.Watch("pods", std::nullopt, pods_); !watched.ok()) {
    return Internal("dcgm-exporter: watching pods: " + watched.error().message);
  }
  seed_ = options_.seed.value_or(0);
  if (!options_.seed) {
    std::array<std::uint8_t, 8> bytes{};
    SEPTA_RETURN_IF_ERROR(cluster_.random.Fill(bytes));
    for (std::uint8_t b : bytes) seed_ = (seed_ << 8) | b;
  }
  const TimePoint now = cluster_.clock.Now();
  {
    std::lock_guard lock(mu_);
    for (const std::string& node : nodes) {
      auto state = std::make_unique<NodeState>();
      state->random.seed(seed_ ^ Fnv1a64(node));
      state->energy_at = now;
      nodes_[node] = std::move(state);
    }
  }
  for (const std::string& node : nodes) {
    http::ServerOptions so;
    so.host = options_.listen_host;
    so.port = 0;
    so.io_threads = 1;
    so.body_limit = 4096;
    auto handler = [this, node](http::Request&& request, std::shared_ptr<http::Exchange> exchange) {
      const std::string_view target = http::View(request.target());
      const std::string_view path = target.substr(0, target.find('?'));
      http::Response res{bhttp::status::ok, request.version()};
      res.set(bhttp::field::content_type, "text/plain; charset=utf-8");
      if (request.method() != bhttp::verb::get) {
        res.result(bhttp::status::method_not_allowed);
        res.body() = "method not allowed\n";
      } else if (path == "/metrics") {
        auto text = Scrape(node);
        if (text.ok()) {
          res.set(bhttp::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
          res.body() = *std::move(text);
        } else {
          res.result(bhttp::status::service_unavailable);
          res.body() = text.status().message() + "\n";
        }
      } else if (path == "/health") {
        res.body() = "KO\n";
        if (cluster_.storage.Get("nodes", "", node)) res.body() = "OK\n";
      } else {
        res.result(bhttp::status::not_found);
        res.body() = "404 page not found\n";
      }
      exchange->Reply(std::move(res));
    };
    auto server = std::make_unique<http::Server>(so, handler);
    SEPTA_RETURN_IF_ERROR(server->Start());
    servers_[node] = std::move(server);
    if (options_.exporter_pods) EnsurePod(node);
  }
  next_pod_check_ = now + std::chrono::seconds(1);
  return Status::Ok();
}

void DcgmExporters::Stop() {
  if (stopped_) return;
  stopped_ = true;
  for (auto& [node, server] : servers_) server->Shutdown(std::chrono::milliseconds(500));
  servers_.clear();
}

std::uint16_t DcgmExporters::port(const std::string& node) const {
  auto it = servers_.find(node);
  return it == servers_.end() ? 0 : it->second->port();
}

std::string DcgmExporters::MetricsUrl(const std::string& node) const {
  return "http://" + options_.listen_host + ":" + std::to_string(port(node)) + "/metrics";
}

void DcgmExporters::Tick() {
  if (!options_.exporter_pods || stopped_) return;
  const TimePoint now = cluster_.clock.Now();
  if (now < next_pod_check_) return;
  next_pod_check_ = now + std::chrono::seconds(1);
  for (const auto& [node, server] : servers_) EnsurePod(node);
}

// The GPU Operator's DaemonSet pod on `node` (assets/state-dcgm-exporter),
// running at once, its address and port the node's listener.
void DcgmExporters::EnsurePod(const std::string& node) {
  const std::string name = PodName(node);
  if (cluster_.storage.Get("pods", options_.namespace_name, name)) return;
  const std::uint16_t listen_port = port(node);
  json env = json::array({{{"name", "DCGM_EXPORTER_LISTEN"}, {"value", ":" + std::to_string(listen_port)}},
                          {{"name", "DCGM_EXPORTER_KUBERNETES"},
                           {"value", options_.profile.mapping == DcgmPodMapping::kOff ? "false" : "true"}},
                          {{"name", "NODE_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}}});
  if (options_.profile.mapping == DcgmPodMapping::kVirtualGpus)
    env.push_back({{"name", "KUBERNETES_VIRTUAL_GPUS"}, {"value", "true"}});
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", name},
                {"namespace", options_.namespace_name},
                {"labels", {{"app", "nvidia-dcgm-exporter"}}},
                {"annotations", {{"kubesim.septa.dev/simulated", "dcgm-exporter"}}}}},
              {"spec",
               {{"nodeName", node},
                {"tolerations", {{{"operator", "Exists"}}}},
                {"containers",
                 {{{"name", "nvidia-dcgm-exporter"},
                   {"image", "kubesim/dcgm-exporter:" + std::string(DcgmExporterVersionName(options_.profile.version))},
                   {"env", env},
                   {"ports", {{{"name", "metrics"}, {"containerPort", listen_port}, {"protocol", "TCP"}}}}}}}}}};
  auto created = api_.CreateObject("", "pods", std::move(pod), "");
  if (!created.ok()) return;  // the namespace is gone, or a quota refuses it: tried again next tick
  const std::string ts = FormatRfc3339(cluster_.clock.Now());
  const std::string ip = options_.listen_host;
  (void)cluster_.storage.Mutate("pods", options_.namespace_name, name, [&](const json* cur) -> ApiResult<Mutation> {
    if (!cur) return Mutation{};
    json next = *cur;
    json& status = next["status"];
    status["phase"] = "Running";
    status["podIP"] = ip;
    status["podIPs"] = {{{"ip", ip}}};
    status["hostIP"] = ip;
    status["startTime"] = ts;
    status["conditions"] = json::array();
    for (const char* type : {"PodScheduled", "Initialized", "ContainersReady", "Ready"})
      status["conditions"].push_back({{"type", type}, {"status", "True"}, {"lastTransitionTime", ts}});
    status["containerStatuses"] = {{{"name", "nvidia-dcgm-exporter"},
                                    {"image", next["spec"]["containers"][0]["image"]},
                                    {"ready", true},
                                    {"started", true},
                                    {"restartCount", 0},
                                    {"state", {{"running", {{"startedAt", ts}}}}}}};
    return Mutation{Mutation::Kind::kPut, std::move(next)};
  });
}

Result<std::string> DcgmExporters::Scrape(const std::string& node) {
  ObjectPtr node_object = cluster_.storage.Get("nodes", "", node);
  std::lock_guard lock(mu_);
  auto state_it = nodes_.find(node);
  if (state_it == nodes_.end() || !node_object) return NotFound("no dcgm-exporter on node \"" + node + "\"");
  NodeState& state = *state_it->second;
  const DcgmSimLayout layout = LayoutOf(*node_object).value_or(DcgmSimLayout{});

  // The kubelet's side: pods that went give their devices back, new ones get theirs.
  std::vector<ObjectPtr> running = pods_->OnNode(node);
  std::map<std::string, const json*> by_uid;
  for (const ObjectPtr& pod : running) by_uid[workload::Uid(*pod)] = pod.get();
  std::set<DcgmDeviceKey> present;
  for (const DcgmSimDevice& d : layout.devices) present.insert(d.key);
  for (auto it = state.holders.begin(); it != state.holders.end();) {
    std::erase_if(it->second, [&](const DcgmHolder& h) { return !by_uid.count(h.uid); });
    it = it->second.empty() || !present.count(it->first) ? state.holders.erase(it) : std::next(it);
  }
  std::erase_if(state.placed, [&](const std::string& uid) { return !by_uid.count(uid); });
  std::vector<const json*> fresh;
  for (const auto& [uid, pod] : by_uid) {
    if (!state.placed.count(uid)) fresh.push_back(pod);
  }
  std::sort(fresh.begin(), fresh.end(), [](const json* a, const json* b) { return StartOrder(*a) < StartOrder(*b); });
  for (const json* pod : fresh) {
    state.Place(*pod, node, layout);
    state.placed.insert(workload::Uid(*pod));
  }

  // The GPUs' side: what each device's pods make it do now.
  std::vector<DcgmDevice> devices;
  std::map<int, double> gpu_busy;  // by index: share of the whole GPU's time busy, percent
  for (const DcgmSimDevice& d : layout.devices) {
    DcgmDevice device;
    device.gpu = d.key.gpu;
    device.uuid = d.uuid;
    char bus[32];
    std::snprintf(bus, sizeof(bus), "00000000:%02X:00.0", (0x18 + d.key.gpu) & 0xff);
    device.pci_bus_id = bus;
    device.model_name = layout.model_name;
    if (d.key.start >= 0) {
      device.gi_id = d.gi_id;
      device.mig_profile = d.profile;
    } else {
      device.reserved_mib = std::min(options_.reserved_mib, d.total_mib);
    }
    device.total_mib = d.total_mib;
    double busy = 0, used = 0;
    if (auto held = state.holders.find(d.key); held != state.holders.end()) {
      int replica = 0;
      for (const DcgmHolder& h : held->second) {
        const json& pod = *by_uid.at(h.uid);
        DcgmPodOnDevice on;
        on.namespace_name = workload::Metadata(pod).value("namespace", "");
        on.pod = workload::Name(pod);
        on.container = h.container;
        on.vgpu = std::to_string(replica++);
        on.busy_percent = options_.default_busy_percent;
        if (auto range = ParseSimulatedUtilization(StringAnnotation(pod, kSimulatedGpuUtilizationAnnotation))) {
          on.busy_percent = range->low;
          if (range->high > range->low)
            on.busy_percent = std::uniform_real_distribution<double>(range->low, range->high)(state.random);
        }
        on.memory_mib = ParseSimulatedMemoryMib(StringAnnotation(pod, kSimulatedGpuMemoryAnnotation)).value_or(0);
        busy += on.busy_percent;
        used += on.memory_mib;
        device.pods.push_back(std::move(on));
      }
    }
    device.busy_percent = std::min(busy, 100.0);
    device.used_mib = std::min(used, std::max(0.0, d.total_mib - device.reserved_mib));
    gpu_busy[d.key.gpu] += device.busy_percent * d.compute_share;
    devices.push_back(std::move(device));
  }

  // Power follows the busy time; energy integrates it since the last scrape.
  const TimePoint now = cluster_.clock.Now();
  const double seconds = std::max(0.0, std::chrono::duration<double>(now - state.energy_at).count());
  state.energy_at = std::max(state.energy_at, now);
  std::map<int, double> power_of;
  for (const auto& [gpu, busy] : gpu_busy) {
    power_of[gpu] = options_.idle_watts + (options_.busy_watts - options_.idle_watts) * std::min(busy, 100.0) / 100.0;
  }
  std::set<std::string> counted;
  for (DcgmDevice& device : devices) {
    double& energy = state.energy_mj[device.uuid];
    if (counted.insert(device.uuid).second) energy += power_of[device.gpu] * seconds * 1000.0;
    device.power_watts = power_of[device.gpu];
    device.energy_millijoules = energy;
  }
  return RenderDcgmText(node, devices, options_.profile);
}

}  // namespace septa::kubesim
