// The REST binding of every RPC of Septa's API, read from the `septa.v1.http`
// method options of the .proto files (api/proto/septa/v1/http.proto): the one
// route table. The REST server serves it (services/rest), septa-openapi
// documents it as api/openapi.yaml.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/descriptor.h>

#include "common/status.h"
#include "services/apiv1/field_path.h"

namespace septa::apiv1 {

// A request header that carries a request field, e.g. If-Match -> etag.
struct HttpHeaderBinding {
  std::string header;  // "If-Match"
  FieldPath field;     // "tenant.etag", a string field
};

// A `{field.path}` segment of a path template; a string field.
struct HttpPathVariable {
  FieldPath field;
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
  // REST binds a scalar (a repeated one from each occurrence of the
  // parameter) and a google.protobuf.FieldMask (comma-separated paths); any
  // other message has no query syntax, and septa-openapi refuses to
  // document it (so the API's test of api/openapi.yaml fails on one).
  std::vector<const google::protobuf::FieldDescriptor*> query;
  int success_status = 200;  // 204 for google.protobuf.Empty, 201 for POST but a custom method's
  // The Location of a created resource: a path template over response
  // fields ("/v1/tokens/{id}"); empty: none.
  std::string location;
  std::vector<FieldPath> location_fields;  // its {fields}, in order, in the response message
  bool no_store = false;                   // the response carries a secret
  // The body may be application/x-www-form-urlencoded too (OAuth's token
  // endpoints): only with body "*" and a request of top-level string fields.
  bool form_body = false;
};

// Every RPC of every service in `files` of `pool` (e.g. protobuf's generated
// pool and septa/api_files.h's kServiceProtoFiles), in declaration order.
// Fails naming the RPC when one has no binding or a binding names no request
// field, and naming the file when the pool lacks it (for the generated pool:
// it is not linked into the program).
Result<std::vector<HttpBinding>> LoadHttpBindings(const google::protobuf::DescriptorPool& pool,
                                                  const std::vector<std::string>& files);

// The RPC's binding; fails as LoadHttpBindings does.
Result<HttpBinding> LoadHttpBinding(const google::protobuf::MethodDescriptor& method);

// The bindings of Septa's API (septa/api_files.h). The program must link
// septa_api_proto whole (septa_link_whole_api_proto in cmake/Septa.cmake).
Result<std::vector<HttpBinding>> ApiHttpBindings();

// The services `files` of `pool` declare, in declaration order; fails
// naming a file the pool lacks.
Result<std::vector<const google::protobuf::ServiceDescriptor*>> ServicesOf(const google::protobuf::DescriptorPool& pool,
                                                                           const std::vector<std::string>& files);
// Those of Septa's API (septa/api_files.h) in the generated pool.
Result<std::vector<const google::protobuf::ServiceDescriptor*>> ApiServices();

// `pattern` with its variables' names erased: "/v1/tenants/{name}" and
// "/v1/tenants/{tenant.name}" are both "/v1/tenants/{}".
std::string PathShape(std::string_view pattern);

// The `{field.path}` variables of a path template, in order; fails on a
// segment that holds braces but is not one whole variable.
Result<std::vector<std::string>> PathTemplateVariables(std::string_view path);

}  // namespace septa::apiv1
