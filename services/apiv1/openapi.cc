#include "services/apiv1/openapi.h"

#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/duration.pb.h>
#include <google/protobuf/empty.pb.h>
#include <google/protobuf/field_mask.pb.h>
#include <google/protobuf/timestamp.pb.h>

#include <map>
#include <set>

#include "septa/api_files.h"
#include "septa/v1/http.pb.h"
#include "services/apiv1/auth_rule.h"
#include "services/base/file.h"
#include "services/base/yaml_json.h"

namespace septa::apiv1 {

namespace {

namespace pb = google::protobuf;
using Json = nlohmann::ordered_json;

constexpr std::string_view kPackagePrefix = "septa.v1.";

// "septa.v1.Capacity.Shared" -> "Capacity.Shared"; other packages keep theirs.
std::string SchemaName(const std::string& full_name) {
  return full_name.starts_with(kPackagePrefix) ? full_name.substr(kPackagePrefix.size()) : full_name;
}

Json Ref(const std::string& full_name) { return {{"$ref", "#/components/schemas/" + SchemaName(full_name)}}; }

// Comment text as a description: one leading space per line removed, blank
// lines at either end dropped; several lines end with a line break.
std::string Describe(const pb::SourceLocation& location) {
  std::vector<std::string> lines;
  std::string text = location.leading_comments + location.trailing_comments;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (line.starts_with(' ')) line.erase(0, 1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
    lines.push_back(std::move(line));
    start = end + 1;
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  while (!lines.empty() && lines.front().empty()) lines.erase(lines.begin());
  std::string out;
  for (const std::string& line : lines) out += (out.empty() ? "" : "\n") + line;
  if (lines.size() > 1) out += "\n";
  return out;
}

template <typename D>
std::string DescribeFound(const D* found) {
  pb::SourceLocation location;
  if (found == nullptr || !found->GetSourceLocation(&location)) return "";
  return Describe(location);
}

bool SaysOutputOnly(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text.find("output only") != std::string::npos;
}

// `description` set to `text` unless that is empty.
void SetDescription(Json& schema, const std::string& text) {
  if (!text.empty()) schema["description"] = text;
}

// Collects the schemas of the messages and enums the operations reach.
class Schemas {
 public:
  explicit Schemas(const ProtoComments& comments) : comments_(comments) {}

  Result<Json> Message(const pb::Descriptor& message) {
    if (auto known = WellKnown(message)) return *known;
    const std::string name(message.full_name());
    if (!done_.contains(name)) {
      done_.insert(name);
      auto schema = Object(message);
      SEPTA_RETURN_IF_ERROR(schema);
      schemas_[SchemaName(name)] = *std::move(schema);
    }
    return Ref(name);
  }

  Result<Json> Field(const pb::FieldDescriptor& field) {
    if (field.is_map()) {
      auto value = Singular(*field.message_type()->map_value());
      SEPTA_RETURN_IF_ERROR(value);
      return Json{{"type", "object"}, {"additionalProperties", *value}};
    }
    auto item = Singular(field);
    SEPTA_RETURN_IF_ERROR(item);
    if (field.is_repeated()) return Json{{"type", "array"}, {"items", *item}};
    return item;
  }

  // Sorted by name, so the document does not depend on the walk's order.
  Json All() const {
    Json out = Json::object();
    for (const auto& [name, schema] : schemas_) out[name] = schema;
    return out;
  }

 private:
  static std::optional<Json> WellKnown(const pb::Descriptor& message) {
    if (&message == pb::Timestamp::descriptor()) {
      return Json{{"type", "string"}, {"format", "date-time"}, {"description", "RFC 3339, e.g. 2026-01-02T15:04:05Z"}};
    }
    if (&message == pb::Duration::descriptor()) {
      return Json{
          {"type", "string"}, {"pattern", "^-?[0-9]+(\\.[0-9]{1,9})?s$"}, {"description", "Seconds, e.g. 3600s"}};
    }
    if (&message == pb::FieldMask::descriptor()) {
      return Json{{"type", "string"}, {"description", "Comma-separated field paths, e.g. display_name,labels"}};
    }
    if (&message == pb::Empty::descriptor()) return Json{{"type", "object"}};
    return std::nullopt;
  }

  Result<Json> Object(const pb::Descriptor& message) {
    Json properties = Json::object();
    for (int i = 0; i < message.field_count(); ++i) {
      const pb::FieldDescriptor& field = *message.field(i);
      auto schema = Field(field);
      SEPTA_RETURN_IF_ERROR(schema);
      const std::string comment = comments_.Of(field);
      SetDescription(*schema, comment);
      if (SaysOutputOnly(comment)) (*schema)["readOnly"] = true;
      properties[std::string(field.name())] = *std::move(schema);
    }
    Json object = {{"type", "object"}};
    SetDescription(object, comments_.Of(message));
    object["properties"] = std::move(properties);
    return object;
  }

  Result<Json> Enum(const pb::EnumDescriptor& e) {
    const std::string name(e.full_name());
    if (!done_.contains(name)) {
      done_.insert(name);
      Json values = Json::array();
      std::string description = comments_.Of(e);
      if (!description.empty() && !description.ends_with('\n')) description += "\n";
      for (int i = 0; i < e.value_count(); ++i) {
        const std::string value(e.value(i)->name());
        values.push_back(value);
        const std::string comment = comments_.Of(*e.value(i));
        if (!comment.empty()) description += "- " + value + ": " + comment + (comment.ends_with('\n') ? "" : "\n");
      }
      // One line keeps no line break; several end with one.
      if (!description.empty() && description.find('\n') == description.size() - 1) description.pop_back();
      Json schema = {{"type", "string"}};
      SetDescription(schema, description);
      schema["enum"] = std::move(values);
      schemas_[SchemaName(name)] = std::move(schema);
    }
    return Ref(name);
  }

  Result<Json> Singular(const pb::FieldDescriptor& field) {
    using T = pb::FieldDescriptor;
    switch (field.type()) {
      case T::TYPE_STRING: return Json{{"type", "string"}};
      case T::TYPE_BOOL: return Json{{"type", "boolean"}};
      case T::TYPE_INT32:
      case T::TYPE_SINT32:
      case T::TYPE_SFIXED32: return Json{{"type", "integer"}, {"format", "int32"}};
      case T::TYPE_UINT32:
      case T::TYPE_FIXED32: return Json{{"type", "integer"}, {"format", "int64"}, {"minimum", 0}};
      // protobuf's JSON mapping writes 64-bit integers as strings (and reads numbers too).
      case T::TYPE_INT64:
      case T::TYPE_SINT64:
      case T::TYPE_SFIXED64:
      case T::TYPE_UINT64:
      case T::TYPE_FIXED64: return Json{{"type", "string"}, {"format", "int64"}};
      case T::TYPE_DOUBLE: return Json{{"type", "number"}, {"format", "double"}};
      case T::TYPE_FLOAT: return Json{{"type", "number"}, {"format", "float"}};
      case T::TYPE_BYTES: return Json{{"type", "string"}, {"format", "byte"}};
      case T::TYPE_ENUM: return Enum(*field.enum_type());
      case T::TYPE_MESSAGE: return Message(*field.message_type());
      case T::TYPE_GROUP: break;
    }
    return InvalidArgument(std::string(field.full_name()) + ": a group cannot be described");
  }

  const ProtoComments& comments_;
  std::set<std::string> done_;
  std::map<std::string, Json> schemas_;
};

Json ProblemSchema() {
  Json codes = Json::array();
  for (int c = static_cast<int>(Code::kCancelled); c <= static_cast<int>(Code::kUnauthenticated); ++c) {
    codes.push_back(std::string(CodeName(static_cast<Code>(c))));
  }
  return {
      {"type", "object"},
      {"description", "An error (RFC 9457), as services/rest/problem.cc writes it."},
      {"required", {"type", "title", "status", "code", "message", "request_id"}},
      {"properties",
       {{"type", {{"type", "string"}}},
        {"title", {{"type", "string"}, {"description", "The HTTP reason phrase"}}},
        {"status", {{"type", "integer"}, {"description", "The HTTP status code"}}},
        {"code", {{"type", "string"}, {"enum", codes}, {"description", "The canonical (gRPC) status code"}}},
        {"message", {{"type", "string"}}},
        {"request_id", {{"type", "string"}, {"description", "Also in the X-Request-Id response header"}}},
        {"violations",
         {{"type", "array"},
          {"items",
           {{"type", "object"},
            {"required", {"field", "description"}},
            {"properties",
             {{"field", {{"type", "string"}, {"description", "The request field at fault, e.g. capacity.mig[0]"}}},
              {"description", {{"type", "string"}}}}}}}}}}},
  };
}

std::string StatusText(int status) {
  switch (status) {
    case 201: return "Created";
    case 204: return "No Content";
    default: return "OK";
  }
}

// A path variable's name in the document: the last part of its field path,
// so that "/v1/tenants/{name}" and "/v1/tenants/{tenant.name}" are one path
// (OpenAPI treats templates differing only in variable names as one).
std::string ParameterName(const std::string& field_path) { return field_path.substr(field_path.rfind('.') + 1); }

// Who may call the operation (the method's septa.v1.auth option), checked
// before its use case runs.
Json AuthDocument(const AuthRule& rule) {
  Json out = {{"caller", std::string(CallerName(rule.caller))}};
  if (rule.tenant_field) out["tenant_field"] = rule.tenant_field->text;
  if (!rule.action.empty()) out["action"] = rule.action;
  if (rule.apply_set_scope) out["apply_set_scope"] = true;
  return out;
}

std::string DocumentPath(const HttpBinding& b) {
  std::string out = b.path;
  for (const HttpPathVariable& v : b.path_variables) {
    const std::string var = "{" + v.field.text + "}";
    out.replace(out.find(var), var.size(), "{" + ParameterName(v.field.text) + "}");
  }
  return out;
}

Result<Json> Operation(const HttpBinding& b, Schemas& schemas, const ProtoComments& comments) {
  const pb::MethodDescriptor& method = *b.method;
  Json op = {{"operationId", std::string(method.name())},
             {"tags", {std::string(method.service()->name())}},
             {"summary", std::string(method.full_name())}};
  SetDescription(op, comments.Of(method));
  Json parameters = Json::array();
  for (const HttpPathVariable& v : b.path_variables) {
    auto schema = schemas.Field(v.field.leaf());
    SEPTA_RETURN_IF_ERROR(schema);
    Json parameter = {{"name", ParameterName(v.field.text)}, {"in", "path"}, {"required", true}, {"schema", *schema}};
    if (parameter["name"] != v.field.text) parameter["description"] = "Carries " + v.field.text;
    parameters.push_back(std::move(parameter));
  }
  for (const pb::FieldDescriptor* field : b.query) {
    if (field->message_type() != nullptr && field->message_type() != pb::FieldMask::descriptor()) {
      return InvalidArgument(std::string(method.full_name()) + ": query parameter " + std::string(field->name()) +
                             " must be a scalar or a FieldMask");
    }
    auto schema = schemas.Field(*field);
    SEPTA_RETURN_IF_ERROR(schema);
    Json parameter = {{"name", std::string(field->name())}, {"in", "query"}};
    SetDescription(parameter, comments.Of(*field));
    parameter["schema"] = *std::move(schema);
    parameters.push_back(std::move(parameter));
  }
  for (const HttpHeaderBinding& h : b.headers) {
    // "Carries <field>." then the field's comment, as lines of one description.
    std::string description = "Carries " + h.field.text + ".\n";
    if (std::string comment = comments.Of(h.field.leaf()); !comment.empty()) {
      description += comment + (comment.ends_with('\n') ? "" : "\n");
    }
    if (h.header == "If-Match") {
      description += "Sent as \"7\", W/\"7\" or 7; * matches any; one that names no etag (\"\") is refused.\n";
    }
    parameters.push_back(
        {{"name", h.header}, {"in", "header"}, {"schema", {{"type", "string"}}}, {"description", description}});
  }
  if (!parameters.empty()) op["parameters"] = std::move(parameters);
  if (b.has_body) {
    auto schema = schemas.Message(b.body_field ? *b.body_field->message_type() : *method.input_type());
    SEPTA_RETURN_IF_ERROR(schema);
    op["requestBody"] = {{"required", true}, {"content", {{"application/json", {{"schema", *schema}}}}}};
    if (b.form_body) op["requestBody"]["content"]["application/x-www-form-urlencoded"] = {{"schema", *schema}};
  }
  Json success = {{"description", StatusText(b.success_status)}};
  if (b.success_status != 204) {
    auto schema = schemas.Message(*method.output_type());
    SEPTA_RETURN_IF_ERROR(schema);
    success["content"] = {{"application/json", {{"schema", *schema}}}};
    if (method.output_type()->FindFieldByName("etag") != nullptr) {
      success["headers"]["ETag"] = {{"description", "The etag field, quoted"}, {"schema", {{"type", "string"}}}};
    }
    if (!b.location.empty()) {
      success["headers"]["Location"] = {{"description", "The created resource: " + b.location},
                                        {"schema", {{"type", "string"}}}};
    }
    if (b.no_store) {
      success["headers"]["Cache-Control"] = {{"description", "no-store: the response carries a secret"},
                                             {"schema", {{"type", "string"}}}};
    }
  }
  op["responses"] = {{std::to_string(b.success_status), std::move(success)},
                     {"default", {{"$ref", "#/components/responses/Problem"}}}};
  if (method.options().GetExtension(v1::auth).caller() != v1::CALLER_UNSPECIFIED) {
    auto rule = LoadAuthRule(method);
    if (!rule.ok()) return InvalidArgument(std::string(method.full_name()) + ": " + rule.status().message());
    op["x-septa-auth"] = AuthDocument(*rule);
    if (rule->caller == Caller::kAnonymous) op["security"] = Json::array();  // no credential asked for
  }
  return op;
}

}  // namespace

Result<ProtoComments> ProtoComments::Load(const std::string& descriptor_set_path) {
  auto bytes = base::ReadFile(descriptor_set_path);
  SEPTA_RETURN_IF_ERROR(bytes);
  pb::FileDescriptorSet set;
  if (!set.ParseFromString(*bytes)) return InvalidArgument(descriptor_set_path + " is not a FileDescriptorSet");
  auto pool = std::make_shared<pb::DescriptorPool>();
  for (const pb::FileDescriptorProto& file : set.file()) {
    if (pool->BuildFile(file) == nullptr) {
      return InvalidArgument(descriptor_set_path + ": " + file.name() + " does not build (imports first)");
    }
  }
  ProtoComments comments;
  comments.pool_ = std::move(pool);
  return comments;
}

std::string ProtoComments::Of(const pb::Descriptor& d) const {
  return pool_ ? DescribeFound(pool_->FindMessageTypeByName(d.full_name())) : "";
}
std::string ProtoComments::Of(const pb::FieldDescriptor& d) const {
  return pool_ ? DescribeFound(pool_->FindFieldByName(d.full_name())) : "";
}
std::string ProtoComments::Of(const pb::EnumDescriptor& d) const {
  return pool_ ? DescribeFound(pool_->FindEnumTypeByName(d.full_name())) : "";
}
std::string ProtoComments::Of(const pb::EnumValueDescriptor& d) const {
  return pool_ ? DescribeFound(pool_->FindEnumValueByName(d.full_name())) : "";
}
std::string ProtoComments::Of(const pb::ServiceDescriptor& d) const {
  return pool_ ? DescribeFound(pool_->FindServiceByName(d.full_name())) : "";
}
std::string ProtoComments::Of(const pb::MethodDescriptor& d) const {
  return pool_ ? DescribeFound(pool_->FindMethodByName(d.full_name())) : "";
}

// The portal's session routes: REST's own, not RPCs (a cookie is HTTP's),
// served by services/rest/session_routes.h and described here so that the
// portal's typed client has them with the rest.
constexpr char kSessionPaths[] = R"json({
  "/v1/sessions": {"post": {
    "operationId": "CreateSession", "tags": ["Sessions"], "security": [],
    "summary": "Signs a browser in to the portal",
    "description": "With an API token (in the body or as Authorization: Bearer) or a one-time sign-in code. Sets the session cookie (HttpOnly, SameSite=Strict; __Host- prefixed and Secure over TLS), which authenticates the API's routes for the page; a request that changes state with it must come from this origin and carry the session's csrf_token as X-Septa-CSRF. The session lives 12 hours at most, never longer than its API token or the tenant's trust tier's credential cap, and ends when that token is revoked.",
    "requestBody": {"required": false, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SignIn"}}}},
    "responses": {"201": {"description": "Signed in", "headers": {"Set-Cookie": {"description": "the session cookie", "schema": {"type": "string"}}},
                          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Session"}}}},
                  "default": {"$ref": "#/components/responses/Problem"}}}},
  "/v1/sessions/current": {
    "get": {"operationId": "GetCurrentSession", "tags": ["Sessions"], "security": [{"session": []}],
      "summary": "The session of the cookie, with its CSRF token",
      "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Session"}}}},
                    "default": {"$ref": "#/components/responses/Problem"}}},
    "delete": {"operationId": "DeleteCurrentSession", "tags": ["Sessions"], "security": [{"session": []}],
      "summary": "Signs out: the session is revoked and its cookie cleared",
      "description": "A person's session signed in with an identity provider that offers RP-initiated logout answers 200 with the provider's end_session_url, where the browser goes next to end the provider's session too (the provider then returns it to the portal's /); any other session answers 204.",
      "parameters": [{"name": "X-Septa-CSRF", "in": "header", "required": true, "schema": {"type": "string"}}],
      "responses": {"200": {"description": "Signed out here; the provider's session ends at end_session_url",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SignOut"}}}},
                    "204": {"description": "Signed out"}, "default": {"$ref": "#/components/responses/Problem"}}}},
  "/v1/sessions/providers": {"get": {
    "operationId": "ListSignInProviders", "tags": ["Sessions"], "security": [],
    "summary": "The identity providers that sign people in to the portal",
    "description": "The oidc_issuers with a client_id (docs/identity.md): for each, its name and the path that starts its sign-in. An empty list when none does.",
    "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SignInProviders"}}}},
                  "default": {"$ref": "#/components/responses/Problem"}}}},
  "/v1/sessions/oidc/start": {"get": {
    "operationId": "StartOidcSignIn", "tags": ["Sessions"], "security": [],
    "summary": "Starts a person's sign-in with an identity provider (a top-level navigation, not a fetch)",
    "description": "Authorization code with PKCE, state and nonce, run by septad as the provider's confidential client: the verifier and state stay in septad, bound to this browser by a short-lived cookie. Answers 303 to the provider's authorization endpoint; the provider returns the browser to /v1/sessions/oidc/callback.",
    "parameters": [{"name": "issuer", "in": "query", "required": true, "schema": {"type": "string"}, "description": "One of the providers' issuer (GET /v1/sessions/providers)."},
                   {"name": "return_to", "in": "query", "required": false, "schema": {"type": "string"}, "description": "The portal's page to land on once signed in: a path of this origin (default /); anything else is a 400."}],
    "responses": {"303": {"description": "To the provider's login", "headers": {"Location": {"description": "the provider's authorization URL", "schema": {"type": "string"}}}},
                  "default": {"$ref": "#/components/responses/Problem"}}}},
  "/v1/sessions/oidc/callback": {"get": {
    "operationId": "FinishOidcSignIn", "tags": ["Sessions"], "security": [],
    "summary": "Where the identity provider returns the browser (the portal client's redirect URI)",
    "description": "Redeems the code (once) and signs the browser in as a person: 303 to the sign-in's return_to with the session cookie set. A sign-in that does not complete: 303 to /sign-in?sign_in_error=<code>, code expired (took too long or already used), denied (the provider refused or the user cancelled), provider_unavailable (the provider cannot be reached), refused (septad refused the provider's answer; its log says why) or browser_mismatch (begun in another browser, or its cookie is gone); no session is made.",
    "parameters": [{"name": "code", "in": "query", "required": false, "schema": {"type": "string"}},
                   {"name": "state", "in": "query", "required": false, "schema": {"type": "string"}},
                   {"name": "iss", "in": "query", "required": false, "schema": {"type": "string"}, "description": "RFC 9207"},
                   {"name": "error", "in": "query", "required": false, "schema": {"type": "string"}},
                   {"name": "error_description", "in": "query", "required": false, "schema": {"type": "string"}}],
    "responses": {"303": {"description": "To return_to signed in, or to /sign-in?sign_in_error=<code>",
                          "headers": {"Location": {"description": "where the browser goes", "schema": {"type": "string"}},
                                      "Set-Cookie": {"description": "the session cookie, once signed in", "schema": {"type": "string"}}}},
                  "default": {"$ref": "#/components/responses/Problem"}}}}
})json";

constexpr char kSessionSchemas[] = R"json({
  "SignIn": {"type": "object", "additionalProperties": false,
    "description": "One of token and sign_in_code.",
    "properties": {"token": {"type": "string", "description": "An API token."},
                   "sign_in_code": {"type": "string", "description": "A one-time sign-in code (spent by this call)."}}},
  "Session": {"type": "object", "required": ["kind", "principal", "tenant", "role", "expire_time", "csrf_token"],
    "properties": {"kind": {"type": "string", "enum": ["token", "person"], "description": "Made from an API token, or by a person's sign-in with an identity provider."},
                   "principal": {"type": "string", "description": "What the session acts as when a request names no tenant: admin or tenant:<name>; for a person, tenant:<name> when it is a member of exactly one tenant, admin for an admin, else empty (name the tenant in the request or its Septa-Tenant header)."},
                   "tenant": {"type": "string", "description": "The tenant of principal; empty for an admin, or a person with no one tenant."},
                   "role": {"type": "string", "enum": ["owner", "editor", "viewer", ""], "description": "The role of principal (editor: a person only); empty when principal is."},
                   "person": {"$ref": "#/components/schemas/SessionPerson"},
                   "expire_time": {"type": "string", "format": "date-time"},
                   "csrf_token": {"type": "string", "description": "Sent as X-Septa-CSRF with every request that changes state."}}},
  "SessionPerson": {"type": "object", "required": ["issuer", "user"],
    "description": "The person of a session of kind person (GET /v1/caller lists its memberships).",
    "properties": {"issuer": {"type": "string"},
                   "user": {"type": "string", "description": "Its user name (the issuer's username_claim)."},
                   "groups": {"type": "array", "items": {"type": "string"}, "description": "Its groups (the issuer's groups_claim)."}}},
  "SignOut": {"type": "object", "required": ["end_session_url"],
    "properties": {"end_session_url": {"type": "string", "description": "The provider's RP-initiated logout URL, to navigate to."}}},
  "SignInProviders": {"type": "object", "required": ["providers"],
    "properties": {"providers": {"type": "array", "items": {"$ref": "#/components/schemas/SignInProvider"}}}},
  "SignInProvider": {"type": "object", "required": ["issuer", "name", "sign_in_url"],
    "properties": {"issuer": {"type": "string"},
                   "name": {"type": "string", "description": "What the sign-in page calls it (Sign in with <name>)."},
                   "sign_in_url": {"type": "string", "description": "/v1/sessions/oidc/start?issuer=<issuer, %-encoded>; the portal adds return_to."}}}
})json";

Result<nlohmann::ordered_json> OpenApiDocument(const std::vector<HttpBinding>& bindings,
                                               const ProtoComments& comments) {
  Schemas schemas(comments);
  Json paths = Json::object();
  Json tags = Json::array();
  std::set<std::string> operation_ids;
  std::set<std::string> tag_names;
  std::map<std::string, std::string> document_paths;  // by PathShape
  for (const HttpBinding& b : bindings) {
    if (!operation_ids.insert(std::string(b.method->name())).second) {
      return InvalidArgument("two RPCs are named " + std::string(b.method->name()) + "; operation ids must be unique");
    }
    const std::string service(b.method->service()->name());
    if (tag_names.insert(service).second) {
      Json tag = {{"name", service}};
      SetDescription(tag, comments.Of(*b.method->service()));
      tags.push_back(std::move(tag));
    }
    std::string verb = b.verb;
    for (char& c : verb) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto op = Operation(b, schemas, comments);
    SEPTA_RETURN_IF_ERROR(op);
    const std::string path = DocumentPath(b);
    auto [known, added] = document_paths.emplace(PathShape(b.path), path);
    if (!added && known->second != path) {
      return InvalidArgument(std::string(b.method->full_name()) + ": path " + b.path + " names its variables unlike " +
                             known->second);
    }
    if (paths.contains(path) && paths[path].contains(verb)) {
      return InvalidArgument(std::string(b.method->full_name()) + ": another RPC is bound to " + b.verb + " " + path);
    }
    paths[path][verb] = *std::move(op);
  }
  const Json session_paths = Json::parse(kSessionPaths);
  for (auto it = session_paths.begin(); it != session_paths.end(); ++it) paths[it.key()] = it.value();
  Json components = {
      {"securitySchemes",
       {{"bearer", {{"type", "http"}, {"scheme", "bearer"}}},
        {"session", {{"type", "apiKey"}, {"in", "cookie"}, {"name", "septa_session"}}}}},
      {"responses",
       {{"Problem",
         {{"description", "An error"},
          {"content", {{"application/problem+json", {{"schema", {{"$ref", "#/components/schemas/Problem"}}}}}}}}}}},
      {"schemas", schemas.All()},
  };
  components["schemas"]["Problem"] = ProblemSchema();
  const Json session_schemas = Json::parse(kSessionSchemas);
  for (auto it = session_schemas.begin(); it != session_schemas.end(); ++it)
    components["schemas"][it.key()] = it.value();
  tags.push_back({{"name", "Sessions"},
                  {"description",
                   "The portal's sign-in, with an API token or a person's identity provider (REST only: a cookie)."}});
  return Json{
      {"openapi", "3.1.0"},
      {"info",
       {{"title", "Septa API"},
        {"version", "v1"},
        {"description",
         "Generated by septa-openapi from the (septa.v1.http) options of api/proto/septa/v1/*.proto; do not "
         "edit: run scripts/gen_openapi.sh. Bodies are protobuf's JSON mapping of the messages; responses name "
         "fields by their .proto names, requests may also use the lowerCamelCase JSON names. Each operation's "
         "x-septa-auth (the (septa.v1.auth) option) says who may call it, checked before anything else: caller any "
         "(any valid token), writer (an owner token of a tenant that is not suspended, or an admin's), admin, admin "
         "writer; tenant_field, the request field naming the tenant acted on (another tenant's token gets 404); "
         "action, what a refusal (403) says may not be done."}}},
      // An API token, or the portal's session cookie (kSessionPaths).
      {"security", {{{"bearer", Json::array()}}, {{"session", Json::array()}}}},
      {"tags", std::move(tags)},
      {"paths", std::move(paths)},
      {"components", std::move(components)},
  };
}

Result<std::string> OpenApiYaml() {
  auto bindings = ApiHttpBindings();
  SEPTA_RETURN_IF_ERROR(bindings);
  auto comments = ProtoComments::Load(api::kBuildDescriptorSet);
  SEPTA_RETURN_IF_ERROR(comments);
  auto doc = OpenApiDocument(*bindings, *comments);
  SEPTA_RETURN_IF_ERROR(doc);
  return base::JsonToYaml(*doc);
}

}  // namespace septa::apiv1
