#include "services/kubesim/service_ips.h"

#include <array>
#include <charconv>

namespace septa::kubesim {

using nlohmann::json;

namespace {

constexpr std::uint32_t kRangeStart = (10u << 24) | (96u << 16);  // 10.96.0.0
constexpr int kRangeBits = 12;
constexpr std::uint32_t kRangeSize = 1u << (32 - kRangeBits);
// Random draws before the allocator walks the range for a free address.
constexpr int kRandomTries = 32;

std::string FormatIpv4(std::uint32_t ip) {
  return std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 0xff) + "." + std::to_string((ip >> 8) & 0xff) +
         "." + std::to_string(ip & 0xff);
}

bool InRange(std::uint32_t ip) { return ip - kRangeStart < kRangeSize; }

// Neither the network address nor the `kubernetes` service's.
bool Allocatable(std::uint32_t ip) { return InRange(ip) && ip - kRangeStart >= 2 && ip - kRangeStart < kRangeSize - 1; }

json& SpecOf(json& service) {
  if (!service.contains("spec") || !service["spec"].is_object()) service["spec"] = json::object();
  return service["spec"];
}

std::string StringAt(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

bool Headless(const json& spec) { return StringAt(spec, "clusterIP") == "None"; }

StatusCause ClusterIpsInvalid(const std::string& ip, const std::string& why) {
  return {"FieldValueInvalid", "Invalid value: []string{\"" + ip + "\"}: " + why, "spec.clusterIPs"};
}

// A port's nodePort, 0 when it has none.
long NodePortOf(const json& port) {
  auto it = port.find("nodePort");
  return it != port.end() && it->is_number_integer() ? it->get<long>() : 0;
}

}  // namespace

std::optional<std::uint32_t> ParseIpv4(std::string_view text) {
  std::uint32_t ip = 0;
  const char* at = text.data();
  const char* end = text.data() + text.size();
  for (int octet = 0; octet < 4; ++octet) {
    if (octet > 0) {
      if (at == end || *at != '.') return std::nullopt;
      ++at;
    }
    unsigned value = 0;
    auto [next, ec] = std::from_chars(at, end, value);
    if (ec != std::errc() || next == at || next - at > 3 || value > 255 || (next - at > 1 && *at == '0')) {
      return std::nullopt;
    }
    ip = (ip << 8) | value;
    at = next;
  }
  if (at != end) return std::nullopt;
  return ip;
}

std::vector<StatusCause> DefaultAndValidateService(json& service) {
  std::vector<StatusCause> causes;
  json& spec = SpecOf(service);
  if (!spec.contains("type")) spec["type"] = "ClusterIP";
  const std::string type = StringAt(spec, "type");
  if (type != "ClusterIP" && type != "NodePort" && type != "LoadBalancer" && type != "ExternalName") {
    causes.push_back({"FieldValueNotSupported",
                      "Unsupported value: \"" + type +
                          "\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\"",
                      "spec.type"});
    return causes;
  }
  if (type == "ExternalName") {
    if (StringAt(spec, "externalName").empty()) {
      causes.push_back({"FieldValueRequired", "Required value", "spec.externalName"});
    }
    return causes;
  }
  if (!spec.contains("sessionAffinity")) spec["sessionAffinity"] = "None";
  if (!spec.contains("ports") || !spec["ports"].is_array() || spec["ports"].empty()) {
    if (!Headless(spec)) causes.push_back({"FieldValueRequired", "Required value", "spec.ports"});
    return causes;
  }
  for (std::size_t i = 0; i < spec["ports"].size(); ++i) {
    json& port = spec["ports"][i];
    const std::string at = "spec.ports[" + std::to_string(i) + "]";
    if (!port.is_object()) {
      causes.push_back({"FieldValueInvalid", "must be an object", at});
      continue;
    }
    auto number = port.find("port");
    if (number == port.end() || !number->is_number_integer() || number->get<long>() < 1 ||
        number->get<long>() > 65535) {
      causes.push_back({"FieldValueInvalid", "must be between 1 and 65535, inclusive", at + ".port"});
      continue;
    }
    if (!port.contains("protocol")) port["protocol"] = "TCP";
    if (!port.contains("targetPort")) port["targetPort"] = *number;
  }
  return causes;
}

std::vector<std::uint32_t> ClusterIpsOf(const json& service) {
  std::vector<std::uint32_t> ips;
  auto spec = service.find("spec");
  if (spec == service.end() || !spec->is_object()) return ips;
  auto list = spec->find("clusterIPs");
  if (list != spec->end() && list->is_array()) {
    for (const json& ip : *list) {
      if (auto parsed = ip.is_string() ? ParseIpv4(ip.get<std::string>()) : std::nullopt) ips.push_back(*parsed);
    }
  } else if (auto parsed = ParseIpv4(StringAt(*spec, "clusterIP"))) {
    ips.push_back(*parsed);
  }
  return ips;
}

std::vector<StatusCause> AllocateClusterIp(json& service, const std::set<std::uint32_t>& used, RandomSource& random) {
  json& spec = SpecOf(service);
  if (StringAt(spec, "type") == "ExternalName") {
    spec.erase("clusterIP");
    spec.erase("clusterIPs");
    return {};
  }
  std::string asked = StringAt(spec, "clusterIP");
  if (asked.empty() && spec.contains("clusterIPs") && spec["clusterIPs"].is_array() && !spec["clusterIPs"].empty() &&
      spec["clusterIPs"][0].is_string()) {
    asked = spec["clusterIPs"][0].get<std::string>();
  }
  if (asked == "None") {
    spec["clusterIP"] = "None";
    spec["clusterIPs"] = json::array({"None"});
    return {};
  }
  std::uint32_t chosen = 0;
  if (!asked.empty()) {
    const auto ip = ParseIpv4(asked);
    if (!ip) return {ClusterIpsInvalid(asked, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")};
    if (!Allocatable(*ip)) {
      return {ClusterIpsInvalid(asked, "failed to allocate IP " + asked + ": the provided IP (" + asked +
                                           ") is not in the valid range. The range of valid IPs is " +
                                           std::string(kServiceCidr))};
    }
    if (used.contains(*ip)) {
      return {ClusterIpsInvalid(asked, "failed to allocate IP " + asked + ": provided IP is already allocated")};
    }
    chosen = *ip;
  } else {
    for (int attempt = 0; attempt < kRandomTries && chosen == 0; ++attempt) {
      std::array<std::uint8_t, 4> b{};
      if (Status filled = random.Fill(b); !filled.ok()) break;
      const std::uint32_t offset = ((std::uint32_t{b[0]} << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) % kRangeSize;
      if (Allocatable(kRangeStart + offset) && !used.contains(kRangeStart + offset)) chosen = kRangeStart + offset;
    }
    for (std::uint32_t offset = 2; chosen == 0 && offset < kRangeSize - 1; ++offset) {
      if (!used.contains(kRangeStart + offset)) chosen = kRangeStart + offset;
    }
    if (chosen == 0) {
      return {{"FieldValueInvalid", "failed to allocate a serviceIP: range is full", "spec.clusterIPs"}};
    }
  }
  spec["clusterIP"] = FormatIpv4(chosen);
  spec["clusterIPs"] = json::array({FormatIpv4(chosen)});
  spec["ipFamilies"] = json::array({"IPv4"});
  spec["ipFamilyPolicy"] = "SingleStack";
  return {};
}

std::vector<StatusCause> KeepAllocatedServiceValues(const json& current, json& proposed) {
  std::vector<StatusCause> causes;
  const json& old_spec = current.contains("spec") && current["spec"].is_object() ? current["spec"] : json::object();
  json& spec = SpecOf(proposed);
  const std::string old_ip = StringAt(old_spec, "clusterIP");
  const std::string new_ip = StringAt(spec, "clusterIP");
  if (StringAt(spec, "type") != "ExternalName" && !old_ip.empty()) {
    if (new_ip.empty()) {
      spec["clusterIP"] = old_ip;
      if (old_spec.contains("clusterIPs")) spec["clusterIPs"] = old_spec["clusterIPs"];
      for (const char* family : {"ipFamilies", "ipFamilyPolicy"}) {
        if (old_spec.contains(family) && !spec.contains(family)) spec[family] = old_spec[family];
      }
    } else if (new_ip != old_ip) {
      causes.push_back({"FieldValueInvalid", "Invalid value: []string{\"" + new_ip + "\"}: may not change once set",
                        "spec.clusterIPs[0]"});
    }
  }
  // Node ports, by the port's number: kept when the update leaves them out.
  if (!spec.contains("ports") || !spec["ports"].is_array() || !old_spec.contains("ports")) return causes;
  for (json& port : spec["ports"]) {
    if (!port.is_object() || NodePortOf(port) != 0) continue;
    for (const json& before : old_spec["ports"]) {
      if (before.is_object() && before.value("port", json()) == port.value("port", json()) && NodePortOf(before) != 0) {
        port["nodePort"] = before["nodePort"];
      }
    }
  }
  return causes;
}

std::vector<StatusCause> ReallocateOnTypeChange(const json& current, json& proposed,
                                                const std::set<std::uint32_t>& used, RandomSource& random) {
  const json& old_spec = current.contains("spec") && current["spec"].is_object() ? current["spec"] : json::object();
  json& spec = SpecOf(proposed);
  const bool was_external = StringAt(old_spec, "type") == "ExternalName";
  const bool is_external = StringAt(spec, "type") == "ExternalName";
  if (is_external && !was_external) {
    for (const char* field : {"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"}) spec.erase(field);
    return {};
  }
  if (was_external && !is_external) return AllocateClusterIp(proposed, used, random);
  return {};
}

}  // namespace septa::kubesim
