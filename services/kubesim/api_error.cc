#include "services/kubesim/api_error.h"

namespace septa::kubesim {

namespace {

std::string Qualified(const std::string& resource, const std::string& group) {
  return group.empty() ? resource : resource + "." + group;
}

ApiError Make(int code, std::string reason, std::string message) {
  ApiError e;
  e.code = code;
  e.reason = std::move(reason);
  e.message = std::move(message);
  return e;
}

// An error about one named object: details carry its name, group and kind.
ApiError MakeFor(int code, std::string reason, std::string message, const std::string& resource,
                 const std::string& group, const std::string& name) {
  ApiError e = Make(code, std::move(reason), std::move(message));
  e.name = name;
  e.group = group;
  e.kind = resource;
  return e;
}

}  // namespace

nlohmann::json ApiError::ToJson() const {
  nlohmann::json j = {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
                      {"status", "Failure"}, {"message", message}, {"reason", reason},
                      {"code", code}};
  nlohmann::json details = nlohmann::json::object();
  if (!name.empty()) details["name"] = name;
  if (!group.empty()) details["group"] = group;
  if (!kind.empty()) details["kind"] = kind;
  if (!causes.empty()) {
    details["causes"] = nlohmann::json::array();
    for (const auto& c : causes)
      details["causes"].push_back({{"reason", c.reason}, {"message", c.message}, {"field", c.field}});
  }
  if (retry_after_seconds > 0) details["retryAfterSeconds"] = retry_after_seconds;
  if (!details.empty()) j["details"] = std::move(details);
  return j;
}

ApiError NotFoundError(const std::string& resource, const std::string& group, const std::string& name) {
  return MakeFor(404, "NotFound", Qualified(resource, group) + " \"" + name + "\" not found", resource, group, name);
}

ApiError AlreadyExistsError(const std::string& resource, const std::string& group, const std::string& name) {
  return MakeFor(409, "AlreadyExists", Qualified(resource, group) + " \"" + name + "\" already exists", resource, group,
                 name);
}

ApiError ConflictError(const std::string& resource, const std::string& group, const std::string& name,
                       const std::string& why) {
  return MakeFor(409, "Conflict",
                 "Operation cannot be fulfilled on " + Qualified(resource, group) + " \"" + name + "\": " + why,
                 resource, group, name);
}

ApiError StaleUpdateError(const std::string& resource, const std::string& group, const std::string& name) {
  return ConflictError(resource, group, name,
                       "the object has been modified; please apply your changes to the latest version and try again");
}

ApiError InvalidError(const std::string& kind, const std::string& group, const std::string& name,
                      std::vector<StatusCause> causes) {
  std::string message = kind + (group.empty() ? "" : "." + group) + " \"" + name + "\" is invalid: ";
  for (std::size_t i = 0; i < causes.size(); ++i) {
    if (i) message += ", ";
    message += causes[i].field + ": " + causes[i].message;
  }
  ApiError e = Make(422, "Invalid", message);
  e.name = name;
  e.group = group;
  e.kind = kind;
  e.causes = std::move(causes);
  return e;
}

ApiError BadRequestError(std::string message) { return Make(400, "BadRequest", std::move(message)); }
ApiError ForbiddenError(std::string message) { return Make(403, "Forbidden", std::move(message)); }
ApiError UnauthorizedError() { return Make(401, "Unauthorized", "Unauthorized"); }
ApiError GoneError(std::string message) { return Make(410, "Expired", std::move(message)); }
ApiError MethodNotAllowedError(std::string message) { return Make(405, "MethodNotAllowed", std::move(message)); }
ApiError UnsupportedMediaTypeError(std::string message) {
  return Make(415, "UnsupportedMediaType", std::move(message));
}
ApiError InternalError(std::string message) { return Make(500, "InternalError", std::move(message)); }
ApiError ServiceUnavailableError(std::string message) {
  ApiError e = Make(503, "ServiceUnavailable", std::move(message));
  e.retry_after_seconds = 1;
  return e;
}

}  // namespace septa::kubesim
