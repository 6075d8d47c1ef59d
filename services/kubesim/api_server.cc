#include "services/kubesim/api_server.h"

#include <boost/beast/http/field.hpp>

#include "services/http/target.h"
#include "services/kube/config.h"
#include "services/kubesim/api_internal.h"
#include "services/kubesim/scale.h"

namespace septa::kubesim {

namespace bhttp = boost::beast::http;
using nlohmann::json;

namespace {

ApiError NotFoundPath() {
  ApiError e;
  e.code = 404;
  e.reason = "NotFound";
  e.message = "the server could not find the requested resource";
  return e;
}

}  // namespace

void ReplyJson(http::Exchange& ex, int status, std::string body, std::string_view warning) {
  http::Response res{static_cast<bhttp::status>(status), 11};
  res.set(bhttp::field::content_type, "application/json");
  if (!warning.empty()) res.set(bhttp::field::warning, "299 - \"" + std::string(warning) + "\"");
  res.body() = std::move(body);
  ex.Reply(std::move(res));
}

void ReplyError(http::Exchange& ex, const ApiError& error) {
  http::Response res{static_cast<bhttp::status>(error.code), 11};
  res.set(bhttp::field::content_type, "application/json");
  if (error.retry_after_seconds > 0) res.set(bhttp::field::retry_after, std::to_string(error.retry_after_seconds));
  res.body() = error.ToJson().dump();
  ex.Reply(std::move(res));
}

ApiServer::ApiServer(Cluster& cluster, ApiServerOptions options)
    : impl_(std::make_shared<Impl>(cluster, std::move(options))) {
  std::weak_ptr<Impl> impl = impl_;
  cluster.authenticator.SetTokenVerifier([impl](std::string_view token) -> std::optional<UserInfo> {
    auto alive = impl.lock();
    return alive ? alive->ServiceAccountUser(token) : std::nullopt;
  });
}

void ApiServer::Tick() {
  impl_->cluster.storage.BookmarkAll();
  impl_->SyncQuotas();
  impl_->ExpireEvents();
}

// When an event was last written: the latest of the times its writers set
// (kube-apiserver renews the event's etcd lease at each write instead).
static TimePoint LastWritten(const json& event) {
  TimePoint last{};
  auto consider = [&](const json& object, const char* key) {
    auto it = object.find(key);
    if (it == object.end() || !it->is_string()) return;
    if (auto at = ParseRfc3339(it->get<std::string>())) last = std::max(last, *at);
  };
  for (const char* key : {"lastTimestamp", "eventTime", "firstTimestamp"}) consider(event, key);
  if (auto md = event.find("metadata"); md != event.end() && md->is_object()) consider(*md, "creationTimestamp");
  if (auto series = event.find("series"); series != event.end() && series->is_object())
    consider(*series, "lastObservedTime");
  return last;
}

void ApiServer::Impl::ExpireEvents() {
  const TimePoint now = cluster.clock.Now();
  if (now < next_event_sweep) return;
  next_event_sweep = now + std::chrono::minutes(1);
  const TimePoint cutoff = now - options.event_ttl;
  for (const ObjectPtr& event : cluster.storage.List("events", "", nullptr, 0, "").items) {
    if (LastWritten(*event) >= cutoff) continue;
    const json& md = (*event)["metadata"];
    // Still expired when deleted: a write since the listing renews it.
    (void)cluster.storage.Mutate("events", md.value("namespace", ""), md.value("name", ""),
                                 [&](const json* current) -> ApiResult<Mutation> {
                                   if (current == nullptr || LastWritten(*current) >= cutoff) return Mutation{};
                                   return Mutation{Mutation::Kind::kDelete, {}};
                                 });
  }
}

static std::shared_ptr<const ResourceType> FindAnyVersion(const ResourceRegistry& registry, const std::string& group,
                                                          const std::string& resource) {
  auto type = registry.Find(group, "v1", resource);
  if (!type) {
    for (const auto& t : registry.All()) {
      if (t->group == group && t->resource == resource) type = t;
    }
  }
  return type;
}

ApiResult<ObjectPtr> ApiServer::CreateObject(const std::string& group, const std::string& resource, json object,
                                             const std::string& field_manager) {
  auto type = FindAnyVersion(impl_->cluster.registry, group, resource);
  if (!type) return NotFoundPath();
  std::string ns = object["metadata"].value("namespace", "");
  return impl_->CreateParsed(*type, ns, std::move(object), false, field_manager);
}

ApiResult<ObjectPtr> ApiServer::DeleteObject(const std::string& group, const std::string& resource,
                                             const std::string& ns, const std::string& name) {
  auto type = FindAnyVersion(impl_->cluster.registry, group, resource);
  if (!type) return NotFoundPath();
  return impl_->DeleteOne(*type, ns, name, json{{"propagationPolicy", "Background"}}, false);
}

Status SeedCluster(ApiServer& api) {
  auto check = [](const ApiResult<ObjectPtr>& created) {
    if (created.ok()) return Status::Ok();
    const ApiError& e = created.error();
    if (e.code == 409) return Status::Ok();  // already there
    return Unavailable("seeding the cluster: " + e.message);
  };
  for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    SEPTA_RETURN_IF_ERROR(check(api.CreateObject(
        "", "namespaces", {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}})));
  }
  for (auto& role : BuiltinClusterRoles())
    SEPTA_RETURN_IF_ERROR(check(api.CreateObject("rbac.authorization.k8s.io", "clusterroles", role)));
  return Status::Ok();
}

void ApiServer::Handle(http::Request&& request, std::shared_ptr<http::Exchange> exchange) {
  Call call;
  call.request = std::move(request);
  call.exchange = std::move(exchange);
  try {
    impl_->Route(call);
  } catch (const std::exception& e) {
    ReplyError(*call.exchange, InternalError(std::string("kubesim: ") + e.what()));
  }
}

void ApiServer::Impl::Route(Call& call) {
  const auto raw_target = call.request.target();
  std::optional<http::Target> target = http::ParseTarget(std::string_view(raw_target.data(), raw_target.size()));
  if (!target) {
    ReplyError(*call.exchange, BadRequestError("malformed %-escape in the request URI"));
    return;
  }
  call.query = std::move(target->query);
  const std::vector<std::string>& segments = target->segments;
  http::Exchange& ex = *call.exchange;

  if (segments.size() == 1 && (segments[0] == "healthz" || segments[0] == "readyz" || segments[0] == "livez")) {
    http::Response res{bhttp::status::ok, 11};
    res.set(bhttp::field::content_type, "text/plain");
    res.body() = "ok";
    return ex.Reply(std::move(res));
  }
  const auto authorization = call.request[bhttp::field::authorization];
  auto user =
      cluster.authenticator.Authenticate(ex.connection(), std::string_view(authorization.data(), authorization.size()));
  if (!user) return ReplyError(ex, UnauthorizedError());
  call.user = std::move(*user);
  std::string accept(call.request[bhttp::field::accept]);
  call.table = accept.find("as=Table") != std::string::npos;

  if (Discovery(call, segments) || OpenApi(call, segments)) return;

  // /api/v1/... or /apis/<group>/<version>/...
  std::string group;
  std::size_t i = 0;
  if (segments.size() >= 2 && segments[0] == "api") {
    call.version = segments[1];
    i = 2;
  } else if (segments.size() >= 3 && segments[0] == "apis") {
    group = segments[1];
    call.version = segments[2];
    i = 3;
  } else {
    return ReplyError(ex, NotFoundPath());
  }
  std::vector<std::string> rest(segments.begin() + static_cast<long>(i), segments.end());
  if (rest.size() >= 3 && rest[0] == "namespaces") {
    auto t = cluster.registry.Find(group, call.version, rest[2]);
    if (t && t->namespaced) {
      call.ns = rest[1];
      rest.erase(rest.begin(), rest.begin() + 2);
    }
  }
  if (rest.empty() || rest.size() > 3) return ReplyError(ex, NotFoundPath());
  call.type = cluster.registry.Find(group, call.version, rest[0]);
  if (!call.type) return ReplyError(ex, NotFoundPath());
  if (rest.size() >= 2) call.name = rest[1];
  if (rest.size() == 3) call.subresource = rest[2];
  if (call.type->namespaced && call.ns.empty() && !call.name.empty()) return ReplyError(ex, NotFoundPath());
  if (!call.subresource.empty() && !(call.subresource == "status" && call.type->has_status) &&
      !(call.subresource == "binding" && call.type->group.empty() && call.type->resource == "pods") &&
      !(call.subresource == "scale" && ServesScale(*call.type)) &&
      !(call.subresource == "token" && call.type->group.empty() && call.type->resource == "serviceaccounts")) {
    return ReplyError(ex, NotFoundPath());
  }

  const auto method = call.request.method();
  bool watch = call.Query("watch") == "1" || call.Query("watch") == "true";
  std::string verb;
  if (method == bhttp::verb::get) verb = call.name.empty() ? (watch ? "watch" : "list") : "get";
  else if (method == bhttp::verb::post) verb = "create";
  else if (method == bhttp::verb::put) verb = "update";
  else if (method == bhttp::verb::patch) verb = "patch";
  else if (method == bhttp::verb::delete_) verb = call.name.empty() ? "deletecollection" : "delete";
  else return ReplyError(ex, MethodNotAllowedError("the server does not allow this method on the requested resource"));

  AccessRequest access{verb, call.type->group, call.type->resource, call.subresource, call.ns, call.name};
  if (!Authorize(call.user, access, cluster.storage)) {
    std::string what = call.type->resource + (call.type->group.empty() ? "" : "." + call.type->group);
    std::string scope = call.ns.empty() ? "at the cluster scope" : "in the namespace \"" + call.ns + "\"";
    ApiError e = ForbiddenError(what + (call.name.empty() ? "" : " \"" + call.name + "\"") + " is forbidden: User \"" +
                                call.user.name + "\" cannot " + verb + " resource \"" + call.type->resource +
                                "\" in API group \"" + call.type->group + "\" " + scope);
    if (options.on_forbidden) options.on_forbidden(e.message);
    e.name = call.name;
    e.group = call.type->group;
    e.kind = call.type->resource;
    return ReplyError(ex, e);
  }

  if (IsTokenReview(*call.type)) {
    if (verb != "create") return ReplyError(ex, MethodNotAllowedError("tokenreviews accept POST only"));
    return TokenReview(call);
  }
  if (call.subresource == "scale") return Scale(call);
  if (call.subresource == "token") {
    if (verb != "create") return ReplyError(ex, MethodNotAllowedError("serviceaccounts/token accepts POST only"));
    return TokenRequest(call);
  }
  if (verb == "get") return Get(call);
  if (verb == "list") return List(call);
  if (verb == "watch") return Watch(call);
  if (verb == "create") {
    if (call.subresource == "binding") return Bind(call);
    if (!call.name.empty()) return ReplyError(ex, MethodNotAllowedError("POST is not allowed on a named object"));
    return Create(call);
  }
  if (call.name.empty() && verb != "deletecollection")
    return ReplyError(ex, MethodNotAllowedError("the server does not allow this method on the requested resource"));
  if (verb == "update") return Update(call);
  if (verb == "patch") return Patch(call);
  if (verb == "delete") return Delete(call);
  return DeleteCollection(call);
}

std::string ApiServer::Impl::Encode(const Call& call, const json& obj) const {
  if (call.type->from_crd && obj.value("apiVersion", "") != call.api_version()) {
    json copy = obj;
    copy["apiVersion"] = call.api_version();
    return copy.dump();
  }
  return obj.dump();
}

}  // namespace septa::kubesim
