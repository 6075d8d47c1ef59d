// The PATCH flavours of the Kubernetes API, and YAML bodies.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "services/kubesim/api_error.h"

namespace septa::kubesim {

// A JSON or YAML document as JSON (YAML plain scalars get their natural
// types, quoted ones stay strings). 400 on a syntax error.
ApiResult<nlohmann::json> ParseJsonOrYaml(std::string_view text);

// RFC 7386: null deletes, lists are replaced whole.
ApiResult<nlohmann::json> ApplyMergePatch(const nlohmann::json& target, const nlohmann::json& patch);

// RFC 6902; a failed `test` or a bad path is 422.
ApiResult<nlohmann::json> ApplyJsonPatch(const nlohmann::json& target, const nlohmann::json& patch);

// Strategic merge for built-in types: like a merge patch, but the lists that
// Kubernetes merges by key (containers, volumes, env, ports, ...) are merged
// element by element, and `$patch: delete|replace` directives are honoured.
ApiResult<nlohmann::json> ApplyStrategicMergePatch(const nlohmann::json& target, const nlohmann::json& patch);

// The merge key of a list field in built-in types ("name" for containers),
// or "" when the list is atomic.
std::string_view MergeKeyFor(std::string_view field);

}  // namespace septa::kubesim
