#include "services/apiv1/http_bindings.h"

#include <google/protobuf/empty.pb.h>

#include <set>

#include "septa/api_files.h"
#include "septa/v1/http.pb.h"

namespace septa::apiv1 {

namespace {

namespace pb = google::protobuf;

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t end = s.find(sep, start);
    parts.emplace_back(s.substr(start, end == std::string_view::npos ? s.size() - start : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// The field `path` ("tenant.etag") names from `message`: every step but the
// last must be a singular message field.
Result<const pb::FieldDescriptor*> FindFieldPath(const pb::Descriptor& message, std::string_view path) {
  const pb::Descriptor* at = &message;
  const pb::FieldDescriptor* field = nullptr;
  for (const std::string& name : Split(path, '.')) {
    if (at == nullptr) return InvalidArgument("\"" + std::string(path) + "\" goes through a non-message field");
    field = at->FindFieldByName(name);
    if (field == nullptr) {
      return InvalidArgument("\"" + std::string(path) + "\" names no field of " + std::string(message.full_name()));
    }
    at = field->is_repeated() ? nullptr : field->message_type();
  }
  if (field->is_repeated() || field->message_type() != nullptr) {
    return InvalidArgument("\"" + std::string(path) + "\" must be a singular scalar field");
  }
  return field;
}

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

Result<HttpBinding> Bind(const pb::MethodDescriptor& method) {
  const v1::HttpRule& rule = method.options().GetExtension(v1::http);
  auto verb = VerbOf(rule);
  SEPTA_RETURN_IF_ERROR(verb);
  const pb::Descriptor& request = *method.input_type();
  HttpBinding b;
  b.method = &method;
  b.verb = verb->name;
  b.path = verb->path;
  std::set<std::string> bound;  // field paths taken by the path, body or headers

  if (!b.path.starts_with("/v1/")) return InvalidArgument("path \"" + b.path + "\" must start with /v1/");
  // A custom method (AIP-136): ":verb" after the last segment.
  std::string_view segments = std::string_view(b.path).substr(1);
  if (const auto colon = segments.rfind(':'); colon != std::string_view::npos && colon > segments.rfind('/')) {
    b.custom_verb = std::string(segments.substr(colon + 1));
    segments = segments.substr(0, colon);
    if (b.custom_verb.empty() || b.custom_verb.find_first_not_of("abcdefghijklmnopqrstuvwxyz") != std::string::npos) {
      return InvalidArgument("path \"" + b.path + "\": the custom verb must be lowercase letters");
    }
  }
  for (const std::string& segment : Split(segments, '/')) {
    if (segment.empty()) return InvalidArgument("path \"" + b.path + "\" has an empty segment");
    if (segment.find_first_of("{}") == std::string::npos) continue;
    if (segment.front() != '{' || segment.back() != '}' || segment.find_first_of("{}", 1) != segment.size() - 1) {
      return InvalidArgument("path segment \"" + segment + "\" must be a whole {field}");
    }
    std::string field_path = segment.substr(1, segment.size() - 2);
    auto field = FindFieldPath(request, field_path);
    SEPTA_RETURN_IF_ERROR(field);
    b.path_variables.push_back({field_path, *field});
    bound.insert(field_path);
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
    auto field = FindFieldPath(request, h.field());
    SEPTA_RETURN_IF_ERROR(field);
    b.headers.push_back({h.header(), *field, h.field()});
    bound.insert(h.field());
  }
  if (rule.body() != "*") {
    for (int i = 0; i < request.field_count(); ++i) {
      const pb::FieldDescriptor* field = request.field(i);
      if (!bound.contains(std::string(field->name()))) b.query.push_back(field);
    }
  }
  if (method.output_type() == pb::Empty::descriptor()) b.success_status = 204;
  else if (b.verb == "POST" && b.custom_verb.empty()) b.success_status = 201;
  return b;
}

}  // namespace

Result<std::vector<HttpBinding>> LoadHttpBindings(const pb::DescriptorPool& pool,
                                                  const std::vector<std::string>& files) {
  std::vector<HttpBinding> out;
  for (const std::string& name : files) {
    const pb::FileDescriptor* file = pool.FindFileByName(name);
    if (file == nullptr) {
      return Internal(name + " is not in the descriptor pool (not linked in? septa_link_whole_api_proto)");
    }
    for (int s = 0; s < file->service_count(); ++s) {
      for (int m = 0; m < file->service(s)->method_count(); ++m) {
        const pb::MethodDescriptor& method = *file->service(s)->method(m);
        auto binding = Bind(method);
        if (!binding.ok()) {
          return InvalidArgument(std::string(method.full_name()) + ": " + binding.status().message());
        }
        out.push_back(*std::move(binding));
      }
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
