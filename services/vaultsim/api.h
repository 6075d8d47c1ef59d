// The request and reply shapes inside vaultsim, and the helpers that give
// every reply Vault's envelope and error form.
#pragma once

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time_point.h"

namespace septa::vaultsim {

using nlohmann::json;

// The verbs after Vault's own mapping: POST and PUT are both kWrite, the LIST
// verb and GET ?list=true are both kList.
enum class Operation { kRead, kWrite, kList, kDelete, kHead };

struct ApiRequest {
  Operation op = Operation::kRead;
  std::string path;                   // "pki/issue/web" (after /v1/, no trailing '/')
  std::vector<std::string> segments;  // path split at '/'
  std::map<std::string, std::string> query;
  json body = json::object();
  std::string token;  // X-Vault-Token or Authorization: Bearer
};

struct ApiReply {
  int status = 200;
  std::string body;  // JSON unless content_type says otherwise
  std::string content_type = "application/json";
};

// {"errors": [message]} (or [] when message is empty) with `status`.
ApiReply Error(int status, const std::string& message);
inline ApiReply PermissionDenied() { return Error(403, "permission denied"); }
inline ApiReply NoContent() { return ApiReply{204, "", ""}; }

// The response envelope; fields the caller does not set are Vault's empty values.
struct Envelope {
  json data = nullptr;
  json auth = nullptr;
  std::string lease_id;
  std::int64_t lease_duration = 0;
  bool renewable = false;
  std::vector<std::string> warnings;
};
ApiReply Reply(const Envelope& envelope, const std::string& request_id);

// Vault's duration forms: a number of seconds (JSON number or digit string)
// or Go's "1h30m", "90s", "72h". nullopt when malformed.
std::optional<std::chrono::seconds> ParseDuration(const json& value);
std::int64_t UnixSeconds(TimePoint t);

// Go's time.Duration.String() form, e.g. "24h0m0s", as Vault prints TTLs.
std::string GoDuration(std::chrono::seconds d);
// A string list given as a JSON list or a comma-separated string.
std::vector<std::string> StringList(const json& value);

// The field `name` of a request body as a duration; `fallback` when absent.
// INVALID_ARGUMENT naming the field when malformed.
Result<std::chrono::seconds> DurationField(const json& body, const std::string& name, std::chrono::seconds fallback);

}  // namespace septa::vaultsim
