// api/openapi.yaml, written from the route table (http_bindings.h) and the
// messages' descriptors: schemas by protobuf's JSON mapping as the REST
// server speaks it (fields by their .proto names; enums as their names;
// Timestamp as an RFC 3339 date-time; Duration as "<seconds>s"; FieldMask as
// comma-separated paths; 64-bit integers as decimal strings), and every
// error as application/problem+json (services/rest/problem.cc).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <google/protobuf/descriptor.h>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "services/apiv1/http_bindings.h"

namespace septa::apiv1 {

// The comments of the .proto sources, which protobuf's generated pool does
// not keep, read from a FileDescriptorSet written with --include_source_info
// (septa/api_files.h's kBuildDescriptorSet).
class ProtoComments {
 public:
  static Result<ProtoComments> Load(const std::string& descriptor_set_path);
  ProtoComments() = default;  // no comments

  // The leading and trailing comments of the element of that full name in
  // the sources, one leading space per line removed; "" when it has none.
  // Several lines end with a line break, one does not.
  std::string Of(const google::protobuf::Descriptor& d) const;
  std::string Of(const google::protobuf::FieldDescriptor& d) const;
  std::string Of(const google::protobuf::EnumDescriptor& d) const;
  std::string Of(const google::protobuf::EnumValueDescriptor& d) const;
  std::string Of(const google::protobuf::ServiceDescriptor& d) const;
  std::string Of(const google::protobuf::MethodDescriptor& d) const;

 private:
  std::shared_ptr<const google::protobuf::DescriptorPool> pool_;
};

// An OpenAPI 3.1 document, with `comments` as descriptions; a field whose
// comment says "output only" is readOnly. Fails on a field type it cannot
// describe and on two RPCs of one name (operation ids must be unique).
Result<nlohmann::ordered_json> OpenApiDocument(const std::vector<HttpBinding>& bindings, const ProtoComments& comments);

// OpenApiDocument(ApiHttpBindings(), comments of kBuildDescriptorSet) as
// YAML, as api/openapi.yaml holds it.
Result<std::string> OpenApiYaml();

}  // namespace septa::apiv1
