// An HTTP request bound into an RPC's request message by its
// (septa.v1.http) binding (services/apiv1/http_bindings.h), and the RPC's
// response written back as HTTP: the rules api/proto/septa/v1/http.proto
// states, applied to every RPC alike.
#pragma once

#include <map>
#include <string>

#include <google/protobuf/message.h>

#include "common/status.h"
#include "services/apiv1/http_bindings.h"
#include "services/http/server.h"
#include "services/http/target.h"

namespace septa::rest {

// The path's variables (`params`, by field path) into `request`.
void BindPath(const apiv1::HttpBinding& binding, const std::map<std::string, std::string>& params,
              google::protobuf::Message& request);

// Everything else: the JSON body (which may repeat a path variable only with
// the URL's value), the header bindings (If-Match as an entity tag, which
// wins over the body's value), the query parameters, and a PATCH's implicit
// update mask (the fields the body sent). Errors name the field as the
// client sent it: relative to the body, or the query parameter or header.
Status BindRequest(const apiv1::HttpBinding& binding, const http::Request& http_request, const http::Target& target,
                   google::protobuf::Message& request);

// The request's media type (Content-Type without parameters), in lower case.
std::string MediaType(const http::Request& http_request);

// The etag an If-Match header requires: "7", W/"7" or 7; empty without the
// header or with * (any version). A header that names no etag is refused.
Result<std::string> IfMatch(const http::Request& http_request);
// Whether the request's If-None-Match (a list, or "*") names `etag` (quoted,
// as sent in ETag), compared weakly (RFC 9110 13.1.2).
bool IfNoneMatchNames(const http::Request& http_request, std::string_view etag);

// The RPC's response: its success status, the JSON body (none for 204), an
// ETag header from a top-level `etag`, Location for a created resource,
// Cache-Control: no-store for a secret.
// `validate_only`: the request asked only for a check (AIP-163).
http::Response RpcResponse(const apiv1::HttpBinding& binding, const google::protobuf::Message& response,
                           bool validate_only);
// Whether `request` has a `validate_only` field that is set.
bool IsValidateOnly(const google::protobuf::Message& request);

// A JSON response of `message` (protobuf's JSON mapping, .proto field names).
http::Response JsonResponse(http::HttpStatus status, const google::protobuf::Message& message);

}  // namespace septa::rest
