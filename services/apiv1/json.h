// JSON bodies of the REST API, through protobuf's JSON mapping: fields by
// their .proto (snake_case) or lowerCamelCase JSON names on input, by their
// .proto names on output.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/message.h>

#include "common/status.h"

namespace septa::apiv1 {

// Parses a JSON object into `out`. Malformed JSON names the line and column,
// an unknown or mistyped field or a number out of range names the field, a
// body nested deeper than 32 levels is refused before anything deeper is
// built (ParseJson, common/documents.h).
// Returns the fields the client sent (the top-level keys, by .proto name).
Result<std::vector<std::string>> ParseJsonBody(std::string_view body, google::protobuf::Message& out);

// The field of `message` that `name` names by its .proto (snake_case) or
// its lowerCamelCase JSON name, as protobuf's JSON reader takes either;
// nullptr when it names none.
const google::protobuf::FieldDescriptor* FindFieldByAnyName(const google::protobuf::Descriptor& message,
                                                            const std::string& name);
// That field's .proto name; `name` itself when it names no field.
std::string ProtoFieldName(const google::protobuf::Descriptor& message, const std::string& name);

std::string ToJson(const google::protobuf::Message& message);

}  // namespace septa::apiv1
