#include "tenancy/host/config.h"

#include <string>

#include "common/text.h"

namespace septa::tenancy::host {

namespace {

bool IsPsaLevel(std::string_view level) {
  return level == "privileged" || level == "baseline" || level == "restricted";
}

Status ValidatePort(std::string_view field, int port) {
  if (port < 1 || port > 65535) {
    return InvalidField(std::string(field), "must be a port in 1..65535, got " + std::to_string(port));
  }
  return Status::Ok();
}

// An IPv4 or IPv6 address, optionally with a "/prefix": the characters an
// ipBlock CIDR may hold. The host's API server parses it for good.
bool LooksLikeAddress(std::string_view text) {
  if (text.empty() || text.size() > 64) return false;
  for (char c : text) {
    const bool ok =
        (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '.' || c == ':' || c == '/';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string_view SchedulerName(Scheduler scheduler) {
  switch (scheduler) {
    case Scheduler::kDefault: return "default";
    case Scheduler::kKai: return "kai";
    case Scheduler::kKueue: return "kueue";
  }
  return "";
}

Result<Scheduler> ParseScheduler(std::string_view field, std::string_view text) {
  for (Scheduler s : {Scheduler::kDefault, Scheduler::kKai, Scheduler::kKueue}) {
    if (text == SchedulerName(s)) return s;
  }
  return InvalidField(std::string(field), "must be one of kai, kueue, default");
}

std::string_view DefaultPsaLevel(gpu::Tier tier) {
  switch (tier) {
    case gpu::Tier::kShared:
    case gpu::Tier::kIsolated: return "baseline";
    case gpu::Tier::kDedicated:
    case gpu::Tier::kExclusive: return "restricted";
  }
  return "restricted";
}

std::string PsaLevel(const RenderConfig& config, const TrustTier& tier) {
  auto it = config.psa_levels.find(tier.name);
  return it != config.psa_levels.end() ? it->second : std::string(DefaultPsaLevel(tier.gpu_sharing));
}

bool ExternalServicesAllowed(const RenderConfig& config, const TrustTier& tier) {
  return config.external_service_tiers.contains(tier.name);
}

std::set<std::string> IntegrationDomainsAllowed(const RenderConfig& config, const TrustTier& tier) {
  auto it = config.integration_domains.find(tier.name);
  return it != config.integration_domains.end() ? it->second : std::set<std::string>{};
}

Status ValidateRenderConfig(const RenderConfig& config) {
  for (const auto& [tier, level] : config.psa_levels) {
    if (!IsPsaLevel(level)) {
      return InvalidField("psa_levels." + tier, "must be one of privileged, baseline, restricted");
    }
  }
  if (!LooksLikeAddress(config.virtual_api_address)) {
    return InvalidField("virtual_api_address", "must be an IP address or a CIDR");
  }
  SEPTA_RETURN_IF_ERROR(ValidatePort("virtual_api_port", config.virtual_api_port));
  SEPTA_RETURN_IF_ERROR(ValidatePort("dns_port", config.dns_port));
  if (config.field_manager.empty() || config.field_manager.size() > 128) {
    return InvalidField("field_manager", "must be 1-128 characters");
  }
  if (config.syncer_user.empty()) return InvalidField("syncer_user", "is required");
  SEPTA_RETURN_IF_ERROR(ValidateText("syncer_user", config.syncer_user, 253));
  if (config.default_request_cpu_milli < 1) {
    return InvalidField("default_request_cpu_milli", "must be at least 1");
  }
  if (config.default_request_memory_mib < 1) {
    return InvalidField("default_request_memory_mib", "must be at least 1");
  }
  return Status::Ok();
}

}  // namespace septa::tenancy::host
