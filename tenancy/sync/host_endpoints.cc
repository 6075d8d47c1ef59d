#include "tenancy/sync/host_endpoints.h"

#include "tenancy/sync/bookkeeping.h"
#include "tenancy/sync/host_keys.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

Status Malformed(const std::string& field, const std::string& what) {
  return Status(Code::kInvalidArgument, "Endpoints " + field + ": " + what);
}

// One list of addresses (`field`: "subsets[i].addresses") as the host has it.
Result<std::variant<json, Refusal>> HostAddresses(const VirtualClusterView& vcluster, const json& addresses,
                                                  const std::string& field,
                                                  const std::map<std::string, std::string>& host_pods_by_ip) {
  json out = json::array();
  if (addresses.is_null()) return std::variant<json, Refusal>(out);
  if (!addresses.is_array()) return Malformed(field, "not a list");
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    const std::string at = field + "[" + std::to_string(i) + "]";
    const json& address = addresses[i];
    if (!address.is_object() || !address.contains("ip") || !address["ip"].is_string()) {
      return Malformed(at + ".ip", "missing");
    }
    const std::string ip = address["ip"];
    auto pod = host_pods_by_ip.find(ip);
    if (pod == host_pods_by_ip.end()) {
      return std::variant<json, Refusal>(
          Refusal{at + ".ip", ip + " is not the address of a live pod of this virtual cluster (one that has "
                                   "finished or is being deleted gives its address back): a host service may lead "
                                   "to the tenant's own pods only (CVE-2021-25740); use an ExternalName service "
                                   "for an address outside the cluster"});
    }
    json host_address = {
        {"ip", ip}, {"targetRef", {{"kind", "Pod"}, {"namespace", vcluster.host_namespace}, {"name", pod->second}}}};
    if (auto hostname = address.find("hostname"); hostname != address.end() && hostname->is_string()) {
      host_address["hostname"] = *hostname;
    }
    out.push_back(std::move(host_address));
  }
  return std::variant<json, Refusal>(out);
}

}  // namespace

bool HasTenantEndpoints(const json& virtual_service) {
  const json spec = virtual_service.is_object() ? virtual_service.value("spec", json::object()) : json::object();
  if (!spec.is_object() || spec.value("type", "") == "ExternalName") return false;
  auto selector = spec.find("selector");
  return selector == spec.end() || !selector->is_object() || selector->empty();
}

Result<HostEndpointsResult> HostEndpoints(const VirtualClusterView& vcluster, const json& virtual_endpoints,
                                          const std::map<std::string, std::string>& host_pods_by_ip) {
  const json meta =
      virtual_endpoints.is_object() ? virtual_endpoints.value("metadata", json::object()) : json::object();
  for (const char* field : {"name", "namespace", "uid"}) {
    if (!meta.contains(field) || !meta[field].is_string() || meta[field].get<std::string>().empty())
      return Malformed(std::string("metadata.") + field, "missing (a virtual object has one)");
  }
  if (auto refusal = CheckTenantKeys(meta, vcluster.integration_domains)) return HostEndpointsResult(*refusal);
  const json subsets = virtual_endpoints.value("subsets", json::array());
  if (!subsets.is_array() && !subsets.is_null()) return Malformed("subsets", "not a list");
  json host_subsets = json::array();
  for (std::size_t i = 0; subsets.is_array() && i < subsets.size(); ++i) {
    const std::string at = "subsets[" + std::to_string(i) + "]";
    if (!subsets[i].is_object()) return Malformed(at, "not an object");
    json host_subset = json::object();
    for (const char* list : {"addresses", "notReadyAddresses"}) {
      auto addresses = HostAddresses(vcluster, subsets[i].value(list, json(nullptr)), at + "." + list, host_pods_by_ip);
      if (!addresses.ok()) return addresses.status();
      if (auto* refusal = std::get_if<Refusal>(&*addresses)) return HostEndpointsResult(*refusal);
      if (!std::get<json>(*addresses).empty()) host_subset[list] = std::get<json>(*std::move(addresses));
    }
    json ports = json::array();
    for (const json& port : subsets[i].value("ports", json::array())) {
      if (!port.is_object()) return Malformed(at + ".ports", "not a list of objects");
      json host_port = port;
      if (!host_port.contains("protocol")) host_port["protocol"] = "TCP";
      ports.push_back(std::move(host_port));
    }
    if (!ports.empty()) host_subset["ports"] = std::move(ports);
    host_subsets.push_back(std::move(host_subset));
  }
  json host = {
      {"apiVersion", "v1"},
      {"kind", std::string(kEndpointsKind)},
      {"metadata", HostMetadata(kEndpointsKind, meta, vcluster.tenant, vcluster.vcluster, vcluster.host_namespace,
                                vcluster.integration_domains, {"kubectl.kubernetes.io/last-applied-configuration"})}};
  if (!host_subsets.empty()) host["subsets"] = std::move(host_subsets);
  return HostEndpointsResult(std::move(host));
}

bool HoldsItsIp(const json& host_pod) {
  const std::string phase = StringField(host_pod, "status", "phase");
  return phase != "Succeeded" && phase != "Failed" && !Deleting(host_pod);
}

std::map<std::string, std::string> LivePodIps(const std::vector<json>& host_pods) {
  std::map<std::string, std::string> ips;
  for (const json& pod : host_pods) {
    if (!HoldsItsIp(pod)) continue;
    const std::string name = MetadataField(pod, "name");
    const std::string ip = StringField(pod, "status", "podIP");
    if (!ip.empty()) ips.emplace(ip, name);
    const json status = pod.value("status", json::object());
    const json listed = status.is_object() ? status.value("podIPs", json::array()) : json::array();
    for (const json& entry : listed.is_array() ? listed : json::array()) {
      if (entry.is_object() && entry.value("ip", json()).is_string()) ips.emplace(entry["ip"].get<std::string>(), name);
    }
  }
  return ips;
}

std::set<std::string> PodsNamedBy(const json& host_endpoints) {
  std::set<std::string> pods;
  const json subsets = host_endpoints.is_object() ? host_endpoints.value("subsets", json::array()) : json::array();
  for (const json& subset : subsets.is_array() ? subsets : json::array()) {
    for (const char* list : {"addresses", "notReadyAddresses"}) {
      const json addresses = subset.is_object() ? subset.value(list, json::array()) : json::array();
      for (const json& address : addresses.is_array() ? addresses : json::array()) {
        const json ref = address.is_object() ? address.value("targetRef", json::object()) : json::object();
        if (ref.is_object() && ref.value("name", json()).is_string()) pods.insert(ref["name"].get<std::string>());
      }
    }
  }
  return pods;
}

bool EndpointsUpToDate(const json& want, const json& host_endpoints) {
  if (!LabelsAndAnnotationsEqual(want, host_endpoints)) return false;
  return ComparedField(want, "subsets") == ComparedField(host_endpoints, "subsets");
}

}  // namespace septa::tenancy::sync
