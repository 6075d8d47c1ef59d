// The REST binding of every RPC of Septa's API, read from the `septa.v1.http`
// method options of the .proto files (api/proto/septa/v1/http.proto): the one
// route table. septa-openapi documents it as api/openapi.yaml, and a test
// checks the REST server's routes against it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/descriptor.h>

#include "common/status.h"

namespace septa::apiv1 {

struct HttpHeaderBinding {
  std::string header;                              // "If-Match"
  const google::protobuf::FieldDescriptor* field;  // the field it carries
  std::string field_path;                          // "tenant.etag"
};

// A `{field.path}` segment of a path template.
struct HttpPathVariable {
  std::string field_path;
  const google::protobuf::FieldDescriptor* field;
};

struct HttpBinding {
  const google::protobuf::MethodDescriptor* method = nullptr;
  std::string verb;         // "GET", "POST", "PATCH" or "DELETE"
  std::string path;         // "/v1/tenants/{tenant.name}", "/v1/tenants/{tenant}/vclusters/{name}:sleep"
  std::string custom_verb;  // "sleep" for a custom method's ":sleep"; empty otherwise
  std::vector<HttpPathVariable> path_variables;
  // The request field the body carries; nullptr: the whole request (body
  // "*") or no body (see has_body).
  const google::protobuf::FieldDescriptor* body_field = nullptr;
  bool has_body = false;
  std::vector<HttpHeaderBinding> headers;
  // Request fields bound by neither path, body nor header, in field order.
  std::vector<const google::protobuf::FieldDescriptor*> query;
  int success_status = 200;  // 204 for google.protobuf.Empty, 201 for POST but a custom method's
};

// Every RPC of every service in `files` of `pool` (e.g. protobuf's generated
// pool and septa/api_files.h's kServiceProtoFiles), in declaration order.
// Fails naming the RPC when one has no binding or a binding names no request
// field, and naming the file when the pool lacks it (for the generated pool:
// it is not linked into the program).
Result<std::vector<HttpBinding>> LoadHttpBindings(const google::protobuf::DescriptorPool& pool,
                                                  const std::vector<std::string>& files);

// The bindings of Septa's API (septa/api_files.h). The program must link
// septa_api_proto whole (septa_link_whole_api_proto in cmake/Septa.cmake).
Result<std::vector<HttpBinding>> ApiHttpBindings();

// `pattern` with its variables' names erased: "/v1/tenants/{name}" and
// "/v1/tenants/{tenant.name}" are both "/v1/tenants/{}".
std::string PathShape(std::string_view pattern);

}  // namespace septa::apiv1
