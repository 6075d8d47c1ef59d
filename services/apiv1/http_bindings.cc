#include "services/apiv1/http_bindings.h"

#include <google/protobuf/empty.pb.h>

#include <set>

#include "septa/api_files.h"
#include "septa/v1/http.pb.h"

namespace septa::apiv1 {

namespace {

namespace pb = google::protobuf;
using CppType = pb::FieldDescriptor::CppType;

const std::vector<CppType> kStringField = {CppType::CPPTYPE_STRING};

struct Verb {
  std::string name;
  std::string path;
};

Result<Verb> VerbOf(const v1::HttpRule& rule) {
  switch (rule.pattern_case()) {
    case v1::HttpRule::kGet: return Verb{"GET", rule.get()};
    case v1::HttpRule::kPost: return Verb{"POST", rule.post()};
    case v1::HttpRule::kPatch: return Verb{"PATCH", rule.patch()};
    case v1::HttpRule::kDelete: return Verb{"DELETE", rule.delete_()};
    case v1::HttpRule::PATTERN_NOT_SET: break;
  }
  return InvalidArgument("has no (septa.v1.http) option with a get, post, patch or delete path");
}

Status BindLocation(const v1::HttpRule& rule, const pb::Descriptor& response, HttpBinding& b) {
  if (rule.location().empty()) return Status::Ok();
  if (b.success_status != 201) return InvalidArgument("location is for a method that creates (201)");
  b.location = rule.location();
  auto variables = PathTemplateVariables(b.location);
  SEPTA_RETURN_IF_ERROR(variables);
  for (const std::string& variable : *variables) {
    auto field = ResolveFieldPath(response, variable, kStringField);
    if (!field.ok()) return InvalidArgument("location: " + field.status().message());
    b.location_fields.push_back(*std::move(field));
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::string>> PathTemplateVariables(std::string_view path) {
  std::vector<std::string> variables;
  for (const std::string& segment : Split(path.substr(path.starts_with('/') ? 1 : 0), '/')) {
    if (segment.empty()) return InvalidArgument("path \"" + std::string(path) + "\" has an empty segment");
    if (segment.find_first_of("{}") == std::string::npos) continue;
    if (segment.front() != '{' || segment.back() != '}' || segment.find_first_of("{}", 1) != segment.size() - 1) {
      return InvalidArgument("path segment \"" + segment + "\" must be a whole {field}");
    }
    variables.push_back(segment.substr(1, segment.size() - 2));
  }
  return variables;
}

Result<HttpBinding> LoadHttpBinding(const pb::MethodDescriptor& method) {
  const v1::HttpRule& rule = method.options().GetExtension(v1::http);
  auto verb = VerbOf(rule);
  SEPTA_RETURN_IF_ERROR(verb);
  const pb::Descriptor& request = *method.input_type();
  HttpBinding b;
  b.method = &method;
  b.verb = verb->name;
  b.path = verb->path;
  std::set<std::string> bound;  // top-level request fields taken by the path, body or headers

  if (!b.path.starts_with("/v1/")) return InvalidArgument("path \"" + b.path + "\" must start with /v1/");
  // A custom method (AIP-136): ":verb" after the last segment.
  std::string_view template_path = b.path;
  if (const auto colon = template_path.rfind(':');
      colon != std::string_view::npos && colon > template_path.rfind('/')) {
    b.custom_verb = std::string(template_path.substr(colon + 1));
    template_path = template_path.substr(0, colon);
    if (b.custom_verb.empty() || b.custom_verb.find_first_not_of("abcdefghijklmnopqrstuvwxyz") != std::string::npos) {
      return InvalidArgument("path \"" + b.path + "\": the custom verb must be lowercase letters");
    }
  }
  auto variables = PathTemplateVariables(template_path);
  SEPTA_RETURN_IF_ERROR(variables);
  for (const std::string& variable : *variables) {
    auto field = ResolveFieldPath(request, variable, kStringField);
    SEPTA_RETURN_IF_ERROR(field);
    b.path_variables.push_back({*field});
    bound.insert(std::string(field->steps[0]->name()));
  }
  if (!rule.body().empty() && (b.verb == "GET" || b.verb == "DELETE")) {
    return InvalidArgument(b.verb + " takes no body");
  }
  if (rule.body() == "*") {
    b.has_body = true;
  } else if (!rule.body().empty()) {
    b.body_field = request.FindFieldByName(rule.body());
    if (b.body_field == nullptr || b.body_field->message_type() == nullptr || b.body_field->is_repeated()) {
      return InvalidArgument("body \"" + rule.body() + "\" must name a message field of " +
                             std::string(request.full_name()));
    }
    b.has_body = true;
    bound.insert(rule.body());
  }
  for (const v1::HttpHeaderBinding& h : rule.headers()) {
    auto field = ResolveFieldPath(request, h.field(), kStringField);
    SEPTA_RETURN_IF_ERROR(field);
    bound.insert(std::string(field->steps[0]->name()));
    b.headers.push_back({h.header(), *std::move(field)});
  }
  if (rule.body() != "*") {
    for (int i = 0; i < request.field_count(); ++i) {
      const pb::FieldDescriptor* field = request.field(i);
      if (!bound.contains(std::string(field->name()))) b.query.push_back(field);
    }
  }
  if (method.output_type() == pb::Empty::descriptor()) b.success_status = 204;
  else if (b.verb == "POST" && b.custom_verb.empty()) b.success_status = 201;
  SEPTA_RETURN_IF_ERROR(BindLocation(rule, *method.output_type(), b));
  b.no_store = rule.no_store();
  if (rule.form_body()) {
    if (rule.body() != "*") return InvalidArgument("form_body needs body \"*\"");
    for (int i = 0; i < request.field_count(); ++i) {
      const pb::FieldDescriptor* field = request.field(i);
      if (field->cpp_type() != pb::FieldDescriptor::CPPTYPE_STRING || field->is_repeated()) {
        return InvalidArgument("form_body needs a request of string fields, but " + std::string(field->name()) +
                               " is not one");
      }
    }
    b.form_body = true;
  }
  return b;
}

Result<std::vector<const pb::ServiceDescriptor*>> ServicesOf(const pb::DescriptorPool& pool,
                                                             const std::vector<std::string>& files) {
  std::vector<const pb::ServiceDescriptor*> out;
  for (const std::string& name : files) {
    const pb::FileDescriptor* file = pool.FindFileByName(name);
    if (file == nullptr) {
      return Internal(name + " is not in the descriptor pool (not linked in? septa_link_whole_api_proto)");
    }
    for (int s = 0; s < file->service_count(); ++s) out.push_back(file->service(s));
  }
  return out;
}

Result<std::vector<const pb::ServiceDescriptor*>> ApiServices() {
  return ServicesOf(*pb::DescriptorPool::generated_pool(),
                    {api::kServiceProtoFiles.begin(), api::kServiceProtoFiles.end()});
}

Result<std::vector<HttpBinding>> LoadHttpBindings(const pb::DescriptorPool& pool,
                                                  const std::vector<std::string>& files) {
  auto services = ServicesOf(pool, files);
  SEPTA_RETURN_IF_ERROR(services);
  std::vector<HttpBinding> out;
  for (const pb::ServiceDescriptor* service : *services) {
    for (int m = 0; m < service->method_count(); ++m) {
      const pb::MethodDescriptor& method = *service->method(m);
      auto binding = LoadHttpBinding(method);
      if (!binding.ok()) return InvalidArgument(std::string(method.full_name()) + ": " + binding.status().message());
      out.push_back(*std::move(binding));
    }
  }
  return out;
}

Result<std::vector<HttpBinding>> ApiHttpBindings() {
  return LoadHttpBindings(*pb::DescriptorPool::generated_pool(),
                          {api::kServiceProtoFiles.begin(), api::kServiceProtoFiles.end()});
}

std::string PathShape(std::string_view pattern) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '{') {
      out += pattern[i];
      continue;
    }
    out += "{}";
    i = pattern.find('}', i);
    if (i == std::string_view::npos) break;
  }
  return out;
}

}  // namespace septa::apiv1
