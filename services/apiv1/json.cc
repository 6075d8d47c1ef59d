#include "services/apiv1/json.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/util/json_util.h>

#include <nlohmann/json.hpp>

namespace septa::apiv1 {

namespace {

// No API message nests more than a few levels; the bound stops a body of a
// million '[' before it costs anything.
constexpr std::size_t kMaxDepth = 32;

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

// Checks a body's syntax, depth and numbers in one streaming pass, without
// building a tree, and notes the top-level keys.
class BodyScanner final : public nlohmann::json::json_sax_t {
 public:
  BodyScanner(std::string_view body, const google::protobuf::Descriptor& message) : body_(body), message_(message) {}

  bool null() override { return Value(); }
  bool boolean(bool) override { return Value(); }
  bool number_integer(number_integer_t) override { return Value(); }
  bool number_unsigned(number_unsigned_t) override { return Value(); }
  bool number_float(number_float_t, const string_t&) override { return Value(); }
  bool string(string_t&) override { return Value(); }
  bool binary(binary_t&) override { return Value(); }
  bool start_object(std::size_t) override { return Open(true); }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(false); }
  bool end_array() override { return Close(); }
  bool key(string_t& key) override {
    path_.back() = key;
    if (path_.size() == 1) keys_.push_back({key, ProtoFieldName(message_, key)});
    return true;
  }

  bool parse_error(std::size_t byte, const std::string& token, const nlohmann::json::exception& e) override {
    if (e.id == 406) {  // a number a double cannot hold
      const std::string field = FieldPath();
      error_ = InvalidField(field.empty() ? "body" : field, "number " + token + " is out of range");
      return false;
    }
    std::string what = e.what();
    if (what.find("ill-formed UTF-8") != std::string::npos) {  // in a string: name its field
      const std::string field = FieldPath();
      error_ = InvalidField(field.empty() ? "body" : field,
                            "is not valid UTF-8 (at " + Position(body_, byte > 0 ? byte - 1 : 0) + ")");
      return false;
    }
    const std::size_t cut = what.rfind(": ");
    std::string reason = cut == std::string::npos ? what : what.substr(cut + 2);
    // nlohmann reports the offset one past the offending byte.
    error_ = InvalidArgument("malformed JSON at " + Position(body_, byte > 0 ? byte - 1 : 0) + ": " + reason);
    return false;
  }

  const Status& error() const { return error_; }
  // Each top-level key as sent and as the proto names it.
  const std::vector<std::pair<std::string, std::string>>& keys() const { return keys_; }

 private:
  bool Value() {
    if (path_.empty()) return NotAnObject();
    return true;
  }
  bool Open(bool object) {
    if (path_.empty() && !object) return NotAnObject();
    if (path_.size() >= kMaxDepth) {
      error_ = InvalidArgument("request body nests deeper than " + std::to_string(kMaxDepth) + " levels");
      return false;
    }
    path_.emplace_back();
    return true;
  }
  bool Close() {
    path_.pop_back();
    return true;
  }
  bool NotAnObject() {
    error_ = InvalidArgument("request body must be a JSON object");
    return false;
  }
  // "labels.team": the keys that lead to the current value, the first as the
  // field's proto name.
  std::string FieldPath() const {
    std::string out;
    for (const std::string& key : path_) {
      if (key.empty()) continue;  // an array level
      out += out.empty() ? ProtoFieldName(message_, key) : "." + key;
    }
    return out;
  }

  std::string_view body_;
  const google::protobuf::Descriptor& message_;
  std::vector<std::string> path_;  // one entry per open object or array: its current key
  std::vector<std::pair<std::string, std::string>> keys_;
  Status error_;
};

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

std::string ProtoFieldName(const google::protobuf::Descriptor& message, const std::string& name) {
  if (message.FindFieldByName(name) != nullptr) return name;
  for (int i = 0; i < message.field_count(); ++i) {
    if (message.field(i)->json_name() == name) return message.field(i)->name();
  }
  return name;
}

Result<std::vector<std::string>> ParseJsonBody(std::string_view body, google::protobuf::Message& out) {
  // A streaming pass first: its errors carry the byte offset and the field,
  // protobuf's do not, and it bounds the depth before anything is built.
  BodyScanner scanner(body, *out.GetDescriptor());
  const bool scanned = nlohmann::json::sax_parse(body.begin(), body.end(), &scanner);
  if (!scanner.error().ok()) return scanner.error();
  if (!scanned) return InvalidArgument("malformed JSON");

  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto st = google::protobuf::util::JsonStringToMessage(google::protobuf::StringPiece(body.data(), body.size()), &out,
                                                        options);
  if (!st.ok()) {
    std::string message(st.message());
    // Protobuf says "... Cannot find field: foo in message septa.v1.Tenant" or
    // "Invalid value for field: x"; name the field where it says which.
    for (const auto& [sent, field] : scanner.keys()) {
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
  for (const auto& key : scanner.keys()) fields.push_back(key.second);
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
