#include "services/apiv1/json.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/util/json_util.h>

#include <limits>

#include "common/documents.h"

namespace septa::apiv1 {

namespace {

// No API message nests more than a few levels; the bound stops a body of a
// million '[' before it costs anything. The listener bounds the size
// (http_body_limit).
constexpr DocumentLimits kBodyLimits{.max_bytes = std::numeric_limits<std::size_t>::max(), .max_depth = 32};

// The reader's refusal as the API words it: about the request body, a
// field named by its .proto name.
Status AboutBody(const Status& refused, const google::protobuf::Descriptor& message) {
  if (refused.violations().empty()) {
    std::string text = refused.message();
    constexpr std::string_view kSubject = "the document ";
    if (text.starts_with(kSubject)) text = "request body " + text.substr(kSubject.size());
    return InvalidArgument(std::move(text));
  }
  const FieldViolation& bad = refused.violations()[0];
  const std::size_t dot = bad.field.find('.');
  const std::string field =
      ProtoFieldName(message, bad.field.substr(0, dot)) + (dot == std::string::npos ? "" : bad.field.substr(dot));
  return InvalidField(field, bad.description);
}

// "capacity.gpus.count" from protobuf's "(capacity.gpus.count): ..." when
// it lies under `field`; empty otherwise.
std::string NestedPath(const std::string& message, const std::string& field) {
  const std::size_t open = message.find('(');
  const std::size_t close = message.find(')', open);
  if (open == std::string::npos || close == std::string::npos) return "";
  std::string path = message.substr(open + 1, close - open - 1);
  return path.starts_with(field + ".") && path.find(' ') == std::string::npos ? path : "";
}

}  // namespace

const google::protobuf::FieldDescriptor* FindFieldByAnyName(const google::protobuf::Descriptor& message,
                                                            const std::string& name) {
  if (const google::protobuf::FieldDescriptor* field = message.FindFieldByName(name)) return field;
  for (int i = 0; i < message.field_count(); ++i) {
    if (message.field(i)->json_name() == name) return message.field(i);
  }
  return nullptr;
}

std::string ProtoFieldName(const google::protobuf::Descriptor& message, const std::string& name) {
  const google::protobuf::FieldDescriptor* field = FindFieldByAnyName(message, name);
  return field == nullptr ? name : std::string(field->name());
}

Result<std::vector<std::string>> ParseJsonBody(std::string_view body, google::protobuf::Message& out) {
  // Read once by the shared reader first: its errors carry the line and
  // column and the field, protobuf's do not, and it bounds the depth before
  // anything deep is built.
  auto parsed = ParseJson(body, kBodyLimits);
  if (!parsed.ok()) return AboutBody(parsed.status(), *out.GetDescriptor());
  if (!parsed->is_object()) return InvalidArgument("request body must be a JSON object");
  // Each top-level key as sent and as the proto names it.
  std::vector<std::pair<std::string, std::string>> keys;
  for (const auto& [key, value] : parsed->items()) keys.emplace_back(key, ProtoFieldName(*out.GetDescriptor(), key));

  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto st = google::protobuf::util::JsonStringToMessage(google::protobuf::StringPiece(body.data(), body.size()), &out,
                                                        options);
  if (!st.ok()) {
    std::string message(st.message());
    // Protobuf says "... Cannot find field: foo in message septa.v1.Tenant" or
    // "Invalid value for field: x"; name the field where it says which.
    for (const auto& [sent, field] : keys) {
      if (message.find(sent) != std::string::npos || message.find(field) != std::string::npos) {
        // A nested field's path, when protobuf gives it: "(capacity.gpus.count): invalid value ...".
        const std::string nested = NestedPath(message, field);
        const std::string named = nested.empty() ? field : nested;
        return Status(Code::kInvalidArgument, named + ": " + message, {FieldViolation{named, message}});
      }
    }
    return InvalidArgument("invalid request body: " + message);
  }
  std::vector<std::string> fields;
  for (const auto& key : keys) fields.push_back(key.second);
  return fields;
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
