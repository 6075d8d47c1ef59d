#include "services/app/septad_app.h"

#include <prometheus/collectable.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>

#include "services/apiv1/api.h"
#include "services/app/replica_id.h"
#include "services/app/septad_app_impl.h"
#include "services/base/file.h"
#include "services/base/open_files.h"
#include "services/core/idempotency.h"
#include "services/core/retention.h"
#include "services/http/tls.h"
#include "services/rest/web_app.h"
#include "services/store/connection_url.h"
#include "services/store/migration.h"
#include "services/store/migration_runner.h"

namespace septa::app {

namespace fs = std::filesystem;

namespace {

// Exposes the store's pool figures on /metrics at scrape time.
class PoolCollector final : public prometheus::Collectable {
 public:
  explicit PoolCollector(const store::PgStore& store) : store_(store) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    const store::PgStoreStats s = store_.Stats();
    std::vector<prometheus::MetricFamily> out;
    auto gauge = [&](std::string name, std::string help, double value) {
      prometheus::MetricFamily f{std::move(name), std::move(help), prometheus::MetricType::Gauge, {}};
      prometheus::ClientMetric m;
      m.gauge.value = value;
      f.metric.push_back(m);
      out.push_back(std::move(f));
    };
    auto counter = [&](std::string name, std::string help, double value) {
      prometheus::MetricFamily f{std::move(name), std::move(help), prometheus::MetricType::Counter, {}};
      prometheus::ClientMetric m;
      m.counter.value = value;
      f.metric.push_back(m);
      out.push_back(std::move(f));
    };
    gauge("septa_db_pool_max_connections", "PostgreSQL pool size", s.pool.max_size);
    gauge("septa_db_pool_in_use_connections", "connections leased to a transaction", s.pool.in_use);
    gauge("septa_db_pool_idle_connections", "open connections waiting in the pool", s.pool.idle);
    counter("septa_db_pool_waits_total", "acquisitions that had to wait", static_cast<double>(s.pool.waits_total));
    counter("septa_db_pool_wait_timeouts_total", "acquisitions that timed out",
            static_cast<double>(s.pool.wait_timeouts_total));
    counter("septa_db_pool_cut_total", "connections cut for outlasting twice db_statement_timeout",
            static_cast<double>(s.pool.cut_total));
    counter("septa_db_transaction_retries_total", "transactions run again after losing a race",
            static_cast<double>(s.retries_total));
    return out;
  }

 private:
  const store::PgStore& store_;
};

core::MigRelayoutPolicy MigRelayoutPolicyOf(config::MigRelayout relayout) {
  switch (relayout) {
    case config::MigRelayout::kAuto: return core::MigRelayoutPolicy::kAuto;
    case config::MigRelayout::kOff: return core::MigRelayoutPolicy::kOff;
  }
  return core::MigRelayoutPolicy::kAuto;
}

}  // namespace

namespace wiring {

core::HoardingSettings HoardingSettingsOf(const config::Config& config) {
  return {.thresholds = config.usage_hoarding_after,
          .idle_stale_after = 4 * config.usage_scrape_interval,
          .sleep_after = config.usage_hoarding_sleep_after};
}

std::pair<std::string, std::uint16_t> HostPort(const std::string& addr) {
  const std::size_t colon = addr.rfind(':');
  return {addr.substr(0, colon), static_cast<std::uint16_t>(std::stoi(addr.substr(colon + 1)))};
}

Result<std::string> ReadConfiguredFile(const std::string& key, const std::string& path) {
  auto text = base::ReadFile(path);
  if (!text.ok()) return InvalidField(key, text.status().message());
  return text;
}

Status WriteSecretFile(const fs::path& path, const std::string& secret) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Internal("cannot write " + tmp.string());
    // Before the secret is written: a file others can read never holds it.
    if (::chmod(tmp.c_str(), 0600) != 0) return Internal("chmod 0600 " + tmp.string() + ": " + std::strerror(errno));
    out << secret << "\n";
    if (!out.flush()) return Internal("cannot write " + tmp.string());
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return Internal("cannot rename " + tmp.string() + ": " + ec.message());
  return Status::Ok();
}

}  // namespace wiring

// septad's composition, in start order; `stages` stops the started ones in
// the reverse order, on a failed start and at shutdown alike
// (docs/ARCHITECTURE.md, "services/app"). A stage this configuration does
// not have is skipped.
Status SeptadApp::Impl::StartStages() {
  struct Stage {
    std::string_view name;
    bool wanted;
    Status (Impl::*start)();
    void (Impl::*stop)();  // nullptr: it leaves nothing running or held
  };
  const Stage list[] = {
      {"data-dir", true, &Impl::MakeDataDir, nullptr},
      {"embedded-postgres", config.database_url.empty(), &Impl::StartPostgres, &Impl::StopPostgres},
      {"store", true, &Impl::OpenStore, &Impl::CloseStore},  // migrations, then the pool
      {"use-cases", true, &Impl::MakeUseCases, &Impl::DropUseCases},
      {"admin-token", true, &Impl::EnsureAdminToken, nullptr},
      {"sweepers", true, &Impl::StartSweepers, &Impl::StopSweepers},
      {"replica-lock", true, &Impl::LockReplicaId, &Impl::UnlockReplicaId},
      {"kubesim", config.kubeconfig.empty(), &Impl::StartSimulatedCluster, &Impl::StopSimulatedCluster},
      {"host-cluster", true, &Impl::ConnectHostCluster, &Impl::DisconnectHostCluster},
      {"leases", true, &Impl::OpenLeaseStore, &Impl::CloseLeaseStore},
      {"inventory", true, &Impl::StartInventory, &Impl::StopInventory},
      {"mig-layouts", true, &Impl::StartMigLayouts, &Impl::StopMigLayouts},
      {"apply-sets", true, &Impl::StartApplySets, &Impl::StopApplySets},
      {"token-delivery", true, &Impl::StartTokenDelivery, &Impl::StopTokenDelivery},
      {"ca-keys", true, &Impl::SealCaKeys, &Impl::DropCaKeys},
      {"issuer", true, &Impl::MakeIssuer, &Impl::DropIssuer},
      {"control-planes", true, &Impl::StartControlPlanes, &Impl::StopControlPlanes},
      {"usage", config.usage, &Impl::StartUsage, &Impl::StopUsage},
      {"provisioner", config.provisioner, &Impl::StartProvisioner, &Impl::StopProvisioner},  // and the syncer
      {"hoarding", config.usage && config.provisioner, &Impl::StartHoarding, &Impl::StopHoarding},
      {"listeners", true, &Impl::Listen, &Impl::StopListening},
      {"sign-in-link", config.sign_in_link, &Impl::WriteSignInLink, nullptr},
  };
  for (const Stage& stage : list) {
    if (!stage.wanted) continue;
    StopFn stop;
    if (stage.stop != nullptr) stop = [this, method = stage.stop] { (this->*method)(); };
    SEPTA_RETURN_IF_ERROR(stages.Run(
        stage.name, [this, method = stage.start] { return (this->*method)(); }, std::move(stop)));
  }
  return Status::Ok();
}

Status SeptadApp::Impl::MakeDataDir() {
  std::error_code ec;
  fs::create_directories(config.data_dir, ec);
  if (ec) return InvalidField("data_dir", "cannot create " + config.data_dir + ": " + ec.message());
  // 0711: private listing, but the embedded PostgreSQL's user (postgres, when we
  // run as root) must traverse it to reach postgres/.
  if (::chmod(config.data_dir.c_str(), 0711) != 0) {
    return InvalidField("data_dir", "cannot chmod 0711 " + config.data_dir + ": " + std::strerror(errno));
  }
  database_url = config.database_url;
  return Status::Ok();
}

Status SeptadApp::Impl::StartPostgres() {
  const auto started = std::chrono::steady_clock::now();
  auto pg = store::EmbeddedPostgres::Start({.root = config.data_dir});
  SEPTA_RETURN_IF_ERROR(pg);
  postgres = *std::move(pg);
  postgres_supervisor = std::make_unique<store::PostgresSupervisor>(*postgres, clock);
  database_url = postgres->url();
  spdlog::info(
      "embedded PostgreSQL ready in {} ms under {}/postgres",
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count(),
      config.data_dir);
  return Status::Ok();
}

void SeptadApp::Impl::StopPostgres() {
  postgres_supervisor.reset();  // before stopping the server it would start again
  if (postgres) {
    if (Status st = postgres->Stop(); !st.ok()) spdlog::warn("stopping PostgreSQL: {}", st.message());
  }
  postgres.reset();
}

Status SeptadApp::Impl::OpenStore() {
  auto migrations = config.migrations_dir.empty() ? store::EmbeddedMigrations()
                                                  : store::LoadMigrationsFromDirectory(config.migrations_dir);
  SEPTA_RETURN_IF_ERROR(migrations);
  store::MigrationRunner runner(*migrations);
  auto report = runner.Apply(database_url);
  SEPTA_RETURN_IF_ERROR(report);
  for (const auto& name : report->applied) spdlog::info("applied migration {}", name);

  store = std::make_unique<store::PgStore>(store::PgStoreOptions{.database_url = database_url,
                                                                 .pool_size = config.db_pool_size,
                                                                 .acquire_timeout = config.db_acquire_timeout,
                                                                 .statement_timeout = config.db_statement_timeout,
                                                                 .migrations = *migrations});
  return store->Ready();
}

void SeptadApp::Impl::CloseStore() { store.reset(); }

Status SeptadApp::Impl::MakeUseCases() {
  authenticator = std::make_unique<core::Authenticator>(*store, clock, config.auth_cache_ttl);
  tenants = std::make_unique<core::TenantService>(*store, clock, *authenticator, gpu::Catalog::Default(),
                                                  config.idempotency_ttl);
  members = std::make_unique<core::MemberService>(*store, clock);
  tiers = std::make_unique<core::TrustTierService>(*store, clock, *authenticator);
  inventory_service = std::make_unique<core::InventoryService>(*store);
  tokens = std::make_unique<core::TokenService>(
      *store, clock, random, *authenticator,
      core::TokenLimits{.admin_ttl_max = std::chrono::duration_cast<std::chrono::seconds>(config.admin_token_ttl_max),
                        .tenant_live_max = config.tenant_live_tokens_max});
  sessions = std::make_unique<core::SessionService>(*store, clock, random, *authenticator);
  SEPTA_RETURN_IF_ERROR(MakeIdentity());
  // Revocations committed by any replica reach this one's caches at once:
  // tokens, and people's memberships (a change of a tenant's members or
  // state is told as its principal's; migrations/0015, 0027).
  store->WatchRevocations([auth = authenticator.get(), people = people.get(),
                           person_sign_in = person_sign_in.get()](const core::Revocation& r) {
    auth->Forget(r);
    if (r.token_id.empty()) people->Forget();
    if (person_sign_in != nullptr) person_sign_in->Forget(r);
  });
  capacity = std::make_unique<core::CapacityLedger>(gpu::Catalog::Default(), "septa",
                                                    MigRelayoutPolicyOf(config.mig_relayout));
  vclusters = std::make_unique<core::VirtualClusterService>(*store, clock, *capacity, gpu::Catalog::Default(),
                                                            config.idempotency_ttl);
  apply = std::make_unique<core::ApplyService>(*store, clock, *capacity, gpu::Catalog::Default(), *authenticator,
                                               apply_decoder);
  usage = std::make_unique<core::UsageService>(
      *store, clock,
      core::UsageServiceSettings{.currency = config.usage_currency,
                                 .hoarding = wiring::HoardingSettingsOf(config),
                                 .minute_retention = config.usage_minute_retention});
  // Alive unless the PostgreSQL septad owns stays down despite restarts (an
  // external database being down is a matter of readiness, not liveness).
  probes = std::make_unique<core::Probes>(
      *store, [this] { return postgres_supervisor ? postgres_supervisor->Health() : Status::Ok(); },
      config.db_ready_timeout);
  return Status::Ok();
}

void SeptadApp::Impl::DropUseCases() {
  // The revocation watcher points at the authenticator.
  if (store) store->WatchRevocations(nullptr);
  probes.reset();
  usage.reset();
  apply.reset();
  vclusters.reset();
  capacity.reset();
  sessions.reset();
  person_sign_in.reset();
  portal_clients.reset();
  people.reset();
  token_exchange.reset();
  tokens.reset();
  inventory_service.reset();
  tiers.reset();
  members.reset();
  tenants.reset();
  authenticator.reset();
}

// The bootstrap admin token: kept while data_dir/admin.token still signs
// in; otherwise minted only while no live admin owner token exists, for
// bootstrap_admin_ttl, so that neither restarts nor replicas mint root
// credentials that never expire (docs/install.md "The first admin token").
Status SeptadApp::Impl::EnsureAdminToken() {
  const fs::path path = fs::path(config.data_dir) / "admin.token";
  if (fs::exists(path)) {
    auto kept = base::ReadFile(path);
    SEPTA_RETURN_IF_ERROR(kept);
    while (!kept->empty() && std::isspace(static_cast<unsigned char>(kept->back()))) kept->pop_back();
    if (authenticator->Authenticate(*kept).ok()) return Status::Ok();
  }
  auto issued =
      tokens->CreateBootstrapAdmin(std::chrono::duration_cast<std::chrono::seconds>(config.bootstrap_admin_ttl));
  SEPTA_RETURN_IF_ERROR(issued);
  if (!issued->has_value()) {
    spdlog::info(
        "no bootstrap admin token minted: a live admin token exists (create more with it: septactl token "
        "create --principal admin)");
    return Status::Ok();
  }
  SEPTA_RETURN_IF_ERROR(wiring::WriteSecretFile(path, (*issued)->secret_text));
  new_admin_token = (*issued)->secret_text;
  return Status::Ok();
}

// The link is a convenience: without it (no admin token left in data_dir,
// too many unused codes) septad serves as ever and says why.
Status SeptadApp::Impl::WriteSignInLink() {
  if (config.web_dir.empty()) return InvalidField("sign_in_link", "needs web_dir: the portal to sign in to");
  auto code = [&]() -> Result<core::IssuedSignInCode> {
    auto token = base::ReadFile(fs::path(config.data_dir) / "admin.token");
    SEPTA_RETURN_IF_ERROR(token);
    while (!token->empty() && std::isspace(static_cast<unsigned char>(token->back()))) token->pop_back();
    auto admin = authenticator->Authenticate(*token);
    if (!admin.ok()) return Status(admin.status().code(), "data_dir/admin.token: " + admin.status().message());
    core::RequestContext ctx;
    ctx.principal = *admin;
    ctx.request_id = "sign-in-link";
    return sessions->CreateSignInCode(ctx);
  }();
  if (!code.ok()) {
    spdlog::warn("portal: no sign-in link ({}); sign in with an API token", code.status().message());
    return Status::Ok();
  }
  auto [host, port] = wiring::HostPort(config.http_addr);
  if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";  // a wildcard is reached at loopback
  const std::string link = std::string(config.tls_cert_file.empty() ? "http://" : "https://") + host + ":" +
                           std::to_string(http->port()) + "/sign-in#code=" + code->code;
  SEPTA_RETURN_IF_ERROR(wiring::WriteSecretFile(fs::path(config.data_dir) / "sign-in-link", link));
  spdlog::info(
      "portal: sign in as admin at {} (one use, within {} minutes)", link,
      std::chrono::duration_cast<std::chrono::minutes>(*code->token.expire_time - code->token.create_time).count());
  return Status::Ok();
}

Status SeptadApp::Impl::StartSweepers() {
  const std::chrono::milliseconds ttl = config.idempotency_ttl;
  idempotency_sweeper = std::make_unique<Sweeper>(
      clock, *registry,
      SweepSpec{
          .what = "idempotency keys older than " +
                  std::to_string(std::chrono::duration_cast<std::chrono::seconds>(ttl).count()) + " s",
          // A quarter of the keys' time to live, at most every 10 minutes.
          .interval = std::clamp<std::chrono::milliseconds>(ttl / 4, std::chrono::seconds(1), std::chrono::minutes(10)),
          .sweep = [this, ttl](TimePoint now) { return core::SweepExpiredIdempotencyKeys(*store, now, ttl); },
          .metric = "septa_idempotency_keys_expired_total",
          .help = "Idempotency-Keys forgotten after their time to live"});
  const std::chrono::milliseconds retention = config.token_retention;
  token_sweeper = std::make_unique<Sweeper>(
      clock, *registry,
      SweepSpec{.what = "API tokens dead for more than " +
                        std::to_string(std::chrono::duration_cast<std::chrono::hours>(retention).count()) + " h",
                .interval = std::chrono::hours(1),
                .sweep = [this, retention](TimePoint now) { return core::SweepDeadTokens(*store, now - retention); },
                .metric = "septa_tokens_deleted_total",
                .help = "API tokens (with their sessions) deleted token_retention after they were revoked or expired"});
  return Status::Ok();
}

void SeptadApp::Impl::StopSweepers() {
  token_sweeper.reset();
  idempotency_sweeper.reset();
}

// Before any lease is taken: the identity is stable (a restart after a crash
// takes its own leases back at once) and nobody else live uses it.
Status SeptadApp::Impl::LockReplicaId() {
  auto id = ResolveReplicaId(config.replica_id, config.data_dir, random);
  SEPTA_RETURN_IF_ERROR(id);
  replica_id = *std::move(id);
  auto lock = store::ReplicaLock::Acquire({.database_url = database_url,
                                           .replica_id = replica_id,
                                           // Lost to another live septad of the same id (after a database
                                           // restart): stop as an operator's SIGTERM would, releasing nothing
                                           // the other one holds but the leases of our shared name.
                                           .on_lost = [](const Status&) { ::kill(::getpid(), SIGTERM); }});
  SEPTA_RETURN_IF_ERROR(lock);
  replica_lock = *std::move(lock);
  spdlog::info("replica {}", replica_id);
  return Status::Ok();
}

void SeptadApp::Impl::UnlockReplicaId() { replica_lock.reset(); }  // after the leases are released: the name is free

Status SeptadApp::Impl::Listen() {
  // Both transports serve one table of the API's RPCs (services/apiv1/api.h).
  auto api = apiv1::LoadApiV1(UseCases());
  SEPTA_RETURN_IF_ERROR(api);
  rest::RestApiOptions rest_options;
  rest_options.worker_threads = static_cast<std::size_t>(config.worker_threads);
  rest_options.more_metrics = {std::make_shared<PoolCollector>(*store)};
  rest_options.tls = !config.tls_cert_file.empty();
  if (!config.web_dir.empty()) {
    auto web_app = rest::WebApp::Load(config.web_dir, "web_dir");
    SEPTA_RETURN_IF_ERROR(web_app);
    spdlog::info("portal: {} files from {}", (*web_app)->file_count(), config.web_dir);
    rest_options.web_app = *std::move(web_app);
  }
  rest = std::make_unique<rest::RestApi>(*api, UseCases(), *registry, std::move(rest_options));

  auto [host, port] = wiring::HostPort(config.http_addr);
  http::ServerOptions options;
  options.host = host;
  options.port = port;
  options.io_threads = static_cast<std::size_t>(config.http_io_threads);
  options.body_limit = config.http_body_limit;
  options.read_timeout = config.http_read_timeout;
  options.idle_timeout = config.http_idle_timeout;
  options.max_connections = config::EffectiveHttpMaxConnections(config, fd_limit);
  spdlog::info("REST serves at most {} connections (http_max_connections)", options.max_connections);
  options.error_formatter = &rest::RestApi::ServerError;
  std::optional<grpcapi::GrpcServer::TlsKeyPair> tls;
  if (!config.tls_cert_file.empty()) {
    auto certificate = wiring::ReadConfiguredFile("tls_cert_file", config.tls_cert_file);
    SEPTA_RETURN_IF_ERROR(certificate);
    auto key = wiring::ReadConfiguredFile("tls_key_file", config.tls_key_file);
    SEPTA_RETURN_IF_ERROR(key);
    auto context = http::MakeServerTlsContext({*certificate, *key, "", false});
    if (!context.ok()) return InvalidField("tls_cert_file", context.status().message());
    options.tls = *context;
    tls = grpcapi::GrpcServer::TlsKeyPair{*std::move(certificate), *std::move(key)};
  }
  http = std::make_unique<http::Server>(options, rest->Handler());
  if (Status st = http->Start(); !st.ok()) {
    return Status(st.code(), "http_addr " + config.http_addr + ": " + st.message());
  }

  auto grpc_server = grpcapi::GrpcServer::Start(config.grpc_addr, *api, UseCases(), *registry, tls ? &*tls : nullptr);
  SEPTA_RETURN_IF_ERROR(grpc_server);
  grpc = *std::move(grpc_server);
  if (!config.metrics_addr.empty()) {
    auto [metrics_host, metrics_port] = wiring::HostPort(config.metrics_addr);
    http::ServerOptions metrics_options;
    metrics_options.host = metrics_host;
    metrics_options.port = metrics_port;
    metrics_options.max_connections = 16;  // Prometheus, and a person with curl
    metrics_http = std::make_unique<http::Server>(metrics_options, rest->MetricsHandler());
    if (Status st = metrics_http->Start(); !st.ok()) {
      return Status(st.code(), "metrics_addr " + config.metrics_addr + ": " + st.message());
    }
    spdlog::info("/metrics without a token at http://{}:{}/metrics (metrics_addr)", metrics_host, metrics_http->port());
  }
  return Status::Ok();
}

void SeptadApp::Impl::StopListening() {
  // Both listeners drain at once; the HTTP server's drain also waits for
  // replies the workers still owe.
  if (http) http->Shutdown(stop_grace);
  if (grpc) grpc->Shutdown(stop_grace);
  if (metrics_http) metrics_http->Shutdown(std::chrono::milliseconds(0));
  rest.reset();
}

Result<std::unique_ptr<SeptadApp>> SeptadApp::Start(const config::Config& config) {
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->stop_grace = config.shutdown_grace;
  impl->fd_limit = base::RaiseOpenFilesLimit();
  if (Status st = impl->StartStages(); !st.ok()) {
    impl->stages.StopAll();  // the ones started, last first
    return st;
  }
  return std::unique_ptr<SeptadApp>(new SeptadApp(std::move(impl)));
}

SeptadApp::SeptadApp(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SeptadApp::~SeptadApp() { Shutdown(impl_->config.shutdown_grace); }

std::uint16_t SeptadApp::http_port() const { return impl_->http->port(); }
std::optional<std::uint16_t> SeptadApp::metrics_port() const {
  if (!impl_->metrics_http) return std::nullopt;
  return impl_->metrics_http->port();
}
bool SeptadApp::tls() const { return !impl_->config.tls_cert_file.empty(); }
int SeptadApp::grpc_port() const { return impl_->grpc->port(); }
const rest::RestApi& SeptadApp::rest_api() const { return *impl_->rest; }
std::string SeptadApp::admin_token_path() const { return (fs::path(impl_->config.data_dir) / "admin.token").string(); }
const std::optional<std::string>& SeptadApp::new_admin_token() const { return impl_->new_admin_token; }
std::string SeptadApp::database_description() const { return store::RedactPassword(impl_->database_url); }
const std::string& SeptadApp::kubeconfig_path() const { return impl_->kubeconfig_path; }
vcp::SimulatedControlPlanes& SeptadApp::control_planes() { return *impl_->control_planes; }

void SeptadApp::Shutdown(std::chrono::milliseconds grace) {
  impl_->stop_grace = grace;
  impl_->stages.StopAll();  // idempotent
}

}  // namespace septa::app
