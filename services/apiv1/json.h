// JSON bodies of the REST API, through protobuf's JSON mapping (field names
// as in the .proto: snake_case).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/message.h>

#include "common/status.h"

namespace septa::apiv1 {

// Parses a JSON object into `out`. Malformed JSON names the line and column,
// an unknown or mistyped field names the field. Returns the object's
// top-level keys (the fields the client sent).
Result<std::vector<std::string>> ParseJsonBody(std::string_view body, google::protobuf::Message& out);

std::string ToJson(const google::protobuf::Message& message);

}  // namespace septa::apiv1
