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

#include "services/apiv1/convert.h"
#include "services/apiv1/json.h"
#include "services/apiv1/latency_buckets.h"
#include "services/core/deadline.h"
#include "services/http/target.h"
#include "services/rest/problem.h"

namespace septa::rest {

namespace {

namespace bh = boost::beast::http;
using Clock = std::chrono::steady_clock;

// What a route handler sees of a request.
struct Call {
  const http::Request& request;
  const http::Target& target;
  const std::map<std::string, std::string>& params;  // path variables
  const core::RequestContext& ctx;
};

using RouteFn = std::function<Result<http::Response>(const Call&)>;

enum class Auth { kToken, kNone };
// Routes run on the worker pool (they call the store); one that touches
// nothing is answered on the I/O thread and saves the hop.
enum class RunsOn { kWorker, kIoThread };

struct Route {
  bh::verb method;
  std::string pattern;                // "/v1/tenants/{name}"
  std::vector<std::string> segments;  // split pattern
  Auth auth = Auth::kToken;
  RunsOn runs_on = RunsOn::kWorker;
  bool json_body = false;  // POST/PATCH bodies must be JSON (else 415)
  RouteFn fn;
};

std::string_view View(boost::beast::string_view v) { return {v.data(), v.size()}; }

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

http::Response Json(http::HttpStatus status, const google::protobuf::Message& message) {
  http::Response r(status, 11);
  r.set(bh::field::content_type, "application/json");
  r.body() = apiv1::ToJson(message) + "\n";
  return r;
}

// What /healthz and /readyz answer when their probe passes.
http::Response ProbePassed(std::string_view status) {
  http::Response r(http::HttpStatus::ok, 11);
  r.set(bh::field::content_type, "application/json");
  r.body() = "{\"status\":\"" + std::string(status) + "\"}\n";
  return r;
}

http::Response WithEtag(http::Response r, const std::string& etag) {
  r.set(bh::field::etag, "\"" + etag + "\"");
  return r;
}

// The etag an If-Match header requires: "7", W/"7" or 7; empty without the
// header or with * (any version). A header that names no etag (`If-Match:`,
// `If-Match: ""`) is refused: taken as no precondition, a client that lost
// its etag would write unconditionally what it meant to write only over
// the version it read.
Result<std::string> IfMatch(const http::Request& req) {
  const auto field = req.find(bh::field::if_match);
  if (field == req.end()) return std::string();
  std::string_view v = View(field->value());
  if (v == "*") return std::string();
  if (v.starts_with("W/")) v.remove_prefix(2);
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  if (v.empty()) {
    return InvalidField("If-Match", "names no etag: send the etag read (\"7\"), * for any version, or no If-Match");
  }
  return std::string(v);
}

// The precondition of a PATCH: the If-Match header's etag, else the body's
// `etag` field; a body that sends `etag` empty is refused as If-Match is.
Result<std::string> PatchPrecondition(const http::Request& req, const std::vector<std::string>& present,
                                      const std::string& body_etag) {
  auto etag = IfMatch(req);
  SEPTA_RETURN_IF_ERROR(etag);
  if (!etag->empty() || req.find(bh::field::if_match) != req.end()) return etag;
  if (body_etag.empty() && std::ranges::find(present, "etag") != present.end()) {
    return InvalidField("etag", "is empty: send the etag read, or leave the field out for no precondition");
  }
  return body_etag;
}

Status CheckJsonContentType(const http::Request& req) {
  std::string_view type = View(req[bh::field::content_type]);
  type = type.substr(0, type.find(';'));
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  if (type == "application/json" || type == "application/merge-patch+json") return Status::Ok();
  return InvalidField("Content-Type", "must be application/json, got \"" + std::string(type) + "\"");
}

Result<int> PageSize(const http::Target& t) {
  auto it = t.query.find("page_size");
  if (it == t.query.end() || it->second.empty()) return 0;
  int n = 0;
  for (char c : it->second) {
    if (c < '0' || c > '9' || n > 100000) return InvalidField("page_size", "must be an integer between 1 and 500");
    n = n * 10 + (c - '0');
  }
  return n;
}

std::string QueryValue(const http::Target& t, const std::string& key) {
  auto it = t.query.find(key);
  return it == t.query.end() ? "" : it->second;
}

std::vector<std::string> SplitMask(const std::string& mask) {
  std::vector<std::string> paths;
  std::size_t start = 0;
  while (start <= mask.size()) {
    std::size_t comma = mask.find(',', start);
    if (comma == std::string::npos) comma = mask.size();
    if (comma > start) paths.push_back(mask.substr(start, comma - start));
    start = comma + 1;
  }
  return paths;
}

}  // namespace

struct RestApi::Impl {
  Impl(core::UseCases uc, prometheus::Registry& registry, std::size_t workers,
       std::vector<std::shared_ptr<prometheus::Collectable>> more)
      : uc(uc),
        metrics(registry),
        more_metrics(std::move(more)),
        pool(workers),
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
  void Add(bh::verb method, std::string pattern, RouteFn fn, Auth auth = Auth::kToken,
           RunsOn runs_on = RunsOn::kWorker) {
    const bool json_body = method == bh::verb::post || method == bh::verb::patch;
    Route r{method, pattern, http::ParseTarget(pattern)->segments, auth, runs_on, json_body, std::move(fn)};
    routes.push_back(std::move(r));
  }
  void Serve(http::Request&& req, std::shared_ptr<http::Exchange> exchange);
  http::Response Run(const Route& route, const http::Request& req, const http::Target& target,
                     const std::map<std::string, std::string>& params, const std::string& request_id);
  void Finish(const std::shared_ptr<http::Exchange>& exchange, http::Response response, const std::string& route,
              const http::Request& req, const std::string& request_id, Clock::time_point start);

  core::UseCases uc;
  prometheus::Registry& metrics;
  std::vector<std::shared_ptr<prometheus::Collectable>> more_metrics;
  boost::asio::thread_pool pool;
  prometheus::Family<prometheus::Counter>& requests;
  prometheus::Family<prometheus::Histogram>& latency;
  std::vector<Route> routes;
};

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
      [this](const Call&) -> Result<http::Response> {
        http::Response r(http::HttpStatus::ok, 11);
        r.set(bh::field::content_type, "text/plain; version=0.0.4");
        std::vector<prometheus::MetricFamily> families = metrics.Collect();
        for (const auto& c : more_metrics) {
          auto more = c->Collect();
          families.insert(families.end(), more.begin(), more.end());
        }
        r.body() = prometheus::TextSerializer().Serialize(families);
        return r;
      },
      Auth::kNone);

  // Tenants.
  // Routes with a body authorize what they can before parsing it, so that a
  // principal that may not write is refused whatever it sends.
  Add(bh::verb::post, "/v1/tenants", [this](const Call& c) -> Result<http::Response> {
    SEPTA_RETURN_IF_ERROR(core::RequireAdminWriter(c.ctx.principal, "create tenants"));
    v1::Tenant body;
    SEPTA_RETURN_IF_ERROR(apiv1::ParseJsonBody(c.request.body(), body));
    auto draft = apiv1::TenantDraftFromProto(body);
    SEPTA_RETURN_IF_ERROR(draft);
    auto created = uc.tenants.Create(c.ctx, *draft, std::string(c.request["Idempotency-Key"]));
    SEPTA_RETURN_IF_ERROR(created);
    http::Response r =
        WithEtag(Json(http::HttpStatus::created, apiv1::ToProto(*created)), core::EtagOf(created->version));
    r.set(bh::field::location, "/v1/tenants/" + created->name);
    return r;
  });
  Add(bh::verb::get, "/v1/tenants", [this](const Call& c) -> Result<http::Response> {
    auto page_size = PageSize(c.target);
    SEPTA_RETURN_IF_ERROR(page_size);
    auto page =
        uc.tenants.List(c.ctx, {*page_size, QueryValue(c.target, "page_token"), QueryValue(c.target, "filter")});
    SEPTA_RETURN_IF_ERROR(page);
    v1::ListTenantsResponse out;
    for (const auto& t : page->tenants) *out.add_tenants() = apiv1::ToProto(t);
    out.set_next_page_token(page->next_page_token);
    return Json(http::HttpStatus::ok, out);
  });
  Add(bh::verb::get, "/v1/tenants/{name}", [this](const Call& c) -> Result<http::Response> {
    auto view = uc.tenants.Get(c.ctx, c.params.at("name"));
    SEPTA_RETURN_IF_ERROR(view);
    return WithEtag(Json(http::HttpStatus::ok, apiv1::ToProto(view->tenant, view->quota_usage)),
                    core::EtagOf(view->tenant.version));
  });
  Add(bh::verb::patch, "/v1/tenants/{name}", [this](const Call& c) -> Result<http::Response> {
    const std::string& name = c.params.at("name");
    SEPTA_RETURN_IF_ERROR(core::RequireSeeTenant(c.ctx.principal, name));
    SEPTA_RETURN_IF_ERROR(core::RequireWriter(c.ctx.principal, "update tenants"));
    v1::Tenant body;
    auto present = apiv1::ParseJsonBody(c.request.body(), body);
    SEPTA_RETURN_IF_ERROR(present);
    if (!body.name().empty() && body.name() != name) {
      return InvalidField("name", "is immutable and must match the URL (\"" + name + "\")");
    }
    std::vector<std::string> paths =
        c.target.query.contains("update_mask") ? SplitMask(QueryValue(c.target, "update_mask")) : *present;
    auto update = apiv1::TenantUpdateFromProto(body, paths);
    SEPTA_RETURN_IF_ERROR(update);
    auto etag = PatchPrecondition(c.request, *present, body.etag());
    SEPTA_RETURN_IF_ERROR(etag);
    auto updated = uc.tenants.Update(c.ctx, name, *update, *etag);
    SEPTA_RETURN_IF_ERROR(updated);
    return WithEtag(Json(http::HttpStatus::ok, apiv1::ToProto(*updated)), core::EtagOf(updated->version));
  });
  Add(bh::verb::delete_, "/v1/tenants/{name}", [this](const Call& c) -> Result<http::Response> {
    auto etag = IfMatch(c.request);
    SEPTA_RETURN_IF_ERROR(etag);
    SEPTA_RETURN_IF_ERROR(uc.tenants.Delete(c.ctx, c.params.at("name"), *etag));
    return http::Response(http::HttpStatus::no_content, 11);
  });

  // Virtual clusters.
  Add(bh::verb::post, "/v1/tenants/{tenant}/vclusters", [this](const Call& c) -> Result<http::Response> {
    const std::string& tenant = c.params.at("tenant");
    SEPTA_RETURN_IF_ERROR(core::RequireSeeTenant(c.ctx.principal, tenant));
    SEPTA_RETURN_IF_ERROR(core::RequireWriter(c.ctx.principal, "create virtual clusters"));
    v1::VirtualCluster body;
    SEPTA_RETURN_IF_ERROR(apiv1::ParseJsonBody(c.request.body(), body));
    if (!body.tenant().empty() && body.tenant() != tenant) {
      return InvalidField("tenant", "must match the URL (\"" + tenant + "\")");
    }
    auto draft = apiv1::VirtualClusterFromProto(body, /*require_capacity=*/true);
    SEPTA_RETURN_IF_ERROR(draft);
    auto created = uc.vclusters.Create(c.ctx, tenant, *draft, std::string(c.request["Idempotency-Key"]));
    SEPTA_RETURN_IF_ERROR(created);
    const v1::VirtualCluster out = apiv1::ToProto(*created);
    http::Response r = WithEtag(Json(http::HttpStatus::created, out), out.etag());
    r.set(bh::field::location, "/v1/tenants/" + tenant + "/vclusters/" + out.name());
    return r;
  });
  Add(bh::verb::get, "/v1/tenants/{tenant}/vclusters", [this](const Call& c) -> Result<http::Response> {
    auto page_size = PageSize(c.target);
    SEPTA_RETURN_IF_ERROR(page_size);
    auto page = uc.vclusters.List(c.ctx, c.params.at("tenant"),
                                  {*page_size, QueryValue(c.target, "page_token"), QueryValue(c.target, "filter")});
    SEPTA_RETURN_IF_ERROR(page);
    v1::ListVirtualClustersResponse out;
    for (const auto& v : page->vclusters) *out.add_virtual_clusters() = apiv1::ToProto(v);
    out.set_next_page_token(page->next_page_token);
    return Json(http::HttpStatus::ok, out);
  });
  Add(bh::verb::get, "/v1/tenants/{tenant}/vclusters/{name}", [this](const Call& c) -> Result<http::Response> {
    auto found = uc.vclusters.Get(c.ctx, c.params.at("tenant"), c.params.at("name"));
    SEPTA_RETURN_IF_ERROR(found);
    const v1::VirtualCluster out = apiv1::ToProto(*found);
    return WithEtag(Json(http::HttpStatus::ok, out), out.etag());
  });
  Add(bh::verb::patch, "/v1/tenants/{tenant}/vclusters/{name}", [this](const Call& c) -> Result<http::Response> {
    const std::string& tenant = c.params.at("tenant");
    const std::string& name = c.params.at("name");
    SEPTA_RETURN_IF_ERROR(core::RequireSeeTenant(c.ctx.principal, tenant));
    SEPTA_RETURN_IF_ERROR(core::RequireWriter(c.ctx.principal, "update virtual clusters"));
    v1::VirtualCluster body;
    auto present = apiv1::ParseJsonBody(c.request.body(), body);
    SEPTA_RETURN_IF_ERROR(present);
    if (!body.name().empty() && body.name() != name) {
      return InvalidField("name", "is immutable and must match the URL (\"" + name + "\")");
    }
    if (!body.tenant().empty() && body.tenant() != tenant) {
      return InvalidField("tenant", "is immutable and must match the URL (\"" + tenant + "\")");
    }
    std::vector<std::string> sent = *present;
    std::erase_if(sent, [](const std::string& p) { return p == "name" || p == "tenant" || p == "etag"; });
    const std::vector<std::string> paths = apiv1::VirtualClusterMaskPaths(
        c.target.query.contains("update_mask") ? SplitMask(QueryValue(c.target, "update_mask")) : sent);
    auto patch = apiv1::VirtualClusterFromProto(body, std::ranges::find(paths, "capacity") != paths.end());
    SEPTA_RETURN_IF_ERROR(patch);
    auto etag = PatchPrecondition(c.request, *present, body.etag());
    SEPTA_RETURN_IF_ERROR(etag);
    auto updated = uc.vclusters.Update(c.ctx, tenant, name, *patch, paths, *etag);
    SEPTA_RETURN_IF_ERROR(updated);
    const v1::VirtualCluster out = apiv1::ToProto(*updated);
    return WithEtag(Json(http::HttpStatus::ok, out), out.etag());
  });
  Add(bh::verb::delete_, "/v1/tenants/{tenant}/vclusters/{name}", [this](const Call& c) -> Result<http::Response> {
    auto etag = IfMatch(c.request);
    SEPTA_RETURN_IF_ERROR(etag);
    auto deleted = uc.vclusters.Delete(c.ctx, c.params.at("tenant"), c.params.at("name"), *etag);
    SEPTA_RETURN_IF_ERROR(deleted);
    return Json(http::HttpStatus::ok, apiv1::ToProto(*deleted));
  });

  // Custom methods without a body: POST .../{name}:sleep and :wake.
  for (const auto& [verb, transition] : {std::pair{"sleep", &core::VirtualClusterService::Sleep},
                                         std::pair{"wake", &core::VirtualClusterService::Wake}}) {
    Add(bh::verb::post, std::string("/v1/tenants/{tenant}/vclusters/{name}:") + verb,
        // A copy, not the binding: Clang 14 cannot capture structured bindings.
        [this, method = transition](const Call& c) -> Result<http::Response> {
          auto etag = IfMatch(c.request);
          SEPTA_RETURN_IF_ERROR(etag);
          auto moved = (uc.vclusters.*method)(c.ctx, c.params.at("tenant"), c.params.at("name"), *etag);
          SEPTA_RETURN_IF_ERROR(moved);
          const v1::VirtualCluster out = apiv1::ToProto(*moved);
          return WithEtag(Json(http::HttpStatus::ok, out), out.etag());
        });
    routes.back().json_body = false;
  }

  // Credentials of a virtual cluster.
  Add(bh::verb::post, "/v1/tenants/{tenant}/vclusters/{vcluster}:kubeconfig",
      [this](const Call& c) -> Result<http::Response> {
        const std::string& tenant = c.params.at("tenant");
        const std::string& vcluster = c.params.at("vcluster");
        SEPTA_RETURN_IF_ERROR(core::RequireSeeTenant(c.ctx.principal, tenant));
        v1::IssueKubeconfigRequest body;
        SEPTA_RETURN_IF_ERROR(apiv1::ParseJsonBody(c.request.body(), body));
        if (!body.tenant().empty() && body.tenant() != tenant) {
          return InvalidField("tenant", "must match the URL (\"" + tenant + "\")");
        }
        if (!body.vcluster().empty() && body.vcluster() != vcluster) {
          return InvalidField("vcluster", "must match the URL (\"" + vcluster + "\")");
        }
        auto issued = uc.credentials.IssueKubeconfig(c.ctx, tenant, vcluster, {body.ttl(), body.role()});
        SEPTA_RETURN_IF_ERROR(issued);
        http::Response r = Json(http::HttpStatus::ok, apiv1::ToProto(*issued));
        r.set(bh::field::cache_control, "no-store");  // it holds a private key
        return r;
      });
  Add(bh::verb::get, "/v1/tenants/{tenant}/vclusters/{vcluster}/credentials",
      [this](const Call& c) -> Result<http::Response> {
        auto page_size = PageSize(c.target);
        SEPTA_RETURN_IF_ERROR(page_size);
        auto page = uc.credentials.List(c.ctx, c.params.at("tenant"), c.params.at("vcluster"), *page_size,
                                        QueryValue(c.target, "page_token"));
        SEPTA_RETURN_IF_ERROR(page);
        return Json(http::HttpStatus::ok, apiv1::ToProto(*page));
      });
  Add(bh::verb::delete_, "/v1/tenants/{tenant}/vclusters/{vcluster}/credentials/{serial}",
      [this](const Call& c) -> Result<http::Response> {
        auto revoked =
            uc.credentials.Revoke(c.ctx, c.params.at("tenant"), c.params.at("vcluster"), c.params.at("serial"));
        SEPTA_RETURN_IF_ERROR(revoked);
        return Json(http::HttpStatus::ok, apiv1::ToProto(*revoked));
      });

  // Trust tiers.
  Add(bh::verb::get, "/v1/trust-tiers", [this](const Call& c) -> Result<http::Response> {
    auto tiers = uc.tiers.List(c.ctx);
    SEPTA_RETURN_IF_ERROR(tiers);
    v1::ListTrustTiersResponse out;
    for (const auto& t : *tiers) *out.add_trust_tiers() = apiv1::ToProto(t);
    return Json(http::HttpStatus::ok, out);
  });
  Add(bh::verb::get, "/v1/trust-tiers/{name}", [this](const Call& c) -> Result<http::Response> {
    auto tier = uc.tiers.Get(c.ctx, c.params.at("name"));
    SEPTA_RETURN_IF_ERROR(tier);
    return Json(http::HttpStatus::ok, apiv1::ToProto(*tier));
  });

  // Tokens.
  Add(bh::verb::post, "/v1/tokens", [this](const Call& c) -> Result<http::Response> {
    SEPTA_RETURN_IF_ERROR(core::RequireWriter(c.ctx.principal, "issue tokens"));
    v1::CreateTokenRequest body;
    SEPTA_RETURN_IF_ERROR(apiv1::ParseJsonBody(c.request.body(), body));
    auto issued = uc.tokens.Create(c.ctx, apiv1::TokenRequestFromProto(body));
    SEPTA_RETURN_IF_ERROR(issued);
    v1::ApiToken out = apiv1::ToProto(issued->token);
    out.set_token(issued->secret_text);
    http::Response r = Json(http::HttpStatus::created, out);
    r.set(bh::field::location, "/v1/tokens/" + issued->token.id);
    r.set(bh::field::cache_control, "no-store");
    return r;
  });
  Add(bh::verb::get, "/v1/tokens", [this](const Call& c) -> Result<http::Response> {
    auto tokens = uc.tokens.List(c.ctx);
    SEPTA_RETURN_IF_ERROR(tokens);
    v1::ListTokensResponse out;
    for (const auto& t : *tokens) *out.add_tokens() = apiv1::ToProto(t);
    return Json(http::HttpStatus::ok, out);
  });
  Add(bh::verb::delete_, "/v1/tokens/{id}", [this](const Call& c) -> Result<http::Response> {
    SEPTA_RETURN_IF_ERROR(uc.tokens.Revoke(c.ctx, c.params.at("id")));
    return http::Response(http::HttpStatus::no_content, 11);
  });

  // The GPU inventory.
  Add(bh::verb::get, "/v1/inventory/nodes", [this](const Call& c) -> Result<http::Response> {
    auto size = PageSize(c.target);
    SEPTA_RETURN_IF_ERROR(size);
    auto page = uc.inventory.ListNodes(c.ctx, *size, QueryValue(c.target, "page_token"));
    SEPTA_RETURN_IF_ERROR(page);
    return Json(http::HttpStatus::ok, apiv1::ToProto(*page));
  });
}

http::Response RestApi::Impl::Run(const Route& route, const http::Request& req, const http::Target& target,
                                  const std::map<std::string, std::string>& params, const std::string& request_id) {
  core::DeadlineScope deadline(uc.db_request_timeout);  // authentication and the use case alike
  core::RequestContext ctx;
  ctx.request_id = request_id;
  if (route.auth == Auth::kToken) {
    std::string_view authorization = View(req[bh::field::authorization]);
    constexpr std::string_view kBearer = "Bearer ";
    if (authorization.starts_with(kBearer)) authorization.remove_prefix(kBearer.size());
    else authorization = {};
    auto principal = uc.authenticator.Authenticate(authorization);
    if (!principal.ok()) {
      http::Response r = ProblemResponse(principal.status(), request_id);
      r.set(bh::field::www_authenticate, "Bearer realm=\"septa\"");
      return r;
    }
    ctx.principal = *principal;
  }
  if (route.json_body) {
    if (Status st = CheckJsonContentType(req); !st.ok()) {
      return ProblemResponse(st, request_id, http::HttpStatus::unsupported_media_type);
    }
  }
  Result<http::Response> result = [&]() -> Result<http::Response> {
    try {
      return route.fn(Call{req, target, params, ctx});
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
      Finish(exchange, *route.fn(Call{req, *target, params, core::RequestContext{}}), route.pattern, req, request_id,
             start);
      return;
    }
    auto shared = std::make_shared<http::Request>(std::move(req));
    boost::asio::post(
        pool, [this, &route, shared, exchange, t = *std::move(target), params = std::move(params), request_id, start] {
          Finish(exchange, Run(route, *shared, t, params, request_id), route.pattern, *shared, request_id, start);
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
  Finish(exchange, ProblemResponse(NotFound("no such resource: " + target->path), request_id), "unmatched", req,
         request_id, start);
}

RestApi::RestApi(core::UseCases use_cases, prometheus::Registry& metrics, std::size_t worker_threads,
                 std::vector<std::shared_ptr<prometheus::Collectable>> more_metrics)
    : impl_(std::make_unique<Impl>(use_cases, metrics, worker_threads, std::move(more_metrics))) {}

RestApi::~RestApi() { impl_->pool.join(); }

http::Handler RestApi::Handler() {
  return [impl = impl_.get()](http::Request&& req, std::shared_ptr<http::Exchange> exchange) {
    impl->Serve(std::move(req), std::move(exchange));
  };
}

std::vector<RouteInfo> RestApi::Routes() const {
  std::vector<RouteInfo> out;
  for (const Route& route : impl_->routes) out.push_back({std::string(bh::to_string(route.method)), route.pattern});
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
