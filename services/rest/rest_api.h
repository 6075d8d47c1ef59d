// septad's REST surface: API v1 as JSON (protobuf's JSON mapping) over
// septa_http, plus /healthz, /readyz, /metrics and, when configured, the
// portal's files at every other GET path (web_app.h). Use cases run on a
// worker pool so that database calls never block the HTTP I/O threads.
//   /healthz (liveness):  200 while septad lives and what it owns is running or
//                         being restarted; 503 when restarting in place failed.
//   /readyz (readiness):  200 when requests can be served now: the database
//                         answers and its schema is migrated; else 503.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "services/core/use_cases.h"
#include "services/http/server.h"

namespace prometheus {
class Collectable;
class Registry;
}  // namespace prometheus

namespace septa::apiv1 {
class Api;
}

namespace septa::rest {

class WebApp;

// One route of the REST surface.
struct RouteInfo {
  std::string method;   // "GET"
  std::string pattern;  // "/v1/tenants/{name}"
  bool rpc = false;     // the binding of an RPC; else REST's own (probes, metrics, sessions)
};

struct RestApiOptions {
  std::size_t worker_threads = 4;
  // /metrics serves these besides the registry given to RestApi (e.g. the
  // database pool's).
  std::vector<std::shared_ptr<prometheus::Collectable>> more_metrics;
  std::shared_ptr<const WebApp> web_app;  // null: no portal
  bool tls = false;                       // the listener serves HTTPS: the session cookie is Secure (session_routes.h)
};

class RestApi {
 public:
  // Serves every RPC of `api` at its (septa.v1.http) binding. /metrics
  // serves `metrics` (where the REST metrics are registered) to admins'
  // tokens only: its figures are every tenant's.
  RestApi(std::shared_ptr<const apiv1::Api> api, core::UseCases use_cases, prometheus::Registry& metrics,
          RestApiOptions options);
  ~RestApi();  // waits for requests still running on the workers
  RestApi(const RestApi&) = delete;
  RestApi& operator=(const RestApi&) = delete;

  // The handler to give to http::Server; valid while this object lives.
  http::Handler Handler();
  // The handler of the metrics listener (metrics_addr): GET /metrics without
  // a token, nothing else (404; 405 for another method). Only Prometheus
  // should reach it: docs/install.md's NetworkPolicy.
  http::Handler MetricsHandler();
  // For http::ServerOptions::error_formatter: problem+json for the errors
  // the HTTP server produces itself (400 unparsable, 413 body too large).
  static http::Response ServerError(http::HttpStatus status, std::string_view message);

  // Every route served, in matching order. Those under /v1/ must be the
  // (septa.v1.http) bindings of the protos, but for the session routes
  // (session_routes.h; tests/integration/api/rest_routes_test.cc).
  std::vector<RouteInfo> Routes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace septa::rest
