#include "services/rest/rest_api.h"

#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/http/field.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "services/apiv1/api.h"
#include "services/apiv1/latency_buckets.h"
#include "services/core/crypto.h"
#include "services/core/deadline.h"
#include "services/http/target.h"
#include "services/rest/person_sign_in_routes.h"
#include "services/rest/problem.h"
#include "services/rest/request_binding.h"
#include "services/rest/session_routes.h"
#include "services/rest/web_app.h"

namespace septa::rest {

namespace {

namespace bh = boost::beast::http;
using http::View;
using Clock = std::chrono::steady_clock;

// What a route handler sees of a request.
struct Call {
  const http::Request& request;
  const http::Target& target;
  const std::map<std::string, std::string>& params;  // path variables
  const core::RequestContext& ctx;
  // Set when the portal's session cookie authenticated the request.
  const std::optional<core::AuthenticatedSession>& session;
  std::string_view session_cookie;
  const std::string& client;  // the address the request came from
};

using RouteFn = std::function<Result<http::Response>(const Call&)>;

// kToken: an API token as Authorization: Bearer, or the portal's session
// cookie (then a state change must be same-origin with the CSRF token);
// kSession: the cookie only; kNone: anyone.
enum class Auth { kToken, kSession, kNone };
// What a route's body must be (else 415): none is read, JSON, or JSON or
// an HTML form (an OAuth token endpoint's).
enum class Body { kNone, kJson, kJsonOrForm };
// Routes run on the worker pool (they call the store); one that touches
// nothing is answered on the I/O thread and saves the hop.
enum class RunsOn { kWorker, kIoThread };

struct Route {
  bh::verb method;
  std::string pattern;                // "/v1/tenants/{name}"
  std::vector<std::string> segments;  // split pattern
  Auth auth = Auth::kToken;
  RunsOn runs_on = RunsOn::kWorker;
  Body body = Body::kNone;
  RouteFn fn;
  bool rpc = false;  // the binding of an RPC
};

bool Match(const Route& route, const std::vector<std::string>& segments, std::map<std::string, std::string>& params) {
  if (route.segments.size() != segments.size()) return false;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const std::string& p = route.segments[i];
    const std::size_t close = p.find('}');
    if (p.size() > 2 && p.front() == '{' && close != std::string::npos) {
      // "{name}" or, for a custom method, "{name}:verb".
      const std::string_view suffix = std::string_view(p).substr(close + 1);
      const std::string& s = segments[i];
      if (s.size() <= suffix.size() || !s.ends_with(suffix)) return false;
      params[p.substr(1, close - 1)] = s.substr(0, s.size() - suffix.size());
    } else if (p != segments[i]) {
      return false;
    }
  }
  return true;
}

// What /healthz and /readyz answer when their probe passes.
http::Response ProbePassed(std::string_view status) {
  http::Response r(http::HttpStatus::ok, 11);
  r.set(bh::field::content_type, "application/json");
  r.body() = "{\"status\":\"" + std::string(status) + "\"}\n";
  return r;
}

Status CheckContentType(const http::Request& req, Body body) {
  const std::string type = MediaType(req);
  if (type == "application/json" || type == "application/merge-patch+json") return Status::Ok();
  if (body == Body::kJsonOrForm) {
    if (type == "application/x-www-form-urlencoded") return Status::Ok();
    return InvalidField("Content-Type",
                        "must be application/json or application/x-www-form-urlencoded, got " + QuotedExcerpt(type));
  }
  return InvalidField("Content-Type", "must be application/json, got " + QuotedExcerpt(type));
}

// A read without an entity tag of its own (a list, a quota, the free
// capacity) gets a weak one of its body, so that a poller that sends it back
// as If-None-Match is answered 304 without the body while nothing changed.
// `private, no-cache` lets a browser keep the body and revalidate it on
// every fetch, so the portal's polling gets the 304s without asking for
// them. A resource's own ETag is its version, which clients write with
// If-Match; it is left alone.
http::Response Revalidated(const http::Request& request, http::Response response) {
  if (response.result() != http::HttpStatus::ok || response.find(bh::field::etag) != response.end()) return response;
  const std::string etag = "W/\"" + core::Sha256Hex(response.body()).substr(0, 32) + "\"";
  response.set(bh::field::etag, etag);
  if (response.find(bh::field::cache_control) == response.end())
    response.set(bh::field::cache_control, "private, no-cache");
  if (!IfNoneMatchNames(request, etag)) return response;
  http::Response not_modified(http::HttpStatus::not_modified, 11);
  not_modified.set(bh::field::etag, etag);
  if (auto it = response.find(bh::field::cache_control); it != response.end()) {
    not_modified.set(bh::field::cache_control, it->value());
  }
  return not_modified;
}

// Serves one RPC: binds the request, checks who may call it as early as the
// request allows (the tenant in the path and the caller before the body is
// read, so that a principal that may not call is refused whatever it sends),
// runs it and writes its response.
Result<http::Response> ServeRpc(const apiv1::Rpc& rpc, bool tenant_in_path, core::PeopleAuthenticator& people,
                                const Call& c) {
  core::RequestContext ctx = c.ctx;
  std::unique_ptr<google::protobuf::Message> request = rpc.NewRequest();
  // A person acts as its membership in the tenant the request names
  // (core/people.h), so its principal is known once that is read.
  auto authorize = [&]() -> Status {
    if (ctx.person != nullptr) {
      const std::string tenant = apiv1::RequestTenant(rpc, *request, View(c.request[core::kTenantSelectorHeader]));
      SEPTA_ASSIGN_OR_RETURN(ctx.principal, people.PrincipalFor(*ctx.person, tenant));
    }
    return apiv1::Authorize(rpc, ctx.principal, *request);
  };
  BindPath(rpc.http, c.params, *request);
  // The path names the tenant, or the request names none: refused before
  // the body is read.
  const bool known_early = tenant_in_path || !rpc.auth.tenant_field;
  if (known_early) {
    SEPTA_RETURN_IF_ERROR(authorize());
  } else if (ctx.person == nullptr) {
    SEPTA_RETURN_IF_ERROR(apiv1::CheckCaller(rpc.auth, ctx.principal));
  }
  SEPTA_RETURN_IF_ERROR(BindRequest(rpc.http, c.request, c.target, *request));
  if (!known_early) SEPTA_RETURN_IF_ERROR(authorize());
  SEPTA_ASSIGN_OR_RETURN(const std::unique_ptr<google::protobuf::Message> response, rpc.Invoke(ctx, *request));
  http::Response r = RpcResponse(rpc.http, *response, IsValidateOnly(*request));
  return c.request.method() == bh::verb::get ? Revalidated(c.request, std::move(r)) : r;
}

// Paths that are never the portal's, so that a mistyped API call gets the
// API's 404 (problem+json), not the app's page.
bool IsApiPath(std::string_view path) { return path == "/v1" || path.starts_with("/v1/"); }

}  // namespace

struct RestApi::Impl {
  Impl(std::shared_ptr<const apiv1::Api> api, core::UseCases uc, prometheus::Registry& registry, RestApiOptions options)
      : api(std::move(api)),
        uc(uc),
        metrics(registry),
        more_metrics(std::move(options.more_metrics)),
        web_app(std::move(options.web_app)),
        cookie{options.tls},
        pool(options.worker_threads),
        requests(prometheus::BuildCounter()
                     .Name("septa_http_requests_total")
                     .Help("HTTP requests by route, method and status code")
                     .Register(registry)),
        latency(prometheus::BuildHistogram()
                    .Name("septa_http_request_duration_seconds")
                    .Help("HTTP request latency by route and method")
                    .Register(registry)) {
    AddRoutes();
  }

  void AddRoutes();
  http::Response Metrics() const;  // every registered family, in the text format
  void Add(bh::verb method, std::string pattern, RouteFn fn, Auth auth = Auth::kToken, RunsOn runs_on = RunsOn::kWorker,
           Body body = Body::kNone) {
    Route r{method, pattern, http::ParseTarget(pattern)->segments, auth, runs_on, body, std::move(fn)};
    routes.push_back(std::move(r));
  }
  void AddSessionRoutes();
  Result<core::AuthenticatedSession> AuthenticateCookie(std::string_view cookie_value, std::string_view tenant,
                                                        const std::string& request_id);
  void Serve(http::Request&& req, std::shared_ptr<http::Exchange> exchange);
  http::Response Run(const Route& route, const http::Request& req, const http::Target& target,
                     const std::map<std::string, std::string>& params, const std::string& request_id,
                     const std::string& client);
  void Finish(const std::shared_ptr<http::Exchange>& exchange, http::Response response, const std::string& route,
              const http::Request& req, const std::string& request_id, Clock::time_point start);

  std::shared_ptr<const apiv1::Api> api;
  core::UseCases uc;
  prometheus::Registry& metrics;
  std::vector<std::shared_ptr<prometheus::Collectable>> more_metrics;
  std::shared_ptr<const WebApp> web_app;
  SessionCookie cookie;
  boost::asio::thread_pool pool;
  prometheus::Family<prometheus::Counter>& requests;
  prometheus::Family<prometheus::Histogram>& latency;
  std::vector<Route> routes;
};

http::Response RestApi::Impl::Metrics() const {
  http::Response r(http::HttpStatus::ok, 11);
  r.set(bh::field::content_type, "text/plain; version=0.0.4");
  std::vector<prometheus::MetricFamily> families = metrics.Collect();
  for (const auto& c : more_metrics) {
    auto more = c->Collect();
    families.insert(families.end(), more.begin(), more.end());
  }
  r.body() = prometheus::TextSerializer().Serialize(families);
  return r;
}

void RestApi::Impl::AddRoutes() {
  Add(
      bh::verb::get, "/healthz",
      [this](const Call&) -> Result<http::Response> {
        SEPTA_RETURN_IF_ERROR(uc.probes.Live());
        return ProbePassed("ok");
      },
      Auth::kNone, RunsOn::kIoThread);
  Add(
      bh::verb::get, "/readyz",
      [this](const Call&) -> Result<http::Response> {
        SEPTA_RETURN_IF_ERROR(uc.probes.Ready());
        return ProbePassed("ready");
      },
      Auth::kNone);
  Add(
      bh::verb::get, "/metrics",
      [this](const Call& c) -> Result<http::Response> {
        SEPTA_RETURN_IF_ERROR(core::RequireAdmin(c.ctx.principal, "read /metrics (every tenant's figures)"));
        return Metrics();
      },
      Auth::kToken);

  AddSessionRoutes();
  for (const apiv1::Rpc& rpc : api->rpcs()) {
    const bool tenant_in_path =
        rpc.auth.tenant_field && std::ranges::any_of(rpc.http.path_variables, [&](const apiv1::HttpPathVariable& v) {
          return v.field.text == rpc.auth.tenant_field->text;
        });
    const Body body = !rpc.http.has_body ? Body::kNone : rpc.http.form_body ? Body::kJsonOrForm : Body::kJson;
    Add(
        bh::string_to_verb(rpc.http.verb), rpc.http.path,
        [this, &rpc, tenant_in_path](const Call& c) { return ServeRpc(rpc, tenant_in_path, uc.people, c); },
        rpc.auth.caller == apiv1::Caller::kAnonymous ? Auth::kNone : Auth::kToken, RunsOn::kWorker, body);
    routes.back().rpc = true;
  }
}

void RestApi::Impl::AddSessionRoutes() {
  Add(
      bh::verb::post, "/v1/sessions",
      [this](const Call& c) { return CreateSession(uc.sessions, c.request, cookie, c.ctx.request_id); }, Auth::kNone);
  Add(
      bh::verb::get, "/v1/sessions/current",
      [](const Call& c) -> Result<http::Response> { return CurrentSession(*c.session, c.session_cookie); },
      Auth::kSession);
  Add(
      bh::verb::delete_, "/v1/sessions/current",
      [this](const Call& c) {
        return DeleteSession(uc.sessions, uc.person_sign_in, *c.session, c.ctx, c.request, cookie);
      },
      Auth::kSession);
  Add(
      bh::verb::get, "/v1/sessions/providers",
      [this](const Call&) -> Result<http::Response> { return ListSignInProviders(uc.person_sign_in); }, Auth::kNone,
      RunsOn::kIoThread);
  Add(
      bh::verb::get, "/v1/sessions/oidc/start",
      [this](const Call& c) {
        return StartSignIn(uc.person_sign_in, c.request, c.target, cookie, c.client, c.ctx.request_id);
      },
      Auth::kNone);
  Add(
      bh::verb::get, kSignInCallbackPath,
      [this](const Call& c) -> Result<http::Response> {
        return FinishSignIn(uc.person_sign_in, c.request, c.target, cookie, c.ctx.request_id);
      },
      Auth::kNone);
}

// The portal's session of the request's cookie: an API token's, or a
// person's, whose principal is the one it has in `tenant` (the selector).
Result<core::AuthenticatedSession> RestApi::Impl::AuthenticateCookie(std::string_view cookie_value,
                                                                     std::string_view tenant,
                                                                     const std::string& request_id) {
  if (!core::ParsePersonCookie(cookie_value) || uc.person_sign_in == nullptr) {
    return uc.authenticator.AuthenticateSession(cookie_value);
  }
  SEPTA_ASSIGN_OR_RETURN(const core::SignedInPerson signed_in,
                         uc.person_sign_in->Authenticate(cookie_value, request_id));
  core::AuthenticatedSession session;
  SEPTA_ASSIGN_OR_RETURN(session.principal, uc.people.PrincipalFor(*signed_in.person, tenant));
  session.principal.token_id = signed_in.session_id;
  session.expire_time = signed_in.expire_time;
  session.person = signed_in.person;
  return session;
}

http::Response RestApi::Impl::Run(const Route& route, const http::Request& req, const http::Target& target,
                                  const std::map<std::string, std::string>& params, const std::string& request_id,
                                  const std::string& client) {
  core::DeadlineScope deadline(uc.db_request_timeout);  // authentication and the use case alike
  core::RequestContext ctx;
  ctx.request_id = request_id;
  ctx.surface = core::Surface::kRest;  // an anonymous route's too (a token exchange is audited by it)
  std::optional<core::AuthenticatedSession> session;
  const std::string_view session_cookie = cookie.Find(req);
  const std::string_view authorization = View(req[bh::field::authorization]);
  // A person's principal here is for the selector's tenant; an RPC's is
  // chosen again for the tenant its request names (ServeRpc).
  const std::string_view selector = View(req[core::kTenantSelectorHeader]);
  if (route.auth != Auth::kNone) {
    if (Status st = core::CheckTenantSelector(core::kTenantSelectorHeader, selector); !st.ok()) {
      return ProblemResponse(st, request_id);
    }
  }
  if (route.auth == Auth::kSession ||
      (route.auth == Auth::kToken && authorization.empty() && !session_cookie.empty())) {
    auto found = AuthenticateCookie(session_cookie, selector, request_id);
    if (!found.ok()) {
      http::Response r = ProblemResponse(
          session_cookie.empty() ? Unauthenticated("not signed in: no session cookie") : found.status(), request_id);
      if (!session_cookie.empty()) r.set(bh::field::set_cookie, cookie.SetCookie("", 0));  // a dead one
      return r;
    }
    if (Status st = CheckSameOrigin(req, cookie.tls, session_cookie); !st.ok()) return ProblemResponse(st, request_id);
    ctx.principal = found->principal;
    ctx.person = found->person;
    ctx.surface = core::Surface::kPortal;
    session = *std::move(found);
  } else if (route.auth == Auth::kToken) {
    auto caller =
        core::AuthenticateBearer(uc.authenticator, uc.people, core::BearerToken(authorization), selector, request_id);
    if (!caller.ok()) {
      http::Response r = ProblemResponse(caller.status(), request_id);
      r.set(bh::field::www_authenticate, "Bearer realm=\"septa\"");
      return r;
    }
    ctx.principal = caller->principal;
    ctx.person = caller->person;
    ctx.surface = core::Surface::kRest;
  }
  ctx.break_glass = std::string(View(req["Septa-Break-Glass"]));
  if (Status st = core::CheckBreakGlassReason(ctx.break_glass, "Septa-Break-Glass"); !st.ok()) {
    return ProblemResponse(st, request_id);
  }
  if (route.body != Body::kNone) {
    if (Status st = CheckContentType(req, route.body); !st.ok()) {
      return ProblemResponse(st, request_id, http::HttpStatus::unsupported_media_type);
    }
  }
  Result<http::Response> result = [&]() -> Result<http::Response> {
    try {
      return route.fn(Call{req, target, params, ctx, session, session_cookie, client});
    } catch (const std::exception& e) {
      return Internal(std::string("unexpected error: ") + e.what());
    }
  }();
  if (result.ok()) return *std::move(result);
  return ProblemResponse(result.status(), request_id);
}

void RestApi::Impl::Finish(const std::shared_ptr<http::Exchange>& exchange, http::Response response,
                           const std::string& route, const http::Request& req, const std::string& request_id,
                           Clock::time_point start) {
  response.set("X-Request-Id", request_id);
  // Every answer is JSON, text or the portal's typed files: never sniffed.
  response.set("X-Content-Type-Options", "nosniff");
  const std::string method(req.method_string());
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  // One line per request: request_id=... method=... route=... status=... ms=...
  spdlog::log(response.result_int() >= 500 ? spdlog::level::err : spdlog::level::debug,
              "http request_id={} method={} route={} status={} ms={:.2f}", request_id, method, route,
              response.result_int(), seconds * 1000);
  requests.Add({{"route", route}, {"method", method}, {"code", std::to_string(response.result_int())}}).Increment();
  latency.Add({{"route", route}, {"method", method}}, apiv1::RequestLatencyBuckets()).Observe(seconds);
  exchange->Reply(std::move(response));
}

void RestApi::Impl::Serve(http::Request&& req, std::shared_ptr<http::Exchange> exchange) {
  const auto start = Clock::now();
  const std::string request_id = core::AcceptOrMakeRequestId(View(req["X-Request-Id"]), uc.random);
  auto target = http::ParseTarget(View(req.target()));
  if (!target) {
    Finish(exchange, ProblemResponse(InvalidArgument("malformed %-escape in the request target"), request_id),
           "unmatched", req, request_id, start);
    return;
  }
  std::string allowed;
  for (const Route& route : routes) {
    std::map<std::string, std::string> params;
    if (!Match(route, target->segments, params)) continue;
    if (route.method != req.method()) {
      allowed += (allowed.empty() ? "" : ", ") + std::string(bh::to_string(route.method));
      continue;
    }
    if (route.runs_on == RunsOn::kIoThread) {
      Finish(
          exchange,
          *route.fn(Call{
              req, *target, params, core::RequestContext{}, std::nullopt, {}, exchange->connection().remote_address}),
          route.pattern, req, request_id, start);
      return;
    }
    auto shared = std::make_shared<http::Request>(std::move(req));
    boost::asio::post(
        pool, [this, &route, shared, exchange, t = *std::move(target), params = std::move(params), request_id, start] {
          Finish(exchange, Run(route, *shared, t, params, request_id, exchange->connection().remote_address),
                 route.pattern, *shared, request_id, start);
        });
    return;
  }
  if (!allowed.empty()) {
    http::Response r = ProblemResponse(Status(Code::kUnimplemented, "method " + std::string(req.method_string()) +
                                                                        " is not allowed here; use " + allowed),
                                       request_id, http::HttpStatus::method_not_allowed);
    r.set(bh::field::allow, allowed);
    Finish(exchange, std::move(r), "unmatched", req, request_id, start);
    return;
  }
  if (web_app && req.method() == bh::verb::get && !IsApiPath(target->path)) {
    Finish(exchange, web_app->Serve(req, target->path), "web", req, request_id, start);
    return;
  }
  Finish(exchange, ProblemResponse(NotFound("no such resource: " + target->path), request_id), "unmatched", req,
         request_id, start);
}

RestApi::RestApi(std::shared_ptr<const apiv1::Api> api, core::UseCases use_cases, prometheus::Registry& metrics,
                 RestApiOptions options)
    : impl_(std::make_unique<Impl>(std::move(api), use_cases, metrics, std::move(options))) {}

RestApi::~RestApi() { impl_->pool.join(); }

http::Handler RestApi::Handler() {
  return [impl = impl_.get()](http::Request&& req, std::shared_ptr<http::Exchange> exchange) {
    impl->Serve(std::move(req), std::move(exchange));
  };
}

http::Handler RestApi::MetricsHandler() {
  return [impl = impl_.get()](http::Request&& req, std::shared_ptr<http::Exchange> exchange) {
    const std::string_view target(req.target().data(), req.target().size());
    if (target != "/metrics" && !target.starts_with("/metrics?")) {
      exchange->Reply(http::PlainTextError(http::HttpStatus::not_found, "only /metrics is served here"));
    } else if (req.method() != bh::verb::get) {
      http::Response r = http::PlainTextError(http::HttpStatus::method_not_allowed, "GET only");
      r.set(bh::field::allow, "GET");
      exchange->Reply(std::move(r));
    } else {
      exchange->Reply(impl->Metrics());
    }
  };
}

std::vector<RouteInfo> RestApi::Routes() const {
  std::vector<RouteInfo> out;
  for (const Route& route : impl_->routes) {
    out.push_back({std::string(bh::to_string(route.method)), route.pattern, route.rpc});
  }
  return out;
}

http::Response RestApi::ServerError(http::HttpStatus status, std::string_view message) {
  Code code = Code::kInvalidArgument;  // 400: a request that cannot be read or framed
  switch (status) {
    case http::HttpStatus::payload_too_large:
    case http::HttpStatus::request_header_fields_too_large: code = Code::kResourceExhausted; break;
    case http::HttpStatus::not_implemented:  // a transfer coding the server does not implement
      code = Code::kUnimplemented;
      break;
    case http::HttpStatus::service_unavailable:  // the connection cap
      code = Code::kUnavailable;
      break;
    case http::HttpStatus::internal_server_error: code = Code::kInternal; break;
    default: break;
  }
  return ProblemResponse(Status(code, std::string(message)), "", status);
}

}  // namespace septa::rest
