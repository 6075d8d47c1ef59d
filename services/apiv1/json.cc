#include "services/apiv1/json.h"

#include <google/protobuf/util/json_util.h>

#include <nlohmann/json.hpp>

namespace septa::apiv1 {

namespace {

// Turns an offset into "line L, column C" (both 1-based).
std::string Position(std::string_view text, std::size_t byte) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

}  // namespace

Result<std::vector<std::string>> ParseJsonBody(std::string_view body, google::protobuf::Message& out) {
  // nlohmann first: its errors carry the byte offset, protobuf's do not.
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(body.begin(), body.end());
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    const std::size_t cut = what.rfind(": ");
    std::string reason = cut == std::string::npos ? what : what.substr(cut + 2);
    // nlohmann reports the offset one past the offending byte.
    return InvalidArgument("malformed JSON at " + Position(body, e.byte > 0 ? e.byte - 1 : 0) + ": " + reason);
  } catch (const nlohmann::json::out_of_range&) {  // a number that overflows a double (found by fuzz/)
    return InvalidArgument("malformed JSON: a number is out of range");
  }
  if (!doc.is_object()) return InvalidArgument("request body must be a JSON object");
  std::vector<std::string> keys;
  for (const auto& item : doc.items()) keys.push_back(item.key());

  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto st = google::protobuf::util::JsonStringToMessage(google::protobuf::StringPiece(body.data(), body.size()),
                                                        &out, options);
  if (!st.ok()) {
    std::string message(st.message());
    // Protobuf says "... Cannot find field: foo in message septa.v1.Tenant" or
    // "Invalid value for field: x"; name the field where it says which.
    for (const auto& key : keys) {
      if (message.find(key) != std::string::npos) {
        return Status(Code::kInvalidArgument, key + ": " + message, {FieldViolation{key, message}});
      }
    }
    return InvalidArgument("invalid request body: " + message);
  }
  return keys;
}

std::string ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  return out;
}

}  // namespace septa::apiv1
