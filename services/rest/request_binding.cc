#include "services/rest/request_binding.h"

#include <google/protobuf/field_mask.pb.h>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/field.hpp>

#include <algorithm>
#include <charconv>
#include <optional>
#include <set>

#include "common/text.h"
#include "services/apiv1/json.h"

namespace septa::rest {

namespace {

namespace bh = boost::beast::http;
using http::View;
namespace pb = google::protobuf;
using apiv1::FieldPath;
using apiv1::HttpBinding;

// `path` (a field of the request) as the body holds it, or nullopt when the
// body does not hold it.
std::optional<FieldPath> InBody(const HttpBinding& b, const FieldPath& path) {
  if (!b.has_body) return std::nullopt;
  if (b.body_field == nullptr) return path;  // body "*": the whole request
  if (path.steps.size() < 2 || path.steps[0] != b.body_field) return std::nullopt;
  return FieldPath{path.text.substr(path.text.find('.') + 1), {path.steps.begin() + 1, path.steps.end()}};
}

// A path variable's field as the body may repeat it: inside the body, or
// (for a variable outside it) the body's own field of that name, as a
// virtual cluster repeats the tenant of its URL. `inside`: the former.
std::optional<FieldPath> RepeatedInBody(const HttpBinding& b, const FieldPath& variable, const pb::Descriptor& body,
                                        bool& inside) {
  std::optional<FieldPath> in_body = InBody(b, variable);
  inside = in_body.has_value();
  if (in_body || variable.steps.size() != 1) return in_body;
  const pb::FieldDescriptor* same = body.FindFieldByName(variable.leaf().name());
  if (same == nullptr || same->is_repeated() || same->cpp_type() != pb::FieldDescriptor::CPPTYPE_STRING) {
    return std::nullopt;
  }
  return FieldPath{std::string(same->name()), {same}};
}

// An application/x-www-form-urlencoded body into `request`'s top-level
// string fields (RFC 6749 §3.2, the form OAuth's token endpoints take): a
// parameter without a field of its name is ignored, a repeated one refused.
Status BindFormBody(const http::Request& http_request, pb::Message& request, std::vector<std::string>& sent) {
  const std::string& body = http_request.body();
  std::set<std::string> seen;
  for (std::size_t begin = 0; begin < body.size();) {
    const std::size_t end = std::min(body.find('&', begin), body.size());
    const std::string_view pair = std::string_view(body).substr(begin, end - begin);
    begin = end + 1;
    if (pair.empty()) continue;
    const std::size_t equals = pair.find('=');
    const auto name = http::PercentDecode(pair.substr(0, equals), true);
    const auto value = http::PercentDecode(equals == std::string_view::npos ? "" : pair.substr(equals + 1), true);
    if (!name || !value) return InvalidArgument("the form body has a malformed %-escape");
    if (!seen.insert(*name).second) {
      return InvalidArgument("the form parameter " + QuotedExcerpt(*name) + " is sent more than once");
    }
    const pb::FieldDescriptor* field = request.GetDescriptor()->FindFieldByName(*name);
    if (field == nullptr) continue;
    if (!IsValidUtf8(*value)) return InvalidField(*name, "is not valid UTF-8");
    request.GetReflection()->SetString(&request, field, *value);
    sent.push_back(*name);
  }
  return Status::Ok();
}

Status BindBody(const HttpBinding& b, const http::Request& http_request, pb::Message& request,
                std::vector<std::string>& sent) {
  if (b.form_body && MediaType(http_request) == "application/x-www-form-urlencoded") {
    return BindFormBody(http_request, request, sent);
  }
  pb::Message& target =
      b.body_field == nullptr ? request : *request.GetReflection()->MutableMessage(&request, b.body_field);
  std::unique_ptr<pb::Message> body(target.New());
  SEPTA_ASSIGN_OR_RETURN(sent, apiv1::ParseJsonBody(http_request.body(), *body));
  for (const apiv1::HttpPathVariable& variable : b.path_variables) {
    bool inside = false;
    const std::optional<FieldPath> repeated = RepeatedInBody(b, variable.field, *body->GetDescriptor(), inside);
    if (!repeated) continue;
    const std::string from_body = apiv1::GetString(*body, *repeated);
    const std::string from_url = apiv1::GetString(request, variable.field);
    if (!from_body.empty() && from_body != from_url) {
      return InvalidField(repeated->text, std::string(inside && b.verb == "PATCH" ? "is immutable and " : "") +
                                              "must match the URL (\"" + EscapeControlCharacters(from_url) + "\")");
    }
  }
  // The path's values are in `target` already; the body repeats them or
  // leaves them empty, and adds to no list (nothing else is set yet).
  target.MergeFrom(*body);
  return Status::Ok();
}

Status BindHeaders(const HttpBinding& b, const http::Request& http_request, const std::vector<std::string>& sent,
                   pb::Message& request) {
  for (const apiv1::HttpHeaderBinding& header : b.headers) {
    const auto found = http_request.find(header.header);
    if (!boost::beast::iequals(header.header, "If-Match")) {
      if (found != http_request.end()) apiv1::SetString(request, header.field, std::string(View(found->value())));
      continue;
    }
    if (found != http_request.end()) {
      SEPTA_ASSIGN_OR_RETURN(const std::string etag, IfMatch(http_request));
      apiv1::SetString(request, header.field, etag);
      continue;
    }
    // No header: the body's value counts. One the body sent empty is
    // refused as an empty If-Match is: taken as no precondition, a client
    // that lost its etag would write over any version.
    const std::optional<FieldPath> in_body = InBody(b, header.field);
    if (in_body && in_body->steps.size() == 1 && std::ranges::find(sent, in_body->text) != sent.end() &&
        apiv1::GetString(request, header.field).empty()) {
      return InvalidField(in_body->text, "is empty: send the etag read, or leave the field out for no precondition");
    }
  }
  return Status::Ok();
}

template <typename Number>
Result<Number> ParseNumber(const std::string& name, const std::string& text) {
  Number value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error == std::errc::result_out_of_range) return InvalidField(name, "is out of range");
  if (error != std::errc() || end != text.data() + text.size()) {
    return InvalidField(name, std::is_integral_v<Number> ? "must be an integer" : "must be a number");
  }
  return value;
}

std::vector<std::string> SplitMask(const std::string& mask) {
  std::vector<std::string> paths;
  for (std::string& path : Split(mask, ',')) {
    if (!path.empty()) paths.push_back(std::move(path));
  }
  return paths;
}

// One value of a query parameter into its field: set, or added to a
// repeated one. An empty value leaves a singular field at its default.
Status BindQueryValue(const pb::FieldDescriptor& field, const std::string& text, pb::Message& request) {
  const pb::Reflection& r = *request.GetReflection();
  const std::string name(field.name());
  const bool many = field.is_repeated();
  if (text.empty() && !many) return Status::Ok();
  switch (field.cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_STRING:
      many ? r.AddString(&request, &field, text) : r.SetString(&request, &field, text);
      break;
    case pb::FieldDescriptor::CPPTYPE_INT32: {
      SEPTA_ASSIGN_OR_RETURN(const auto v, ParseNumber<std::int32_t>(name, text));
      many ? r.AddInt32(&request, &field, v) : r.SetInt32(&request, &field, v);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_INT64: {
      SEPTA_ASSIGN_OR_RETURN(const auto v, ParseNumber<std::int64_t>(name, text));
      many ? r.AddInt64(&request, &field, v) : r.SetInt64(&request, &field, v);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_UINT32: {
      SEPTA_ASSIGN_OR_RETURN(const auto v, ParseNumber<std::uint32_t>(name, text));
      many ? r.AddUInt32(&request, &field, v) : r.SetUInt32(&request, &field, v);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_UINT64: {
      SEPTA_ASSIGN_OR_RETURN(const auto v, ParseNumber<std::uint64_t>(name, text));
      many ? r.AddUInt64(&request, &field, v) : r.SetUInt64(&request, &field, v);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_DOUBLE: {
      SEPTA_ASSIGN_OR_RETURN(const auto v, ParseNumber<double>(name, text));
      many ? r.AddDouble(&request, &field, v) : r.SetDouble(&request, &field, v);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_FLOAT: {
      SEPTA_ASSIGN_OR_RETURN(const auto v, ParseNumber<float>(name, text));
      many ? r.AddFloat(&request, &field, v) : r.SetFloat(&request, &field, v);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      if (text != "true" && text != "false") return InvalidField(name, "must be true or false");
      many ? r.AddBool(&request, &field, text == "true") : r.SetBool(&request, &field, text == "true");
      break;
    case pb::FieldDescriptor::CPPTYPE_ENUM: {
      const pb::EnumValueDescriptor* value = field.enum_type()->FindValueByName(text);
      if (value == nullptr) return InvalidField(name, "names no value of " + std::string(field.enum_type()->name()));
      many ? r.AddEnum(&request, &field, value) : r.SetEnum(&request, &field, value);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_MESSAGE: {
      auto* mask = pb::DynamicCastToGenerated<pb::FieldMask>(r.MutableMessage(&request, &field));
      if (mask == nullptr) return Internal("query parameter " + name + " is not a FieldMask");
      for (const std::string& path : SplitMask(text)) mask->add_paths(path);
      break;
    }
  }
  return Status::Ok();
}

Status BindQuery(const HttpBinding& b, const http::Request& http_request, const http::Target& target,
                 pb::Message& request) {
  // An unknown parameter is refused, not ignored: a client that sends one
  // means something this septad does not do (an older septad ignoring
  // validate_only would have created what was only to be checked).
  for (const auto& parameter : target.query) {
    const std::string& name = parameter.first;  // clang 14 lambdas capture no structured binding
    if (std::ranges::none_of(b.query, [&](const pb::FieldDescriptor* f) { return f->name() == name; })) {
      std::string known;
      for (const pb::FieldDescriptor* f : b.query) known += (known.empty() ? "" : ", ") + std::string(f->name());
      return InvalidField(EscapeControlCharacters(name),
                          "unknown query parameter" +
                              (known.empty() ? std::string(": this route takes none") : "; this route takes " + known));
    }
  }
  for (const pb::FieldDescriptor* field : b.query) {
    const std::string name(field->name());
    // A message other than a FieldMask has no query syntax (septa-openapi
    // refuses to document one).
    if (field->message_type() != nullptr && field->message_type() != pb::FieldMask::descriptor()) continue;
    if (field->is_repeated()) {
      for (const std::string& value : http::QueryValues(View(http_request.target()), name)) {
        SEPTA_RETURN_IF_ERROR(BindQueryValue(*field, value, request));
      }
    } else if (const auto value = target.query.find(name); value != target.query.end()) {
      SEPTA_RETURN_IF_ERROR(BindQueryValue(*field, value->second, request));
    }
  }
  return Status::Ok();
}

// A PATCH without an update_mask parameter changes the fields the body sent,
// but for those the path or a header binds (the resource's name, its etag).
void BindImplicitUpdateMask(const HttpBinding& b, const http::Target& target, const std::vector<std::string>& sent,
                            pb::Message& request) {
  if (b.verb != "PATCH" || b.body_field == nullptr) return;
  const auto mask = std::ranges::find_if(b.query, [](const pb::FieldDescriptor* f) {
    return f->name() == "update_mask" && f->message_type() == pb::FieldMask::descriptor();
  });
  if (mask == b.query.end() || target.query.contains("update_mask")) return;
  std::set<std::string> bound;
  for (const apiv1::HttpPathVariable& v : b.path_variables) {
    if (auto in_body = InBody(b, v.field)) bound.insert(std::string(in_body->steps[0]->name()));
  }
  for (const apiv1::HttpHeaderBinding& h : b.headers) {
    if (auto in_body = InBody(b, h.field)) bound.insert(std::string(in_body->steps[0]->name()));
  }
  auto* paths = pb::DynamicCastToGenerated<pb::FieldMask>(request.GetReflection()->MutableMessage(&request, *mask));
  for (const std::string& field : sent) {
    if (!bound.contains(field)) paths->add_paths(field);
  }
}

// The Location template with the response's fields in its {variables}.
std::string Location(const HttpBinding& b, const pb::Message& response) {
  std::string out;
  std::size_t next = 0;
  for (std::size_t i = 0; i < b.location.size(); ++i) {
    if (b.location[i] != '{') {
      out += b.location[i];
      continue;
    }
    // One path segment each, as the route matches them: a member's "/" stays in it.
    out += http::PercentEncodePathSegment(apiv1::GetString(response, b.location_fields.at(next++)));
    i = b.location.find('}', i);
  }
  return out;
}

}  // namespace

void BindPath(const HttpBinding& binding, const std::map<std::string, std::string>& params, pb::Message& request) {
  for (const apiv1::HttpPathVariable& v : binding.path_variables)
    apiv1::SetString(request, v.field, params.at(v.field.text));
}

Status BindRequest(const HttpBinding& binding, const http::Request& http_request, const http::Target& target,
                   pb::Message& request) {
  std::vector<std::string> sent;  // the body's top-level fields
  if (binding.has_body) SEPTA_RETURN_IF_ERROR(BindBody(binding, http_request, request, sent));
  SEPTA_RETURN_IF_ERROR(BindHeaders(binding, http_request, sent, request));
  SEPTA_RETURN_IF_ERROR(BindQuery(binding, http_request, target, request));
  BindImplicitUpdateMask(binding, target, sent, request);
  return Status::Ok();
}

std::string MediaType(const http::Request& http_request) {
  std::string_view type = View(http_request[bh::field::content_type]);
  type = type.substr(0, type.find(';'));
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  std::string lower(type);
  std::ranges::transform(lower, lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

bool IfNoneMatchNames(const http::Request& http_request, std::string_view etag) {
  std::string_view header = View(http_request[bh::field::if_none_match]);
  if (header == "*") return true;
  if (etag.starts_with("W/")) etag.remove_prefix(2);
  while (!header.empty()) {
    const std::size_t comma = header.find(',');
    std::string_view one = header.substr(0, comma);
    while (!one.empty() && one.front() == ' ') one.remove_prefix(1);
    while (!one.empty() && one.back() == ' ') one.remove_suffix(1);
    if (one.starts_with("W/")) one.remove_prefix(2);
    if (!one.empty() && one == etag) return true;
    if (comma == std::string_view::npos) break;
    header.remove_prefix(comma + 1);
  }
  return false;
}

Result<std::string> IfMatch(const http::Request& http_request) {
  const auto field = http_request.find(bh::field::if_match);
  if (field == http_request.end()) return std::string();
  std::string_view v = View(field->value());
  if (v == "*") return std::string();
  if (v.starts_with("W/")) v.remove_prefix(2);
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  if (v.empty()) {
    return InvalidField("If-Match", "names no etag: send the etag read (\"7\"), * for any version, or no If-Match");
  }
  return std::string(v);
}

http::Response JsonResponse(http::HttpStatus status, const pb::Message& message) {
  http::Response r(status, 11);
  r.set(bh::field::content_type, "application/json");
  r.body() = apiv1::ToJson(message) + "\n";
  return r;
}

bool IsValidateOnly(const pb::Message& request) {
  const pb::FieldDescriptor* field = request.GetDescriptor()->FindFieldByName("validate_only");
  return field != nullptr && field->cpp_type() == pb::FieldDescriptor::CPPTYPE_BOOL && !field->is_repeated() &&
         request.GetReflection()->GetBool(request, field);
}

http::Response RpcResponse(const HttpBinding& binding, const pb::Message& response, bool validate_only) {
  // What a create or update would make, made nowhere: 200, no Location, no
  // ETag (it names no stored version).
  if (validate_only) return JsonResponse(http::HttpStatus::ok, response);
  if (binding.success_status == 204) return http::Response(http::HttpStatus::no_content, 11);
  http::Response r = JsonResponse(static_cast<http::HttpStatus>(binding.success_status), response);
  const pb::FieldDescriptor* etag = response.GetDescriptor()->FindFieldByName("etag");
  if (etag != nullptr && etag->cpp_type() == pb::FieldDescriptor::CPPTYPE_STRING && !etag->is_repeated()) {
    if (std::string value = response.GetReflection()->GetString(response, etag); !value.empty()) {
      r.set(bh::field::etag, "\"" + value + "\"");
    }
  }
  if (!binding.location.empty()) r.set(bh::field::location, Location(binding, response));
  if (binding.no_store) r.set(bh::field::cache_control, "no-store");
  return r;
}

}  // namespace septa::rest
