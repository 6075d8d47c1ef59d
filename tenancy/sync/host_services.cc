#include "tenancy/sync/host_services.h"

#include <cctype>
#include <string>
#include <vector>

#include "tenancy/sync/bookkeeping.h"
#include "tenancy/sync/host_keys.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

// The spec fields a host copy takes from its virtual service as they are.
constexpr const char* kCopiedSpecFields[] = {"type",
                                             "sessionAffinity",
                                             "sessionAffinityConfig",
                                             "publishNotReadyAddresses",
                                             "externalName",
                                             "externalTrafficPolicy",
                                             "internalTrafficPolicy",
                                             "loadBalancerSourceRanges",
                                             "loadBalancerClass",
                                             "allocateLoadBalancerNodePorts"};

std::string TypeOf(const json& spec) {
  const std::string type = spec.value("type", "");
  return type.empty() ? "ClusterIP" : type;
}

// A port as the host copy has it: no node port (the host allocates its
// own), and the API server's defaults written out, so a copy read back
// compares equal to the one written.
json HostPort(const json& port) {
  json out = port;
  out.erase("nodePort");
  if (!out.contains("protocol")) out["protocol"] = "TCP";
  if (!out.contains("targetPort") && out.contains("port")) out["targetPort"] = out["port"];
  return out;
}

json HostPorts(const json& spec) {
  json ports = json::array();
  auto it = spec.find("ports");
  if (it == spec.end() || !it->is_array()) return ports;
  for (const json& port : *it) ports.push_back(port.is_object() ? HostPort(port) : port);
  return ports;
}

bool Headless(const json& spec) { return spec.value("clusterIP", "") == "None"; }

// The address a service holds: "" for none yet, headless and ExternalName.
std::string AddressOf(const json& service) {
  const json spec = SpecOf(service);
  const std::string ip = spec.value("clusterIP", "");
  return ip == "None" || TypeOf(spec) == "ExternalName" ? "" : ip;
}

// A name the host's cluster DNS answers: <service>.<namespace>.svc[...],
// <ip>.<namespace>.pod[...], or anything under cluster.local.
bool NamesInClusterName(std::string target) {
  for (char& c : target) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  while (!target.empty() && target.back() == '.') target.pop_back();
  if (target == "cluster.local" || target.ends_with(".cluster.local")) return true;
  std::vector<std::string> labels;
  for (std::size_t start = 0; start <= target.size();) {
    const std::size_t end = std::min(target.find('.', start), target.size());
    labels.push_back(target.substr(start, end - start));
    start = end + 1;
  }
  return labels.size() >= 3 && (labels[2] == "svc" || labels[2] == "pod");
}

}  // namespace

Result<HostServiceResult> HostService(const VirtualClusterView& vcluster, const json& virtual_service) {
  const json meta = virtual_service.is_object() ? virtual_service.value("metadata", json::object()) : json::object();
  for (const char* field : {"name", "namespace", "uid"}) {
    if (!meta.contains(field) || !meta[field].is_string() || meta[field].get<std::string>().empty())
      return Status(Code::kInvalidArgument,
                    std::string("Service metadata.") + field + ": missing (a virtual object has one)");
  }
  if (auto refusal = CheckTenantKeys(meta, vcluster.integration_domains)) return HostServiceResult(*refusal);
  const json spec = SpecOf(virtual_service);
  if (auto ips = spec.find("externalIPs"); ips != spec.end() && ips->is_array() && !ips->empty()) {
    return HostServiceResult(
        Refusal{"spec.externalIPs",
                "a virtual cluster's service may not claim external IPs: on the host they would capture traffic "
                "to those addresses from every namespace (CVE-2020-8554)"});
  }
  if (TypeOf(spec) == "ExternalName" && NamesInClusterName(spec.value("externalName", ""))) {
    return HostServiceResult(
        Refusal{"spec.externalName",
                "on the host, " + spec.value("externalName", std::string()) +
                    " would name the host cluster's own services, not the virtual cluster's; an ExternalName "
                    "service may name a name outside the cluster"});
  }
  if (const std::string type = TypeOf(spec);
      (type == "NodePort" || type == "LoadBalancer") && !vcluster.external_services) {
    return HostServiceResult(Refusal{
        "spec.type", type + " opens ports on every host node or a load balancer to the outside, which trust tier " +
                         vcluster.tier.name +
                         " does not allow (an admin allows it with external_service_tiers); ClusterIP works"});
  }
  json host_spec = json::object();
  for (const char* field : kCopiedSpecFields) {
    if (spec.contains(field) && !spec[field].is_null()) host_spec[field] = spec[field];
  }
  host_spec["type"] = TypeOf(spec);
  if (host_spec["type"] != "ExternalName") host_spec["ports"] = HostPorts(spec);
  if (Headless(spec)) host_spec["clusterIP"] = "None";
  if (auto selector = spec.find("selector"); selector != spec.end() && selector->is_object() && !selector->empty()) {
    json host_selector = *selector;
    host_selector[std::string(kTenantLabel)] = vcluster.tenant;
    host_selector[std::string(kVclusterLabel)] = vcluster.vcluster;
    host_selector[std::string(kVirtualNamespaceLabel)] = meta["namespace"];
    host_spec["selector"] = std::move(host_selector);
  }
  return HostServiceResult(json{
      {"apiVersion", "v1"},
      {"kind", std::string(kServiceKind)},
      {"metadata", HostMetadata(kServiceKind, meta, vcluster.tenant, vcluster.vcluster, vcluster.host_namespace,
                                vcluster.integration_domains, {"kubectl.kubernetes.io/last-applied-configuration"})},
      {"spec", std::move(host_spec)}});
}

bool ServiceUpToDate(const json& want, const json& host_service) {
  if (!LabelsAndAnnotationsEqual(want, host_service)) return false;
  const json want_spec = SpecOf(want);
  const json host_spec = SpecOf(host_service);
  for (const char* field : kCopiedSpecFields) {
    if (std::string_view(field) == "type" || std::string_view(field) == "sessionAffinity") continue;
    if (ComparedField(want_spec, field) != ComparedField(host_spec, field)) return false;
  }
  if (TypeOf(want_spec) != TypeOf(host_spec)) return false;
  if (want_spec.value("sessionAffinity", "None") != host_spec.value("sessionAffinity", "None")) return false;
  if (ComparedField(want_spec, "selector") != ComparedField(host_spec, "selector")) return false;
  return TypeOf(want_spec) == "ExternalName" || HostPorts(want_spec) == HostPorts(host_spec);
}

bool ServiceUpdatableInPlace(const json& want, const json& host_service) {
  const json want_spec = SpecOf(want), host_spec = SpecOf(host_service);
  return Headless(want_spec) == Headless(host_spec) &&
         (TypeOf(want_spec) == "ExternalName") == (TypeOf(host_spec) == "ExternalName");
}

std::optional<json> VirtualServiceWithHostIp(const json& virtual_service, const json& host_service) {
  const std::string host_ip = AddressOf(host_service);
  const json spec = SpecOf(virtual_service);
  if (host_ip.empty() || Headless(spec) || TypeOf(spec) == "ExternalName") return std::nullopt;
  if (spec.value("clusterIP", "") == host_ip) return std::nullopt;
  json readdressed = virtual_service;
  readdressed["spec"]["clusterIP"] = host_ip;
  readdressed["spec"]["clusterIPs"] = json::array({host_ip});
  readdressed.erase("status");
  if (!readdressed.contains("apiVersion")) readdressed["apiVersion"] = "v1";
  if (!readdressed.contains("kind")) readdressed["kind"] = std::string(kServiceKind);
  return readdressed;
}

bool Readdressing(const json& virtual_service) {
  const json spec = SpecOf(virtual_service);
  return TypeOf(spec) == "ExternalName" && spec.value("externalName", "") == kReaddressingExternalName;
}

json ReleasedService(const json& virtual_service) {
  json released = virtual_service;
  json& spec = released["spec"];
  // What an API server refuses or drops on an ExternalName service; the
  // second update brings it back from the record.
  for (const char* field :
       {"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy", "sessionAffinity", "sessionAffinityConfig",
        "externalTrafficPolicy", "internalTrafficPolicy", "healthCheckNodePort", "loadBalancerIP",
        "loadBalancerSourceRanges", "loadBalancerClass", "allocateLoadBalancerNodePorts"}) {
    spec.erase(field);
  }
  if (auto ports = spec.find("ports"); ports != spec.end() && ports->is_array()) {
    for (json& port : *ports) {
      if (port.is_object()) port.erase("nodePort");
    }
  }
  spec["type"] = "ExternalName";
  spec["externalName"] = std::string(kReaddressingExternalName);
  released.erase("status");
  return released;
}

std::optional<json> ServiceStatusUp(const json& virtual_service, const json& host_service) {
  const json host_status = host_service.value("status", json::object());
  const json virtual_status = virtual_service.value("status", json::object());
  if (ComparedField(host_status, "loadBalancer") == ComparedField(virtual_status, "loadBalancer")) return std::nullopt;
  json status = virtual_status.is_object() ? virtual_status : json::object();
  if (auto lb = ComparedField(host_status, "loadBalancer"); lb.is_null()) {
    status.erase("loadBalancer");
  } else {
    status["loadBalancer"] = std::move(lb);
  }
  return status;
}

}  // namespace septa::tenancy::sync
