// api/openapi.yaml, written from the route table (http_bindings.h) and the
// messages' descriptors: schemas by protobuf's JSON mapping as the REST
// server speaks it (fields by their .proto names; enums as their names;
// Timestamp as an RFC 3339 date-time; Duration as "<seconds>s"; FieldMask as
// comma-separated paths; 64-bit integers as decimal strings), and every
// error as application/problem+json (services/rest/problem.cc).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "services/apiv1/http_bindings.h"

namespace septa::apiv1 {

// An OpenAPI 3.1 document. Fails on a field type it cannot describe and on
// two RPCs of one name (operation ids must be unique).
Result<nlohmann::ordered_json> OpenApiDocument(const std::vector<HttpBinding>& bindings);

// OpenApiDocument(ApiHttpBindings()) as YAML, as api/openapi.yaml holds it.
Result<std::string> OpenApiYaml();

}  // namespace septa::apiv1
