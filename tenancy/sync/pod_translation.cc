// TranslatePodDown: the rules of ../shared/docs/SYNCER-FACTS.md "What
// changes in a pod on the way down", in order: refuse what the tier does not
// allow, place, then write the host pod.
#include "tenancy/sync/pod_translation.h"

#include <algorithm>
#include <set>

#include "common/ip_address.h"
#include "tenancy/host/names.h"
#include "tenancy/sync/bookkeeping.h"
#include "tenancy/sync/gangs.h"
#include "tenancy/sync/gpu_request.h"
#include "tenancy/sync/placement.h"
#include "tenancy/sync/pod_affinity.h"
#include "tenancy/sync/pod_policy.h"
#include "tenancy/sync/pod_references.h"
#include "tenancy/sync/tier_patches.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

constexpr const char* kTokenVolume = "septa-sa-token";
constexpr std::int64_t kDefaultTokenSeconds = 3607;  // kube-apiserver's default for projected tokens
constexpr std::int64_t kMinTokenSeconds = 600;       // TokenRequest's minimum

// The pod's hostname: its virtual name as a DNS label (SYNCER-FACTS).
std::string Hostname(const std::string& name) {
  std::string out = name.substr(0, 63);
  std::replace(out.begin(), out.end(), '.', '-');
  if (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

json Metadata(const VirtualClusterView& vcluster, const json& virtual_pod) {
  const json& meta = virtual_pod.at("metadata");
  // The tenant's GPU inputs are read here, not handed to the host.
  json out = HostMetadata(
      "Pod", meta, vcluster.tenant, vcluster.vcluster, vcluster.host_namespace, vcluster.integration_domains,
      {std::string(kMigProfileAnnotation), std::string(kGpuFractionAnnotation), std::string(kGpuMemoryAnnotation)});
  const json& spec = virtual_pod.at("spec");
  json& annotations = out["annotations"];
  annotations[std::string(kVirtualLabelsAnnotation)] = DownwardLabels(meta.value("labels", json::object()));
  annotations[std::string(kVirtualServiceAccountAnnotation)] = spec.value("serviceAccountName", "default");
  if (meta.contains("ownerReferences"))
    annotations[std::string(kOwnerReferencesAnnotation)] = meta["ownerReferences"].dump();
  std::set<std::string> gates;
  for (const json& gate : spec.value("schedulingGates", json::array())) gates.insert(gate.value("name", ""));
  if (!gates.empty()) annotations[std::string(kCopiedGatesAnnotation)] = JoinCopiedKeys(gates);
  return out;
}

// KUBERNETES_SERVICE_* and KUBERNETES_PORT* point at the virtual API server;
// a variable the container sets itself wins.
void PointAtVirtualApi(json& spec, const SyncSettings& settings) {
  const std::string host = settings.virtual_api_host;
  const std::string port = std::to_string(settings.virtual_api_port);
  const std::string url = "tcp://" + host + ":" + port;
  const std::string prefix = "KUBERNETES_PORT_" + port + "_TCP";
  const std::vector<std::pair<std::string, std::string>> vars = {{"KUBERNETES_SERVICE_HOST", host},
                                                                 {"KUBERNETES_SERVICE_PORT", port},
                                                                 {"KUBERNETES_SERVICE_PORT_HTTPS", port},
                                                                 {"KUBERNETES_PORT", url},
                                                                 {prefix, url},
                                                                 {prefix + "_PROTO", "tcp"},
                                                                 {prefix + "_PORT", port},
                                                                 {prefix + "_ADDR", host}};
  ForEachContainer(spec, [&vars](std::string_view, std::size_t, json& container) {
    std::set<std::string> own;
    for (const json& var : container.value("env", json::array())) own.insert(var.value("name", ""));
    json env = json::array();
    for (const auto& [name, value] : vars) {
      if (!own.contains(name)) env.push_back({{"name", name}, {"value", value}});
    }
    // Ours first, so that the container's own $(KUBERNETES_...) references resolve.
    for (const json& var : container.value("env", json::array())) env.push_back(var);
    container["env"] = std::move(env);
  });
  if (!IsIpAddress(host)) return;  // hostAliases take IP addresses only
  json hostnames = {"kubernetes", "kubernetes.default", "kubernetes.default.svc",
                    "kubernetes.default.svc." + settings.cluster_domain};
  spec["hostAliases"].push_back({{"ip", host}, {"hostnames", hostnames}});
}

void RewriteDns(json& spec, const SyncSettings& settings, const std::string& ns) {
  const std::string policy = spec.value("dnsPolicy", "ClusterFirst");
  if (settings.dns_nameserver.empty() || (policy != "ClusterFirst" && policy != "ClusterFirstWithHostNet")) return;
  const json own = spec.value("dnsConfig", json::object());
  const std::string& domain = settings.cluster_domain;
  json nameservers = json::array({settings.dns_nameserver});
  json searches = {ns + ".svc." + domain, "svc." + domain, domain};
  json options = json::array();
  bool ndots = false;
  for (const json& n : own.value("nameservers", json::array())) nameservers.push_back(n);
  for (const json& s : own.value("searches", json::array())) searches.push_back(s);
  for (const json& o : own.value("options", json::array())) ndots = ndots || o.value("name", "") == "ndots";
  if (!ndots) options.push_back({{"name", "ndots"}, {"value", "5"}});
  for (const json& o : own.value("options", json::array())) options.push_back(o);
  spec["dnsPolicy"] = "None";
  spec["dnsConfig"] = {{"nameservers", nameservers}, {"searches", searches}, {"options", options}};
}

// The virtual pod's serviceAccountToken projections and the token volume
// older Kubernetes' admission added (IsLegacyTokenVolume: same keys) read
// the token Secret instead; without either, the Secret is mounted into
// every container.
void MountToken(json& spec, const json& virtual_pod, const std::string& secret) {
  bool replaced = false;
  std::set<std::string> legacy;
  const json& virtual_spec = virtual_pod.at("spec");
  for (const json& volume : virtual_spec.value("volumes", json::array())) {
    if (IsLegacyTokenVolume(virtual_spec, volume)) legacy.insert(volume.value("name", ""));
  }
  json no_volumes = json::array();
  for (json& volume : spec.contains("volumes") ? spec["volumes"] : no_volumes) {
    if (legacy.contains(volume.value("name", ""))) {
      volume["secret"]["secretName"] = secret;
      replaced = true;
    }
    if (!volume.contains("projected") || !volume["projected"].contains("sources")) continue;
    for (json& source : volume["projected"]["sources"]) {
      if (!source.contains("serviceAccountToken")) continue;
      const std::string path = source["serviceAccountToken"].value("path", "token");
      source = {{"secret", {{"name", secret}, {"items", json::array({{{"key", "token"}, {"path", path}}})}}}};
      replaced = true;
    }
  }
  if (replaced || !MountsServiceAccountToken(virtual_pod)) return;
  spec["volumes"].push_back({{"name", kTokenVolume}, {"secret", {{"secretName", secret}, {"defaultMode", 420}}}});
  ForEachContainer(spec, [](std::string_view list, std::size_t, json& container) {
    if (list == "ephemeralContainers") return;
    for (const json& mount : container.value("volumeMounts", json::array())) {
      if (mount.value("mountPath", "") == kServiceAccountMountPath) return;  // the container mounts its own
    }
    container["volumeMounts"].push_back(
        {{"name", kTokenVolume}, {"mountPath", std::string(kServiceAccountMountPath)}, {"readOnly", true}});
  });
}

}  // namespace

std::string TokenSecretName(std::string_view virtual_pod_uid) {
  return "septa-sa-token-" + std::string(virtual_pod_uid);
}

bool MountsServiceAccountToken(const json& virtual_pod) {
  const json spec = virtual_pod.value("spec", json::object());
  if (spec.value("automountServiceAccountToken", true)) return true;
  // Opted out of the automatic mount; an explicit projection still asks for a token.
  for (const json& volume : spec.value("volumes", json::array())) {
    for (const json& source : volume.value("projected", json::object()).value("sources", json::array())) {
      if (source.contains("serviceAccountToken")) return true;
    }
  }
  return false;
}

std::optional<std::int64_t> RequestedTokenExpiration(const json& virtual_pod) {
  const json spec = virtual_pod.value("spec", json::object());
  for (const json& volume : spec.value("volumes", json::array())) {
    for (const json& source : volume.value("projected", json::object()).value("sources", json::array())) {
      const json token = source.value("serviceAccountToken", json::object());
      if (token.contains("expirationSeconds") && token["expirationSeconds"].is_number_integer())
        return token["expirationSeconds"].get<std::int64_t>();
    }
  }
  return std::nullopt;
}

std::int64_t TokenExpirationSeconds(std::optional<std::int64_t> requested, const TrustTier& tier) {
  std::int64_t seconds = std::max(requested.value_or(kDefaultTokenSeconds), kMinTokenSeconds);
  if (tier.credential_ttl_max_seconds > 0) seconds = std::min(seconds, tier.credential_ttl_max_seconds);
  return seconds;
}

namespace {

std::variant<HostPod, Refusal> Translate(const SyncSettings& settings, const VirtualClusterView& vcluster,
                                         const json& virtual_pod, const std::vector<PodAssignment>& others) {
  const json meta = virtual_pod.value("metadata", json::object());
  const std::string name = meta.value("name", "");
  const std::string ns = meta.value("namespace", "");
  if (name.empty() || ns.empty() || meta.value("uid", "").empty()) {
    return Refusal{"metadata", "a pod needs a name, a namespace and a UID"};
  }
  if (!virtual_pod.contains("spec") || !virtual_pod["spec"].is_object()) return Refusal{"spec", "missing"};
  if (auto refusal = CheckHostKeys(virtual_pod, vcluster)) return *refusal;
  if (auto refusal = CheckPodSecurity(virtual_pod, vcluster.psa_level)) return *refusal;
  if (auto refusal = CheckUnrenamedSources(virtual_pod["spec"])) return *refusal;
  // The reservation decides the node; a virtual node name means nothing on
  // the host, and dropping it would run the pod elsewhere than it asked.
  if (!StringField(virtual_pod, "spec", "nodeName").empty()) {
    return Refusal{"spec.nodeName", "the host places the pod inside the reservation; a pod may not name its node"};
  }
  const auto gang = GangOf(settings, virtual_pod);
  if (auto* refusal = std::get_if<Refusal>(&gang)) return *refusal;
  auto ask = ReadGpuAsk(virtual_pod, vcluster, settings);
  if (auto* refusal = std::get_if<Refusal>(&ask)) return *refusal;
  const GpuAsk& gpus = std::get<GpuAsk>(ask);
  auto requests = EffectiveRequests(virtual_pod);
  if (auto* refusal = std::get_if<Refusal>(&requests)) return *refusal;
  auto placed = PlaceInReservation(vcluster, gpus, std::get<PodResources>(requests), others);
  if (auto* refusal = std::get_if<Refusal>(&placed)) return *refusal;
  const PodAssignment& assignment = std::get<PodAssignment>(placed);

  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", Metadata(vcluster, virtual_pod)}};
  pod["spec"] = virtual_pod["spec"];
  json& spec = pod["spec"];
  // Virtual nodes and priority classes mean nothing on the host.
  for (const char* key : {"nodeName", "priorityClassName", "priority", "preemptionPolicy", "subdomain",
                          "serviceAccount", "schedulerName"}) {
    spec.erase(key);
  }
  if (auto tolerations = spec.find("tolerations"); tolerations != spec.end() && tolerations->is_array()) {
    json kept = json::array();
    for (const json& t : *tolerations) {
      if (t.is_object() && TenantMayTolerate(t.value("key", ""))) kept.push_back(t);
    }
    if (kept.empty()) {
      spec.erase("tolerations");
    } else {
      *tolerations = std::move(kept);
    }
  }
  if (!spec.contains("hostname")) spec["hostname"] = Hostname(name);
  spec["serviceAccountName"] = std::string(host::kWorkloadServiceAccountName);
  spec["automountServiceAccountToken"] = false;
  spec["enableServiceLinks"] = false;
  if (auto refusal = ScopePodAffinity(spec, ns, vcluster.host_namespace)) return *refusal;
  RenameReferences(spec, name, ns, vcluster.vcluster);
  RewriteDownwardApi(spec);
  MountToken(spec, virtual_pod, TokenSecretName(meta.value("uid", "")));
  PointAtVirtualApi(spec, settings);
  RewriteDns(spec, settings, ns);
  ApplyTierPatches(pod, settings, vcluster, gpus, assignment);
  if (auto* member = std::get_if<Gang>(&gang)) PatchGang(pod, settings, vcluster, ns, *member);
  if (!assignment.node.empty())
    pod["metadata"]["annotations"][std::string(kAssignmentAnnotation)] = AssignmentText(assignment);
  return HostPod{std::move(pod), assignment};
}

}  // namespace

std::variant<HostPod, Refusal> TranslatePodDown(const SyncSettings& settings, const VirtualClusterView& vcluster,
                                                const json& virtual_pod, const std::vector<PodAssignment>& others) {
  if (!virtual_pod.is_object()) return Refusal{"", "a pod is a JSON object"};
  try {
    return Translate(settings, vcluster, virtual_pod, others);
  } catch (const json::exception& e) {
    // The virtual API server validated the pod; a field of the wrong type
    // here is refused rather than taking the syncer down.
    return Refusal{"", std::string("malformed pod: ") + e.what()};
  }
}

}  // namespace septa::tenancy::sync
