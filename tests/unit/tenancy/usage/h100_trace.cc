#include "tests/unit/tenancy/usage/h100_trace.h"

#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/text.h"

namespace septa::tenancy::usage::test {

std::string SharedPath(std::string_view relative) {
  return std::string(SEPTA_SHARED_DIR) + "/" + std::string(relative);
}

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + path + " (the shared folder beside the repository)");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

namespace {

Result<double> Number(std::string_view token) {
  double value = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc() || end != token.data() + token.size()) {
    return InvalidArgument("not a number in the GPM trace: \"" + std::string(token) + "\"");
  }
  return value;
}

std::string FormatNumber(double value) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, end) : "NaN";
}

}  // namespace

Result<GpmTrace> ParseGpmTrace(std::string_view usage_facts) {
  constexpr std::string_view kIntro = "GPM graphics per second (the trace for golden tests):";
  const std::size_t start = usage_facts.find(kIntro);
  if (start == std::string_view::npos) return NotFound("USAGE-FACTS has no line \"" + std::string(kIntro) + "\"");
  const std::size_t end = usage_facts.find("Energy counter", start);
  if (end == std::string_view::npos) return NotFound("the GPM trace of USAGE-FACTS does not end as expected");
  GpmTrace trace;
  bool after = false;
  std::istringstream tokens(std::string(usage_facts.substr(start + kIntro.size(), end - start - kIntro.size())));
  for (std::string token; tokens >> token;) {
    if (token == "|") {
      after = true;
      continue;
    }
    if (token.ends_with('.')) token.pop_back();  // "0." ends the sentence
    SEPTA_ASSIGN_OR_RETURN(const double value, Number(token));
    (after ? trace.after_percent : trace.cycles_percent).push_back(value);
  }
  if (trace.cycles_percent.empty() || trace.cycles_percent.size() % 6 != 0) {
    return InvalidArgument(
        "the GPM trace's cycles are not whole 6 s cycles: " + std::to_string(trace.cycles_percent.size()) + " values");
  }
  return trace;
}

Result<H100Recording> ReadH100Recording(const std::string& json_path, const std::string& query_csv_path) {
  SEPTA_ASSIGN_OR_RETURN(const std::string json_text, ReadWholeFile(json_path));
  SEPTA_ASSIGN_OR_RETURN(const std::string csv_text, ReadWholeFile(query_csv_path));
  const nlohmann::json json = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return InvalidArgument(json_path + " is not a JSON object");
  H100Recording out;
  try {
    out.name = json.at("name").get<std::string>();
    out.uuid = json.at("uuid").get<std::string>();
    out.driver = json.at("driver").get<std::string>();
    out.memory_total_mib = json.at("memory_total_mib").get<double>();
    for (const auto& sample : json.at("samples")) {
      out.samples.push_back({.t_s = sample.at("t").get<double>(),
                             .gpu_util_percent = sample.at("gpu_util").get<double>(),
                             .fb_used_mib = sample.at("fb_used_mib").get<double>(),
                             .power_w = sample.at("power_w").get<double>()});
    }
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(json_path + ": " + e.what());
  }
  // "name, uuid, memory.total [MiB], mig.mode.current, mig.mode.pending, pci.bus_id, ..." and one row.
  const std::vector<std::string> lines = Split(csv_text, '\n');
  if (lines.size() < 2) return InvalidArgument(query_csv_path + " has no row");
  const std::vector<std::string> header = Split(lines[0], ',');
  const std::vector<std::string> row = Split(lines[1], ',');
  for (std::size_t i = 0; i < header.size() && i < row.size(); ++i) {
    const auto trim = [](std::string s) {
      s.erase(0, s.find_first_not_of(' '));
      s.erase(s.find_last_not_of(' ') + 1);
      return s;
    };
    if (trim(header[i]) == "pci.bus_id") out.pci_bus_id = trim(row[i]);
  }
  if (out.pci_bus_id.empty()) return InvalidArgument(query_csv_path + " has no pci.bus_id");
  return out;
}

std::string RenderSeries(const H100Recording& gpu, std::string_view node, std::string_view metric, double value,
                         const RenderedPod* pod) {
  std::string line = std::string(metric) + "{gpu=\"0\",UUID=\"" + gpu.uuid + "\",pci_bus_id=\"" + gpu.pci_bus_id +
                     "\",device=\"nvidia0\",modelName=\"" + gpu.name + "\",hostname=\"" + std::string(node) +
                     "\",DCGM_FI_DRIVER_VERSION=\"" + gpu.driver + "\"";
  if (pod != nullptr) {
    line += ",container=\"main\",namespace=\"" + pod->namespace_name + "\",pod=\"" + pod->pod + "\"";
    if (!pod->vgpu.empty()) line += ",vgpu=\"" + pod->vgpu + "\"";
  }
  return line + "} " + FormatNumber(value) + "\n";
}

std::string RenderFamily(std::string_view metric, std::string_view type, std::string_view help) {
  return "# HELP " + std::string(metric) + " " + std::string(help) + "\n# TYPE " + std::string(metric) + " " +
         std::string(type) + "\n";
}

}  // namespace septa::tenancy::usage::test
