#include "services/app/septad_app.h"

#include <prometheus/collectable.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "gpu/catalog.h"
#include "gpu/mig_parted.h"
#include "services/apiv1/api.h"
#include "services/app/idempotency_sweeper.h"
#include "services/app/replica_id.h"
#include "services/base/file.h"
#include "services/base/open_files.h"
#include "services/base/secure_random.h"
#include "services/core/api_limits.h"
#include "services/core/host_namespaces.h"
#include "services/core/use_cases.h"
#include "services/core/virtual_object_store.h"
#include "services/grpc/grpc_server.h"
#include "services/hostcp/host_control_planes.h"
#include "services/http/server.h"
#include "services/http/tls.h"
#include "services/kube/client.h"
#include "services/kube/resources.h"
#include "services/kubesim/kubesim.h"
#include "services/reconcile/inventory_controller.h"
#include "services/reconcile/mig_layout_controller.h"
#include "services/reconcile/provisioner_controller.h"
#include "services/reconcile/shard_leases.h"
#include "services/rest/rest_api.h"
#include "services/store/connection_url.h"
#include "services/store/embedded_postgres.h"
#include "services/store/migration.h"
#include "services/store/migration_runner.h"
#include "services/store/notification_listener.h"
#include "services/store/pg_lease_store.h"
#include "services/store/pg_store.h"
#include "services/store/pg_virtual_object_store.h"
#include "services/store/postgres_supervisor.h"
#include "services/store/replica_lock.h"
#include "services/syncer/syncer_controller.h"
#include "services/vault/builtin_ca_issuer.h"
#include "services/vault/key_encryption.h"
#include "services/vault/sealed_object_store.h"
#include "services/vault/vault_control_planes.h"
#include "services/vault/vault_pki_issuer.h"
#include "services/vcp/simulated_control_planes.h"

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

// Splits "host:port" (validated by config).
std::pair<std::string, std::uint16_t> HostPort(const std::string& addr) {
  const std::size_t colon = addr.rfind(':');
  return {addr.substr(0, colon), static_cast<std::uint16_t>(std::stoi(addr.substr(colon + 1)))};
}

// A file a configuration key names; an error names the key.
Result<std::string> ReadConfiguredFile(const std::string& key, const std::string& path) {
  auto text = base::ReadFile(path);
  if (!text.ok()) return InvalidField(key, text.status().message());
  return text;
}

// Writes the secret so that only the owner can read it, atomically.
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

// The config was validated: fraction_backend is "kai" or "hami".
tenancy::host::FractionBackend FractionBackendOf(const config::Config& config) {
  return config.fraction_backend == "hami" ? tenancy::host::FractionBackend::kHami
                                           : tenancy::host::FractionBackend::kKai;
}

// What the provisioner renders and the syncer checks pods and services
// against, from one place. With simulated control planes (`planes`), the
// host's pods may reach their listener: the NetworkPolicy's egress rule.
tenancy::host::RenderConfig RenderConfigOf(const config::Config& config, tenancy::host::Scheduler scheduler,
                                           const vcp::SimulatedControlPlanes* planes) {
  tenancy::host::RenderConfig render;
  render.scheduler = scheduler;
  render.fraction_backend = FractionBackendOf(config);
  render.external_service_tiers = config.external_service_tiers;
  render.integration_domains = config.integration_keys;
  if (planes) {
    render.virtual_api_address = planes->endpoint_host();
    render.virtual_api_port = planes->port();
  }
  return render;
}

}  // namespace

struct SeptadApp::Impl {
  config::Config config;
  std::uint64_t fd_limit = 1024;  // the open-file soft limit, raised to the hard one at start
  std::unique_ptr<store::EmbeddedPostgres> postgres;
  std::string database_url;
  std::unique_ptr<store::PgStore> store;
  SystemClock clock;
  // Restarts the embedded PostgreSQL when it dies; /healthz asks it.
  std::unique_ptr<store::PostgresSupervisor> postgres_supervisor;
  base::SecureRandom random;
  std::unique_ptr<core::Authenticator> authenticator;
  std::unique_ptr<core::TenantService> tenants;
  std::unique_ptr<core::TrustTierService> tiers;
  std::unique_ptr<core::TokenService> tokens;
  // The placement engine over the reservation rows, shared by every virtual cluster request.
  std::unique_ptr<core::CapacityLedger> capacity;
  std::unique_ptr<core::VirtualClusterService> vclusters;
  // Kubeconfigs with client certificates from each virtual cluster's CA
  // (the sealed store's), or with issuer vault from its Vault intermediate;
  // made by StartControlPlanes, which holds the CAs.
  std::unique_ptr<vault::VaultClient> vault_client;  // issuer vault
  std::unique_ptr<vault::VaultPki> vault_pki;
  std::unique_ptr<vault::Issuer> issuer;
  std::unique_ptr<core::CredentialService> credentials;
  std::unique_ptr<core::Probes> probes;
  std::unique_ptr<core::InventoryService> inventory_service;
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  std::unique_ptr<rest::RestApi> rest;
  std::unique_ptr<http::Server> http;
  std::unique_ptr<grpcapi::GrpcServer> grpc;
  std::unique_ptr<IdempotencySweeper> sweeper;
  std::unique_ptr<kubesim::KubeSim> kubesim;  // when no kubeconfig is configured
  std::unique_ptr<kube::Client> host_cluster;
  std::string kubeconfig_path;
  // The MIG layouts nodes may be asked for: mig-parted's stock ones and the
  // simulated cluster's own.
  gpu::MigPartedConfig mig_configs = gpu::StockMigPartedConfigs(gpu::Catalog::Default());
  // Holder of this replica's shard leases, locked so no other live septad
  // uses it (services/store/replica_lock.h).
  std::string replica_id;
  std::unique_ptr<store::ReplicaLock> replica_lock;
  std::unique_ptr<store::PgLeaseStore> leases;
  std::unique_ptr<store::PgVirtualObjectStore> virtual_objects;
  std::unique_ptr<vault::KeyRing> ca_keys;                          // kek_file (+ kek_previous_file)
  std::unique_ptr<vault::SealedVirtualObjectStore> sealed_objects;  // virtual_objects, CA keys wrapped
  std::unique_ptr<vcp::SimulatedControlPlanes> control_planes;      // control_plane: simulated
  std::unique_ptr<hostcp::HostControlPlanes> host_control_planes;   // control_plane: host
  std::unique_ptr<vault::VaultWorkloadAccess> vault_workloads;      // issuer vault with vault_workload_access
  std::unique_ptr<vault::VaultControlPlanes> vault_planes;          // issuer vault: control_planes + the Vault PKI
  std::unique_ptr<store::NotificationListener>
      virtual_object_changes;  // NOTIFY septa_virtual_objects -> control_planes
  std::unique_ptr<reconcile::ShardLeases> inventory_shards;
  std::unique_ptr<reconcile::InventoryController> inventory;
  std::unique_ptr<reconcile::ShardLeases> provisioner_shards;
  std::unique_ptr<reconcile::ProvisionerController> provisioner;
  std::unique_ptr<syncer::SyncerController> syncer;                     // on the provisioner's shards
  std::unique_ptr<store::NotificationListener> vcluster_changes;        // NOTIFY septa_vclusters -> provisioner, syncer
  std::unique_ptr<store::NotificationListener> vcluster_limit_changes;  // the same -> the control planes' api_limits
  // issuer vault: NOTIFY septa_credentials -> the provisioner, which carries the revocation to Vault
  std::unique_ptr<store::NotificationListener> credential_revocations;
  std::unique_ptr<reconcile::ShardLeases> mig_layout_shards;
  std::unique_ptr<reconcile::MigLayoutController> mig_layouts;
  std::unique_ptr<store::NotificationListener> mig_layout_changes;  // NOTIFY of layout targets
  std::optional<std::string> new_admin_token;
  bool stopped = false;

  // The revocation watcher points at the authenticator, which dies first.
  ~Impl() {
    if (store) store->WatchRevocations(nullptr);
  }

  Status Open();
  Status EnsureAdminToken();
  Status LockReplicaId();
  Status StartSimulatedCluster();
  Status StartControlPlanes();
  Status MakeVaultIssuer();
  Status SealCaKeys();
  Status ConnectHostCluster();
  Status StartInventory();
  Status StartProvisioner();
  Status MakeSyncer();
  Status StartMigLayouts();
  Status Listen();
  core::UseCases UseCases() {
    return {*store,
            *authenticator,
            *tenants,
            *tiers,
            *tokens,
            random,
            *probes,
            *inventory_service,
            *vclusters,
            *credentials,
            config.db_request_timeout};
  }
};

Status SeptadApp::Impl::Open() {
  std::error_code ec;
  fs::create_directories(config.data_dir, ec);
  if (ec) return InvalidField("data_dir", "cannot create " + config.data_dir + ": " + ec.message());
  // 0711: private listing, but the embedded PostgreSQL's user (postgres, when we
  // run as root) must traverse it to reach postgres/.
  if (::chmod(config.data_dir.c_str(), 0711) != 0) {
    return InvalidField("data_dir", "cannot chmod 0711 " + config.data_dir + ": " + std::strerror(errno));
  }

  database_url = config.database_url;
  if (database_url.empty()) {
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
  }

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
  SEPTA_RETURN_IF_ERROR(store->Ready());

  authenticator = std::make_unique<core::Authenticator>(*store, clock, config.auth_cache_ttl);
  // Revocations committed by any replica reach this one's token cache at once.
  store->WatchRevocations([auth = authenticator.get()](const core::Revocation& r) { auth->Forget(r); });
  tenants = std::make_unique<core::TenantService>(*store, clock, *authenticator, gpu::Catalog::Default(),
                                                  config.idempotency_ttl);
  tiers = std::make_unique<core::TrustTierService>(*store);
  inventory_service = std::make_unique<core::InventoryService>(*store);
  tokens = std::make_unique<core::TokenService>(
      *store, clock, random, *authenticator,
      core::TokenLimits{.admin_ttl_max = std::chrono::duration_cast<std::chrono::seconds>(config.admin_token_ttl_max),
                        .tenant_live_max = config.tenant_live_tokens_max});
  capacity = std::make_unique<core::CapacityLedger>(
      gpu::Catalog::Default(), "septa",
      config.mig_relayout == "off" ? core::MigRelayoutPolicy::kOff : core::MigRelayoutPolicy::kAuto);
  vclusters = std::make_unique<core::VirtualClusterService>(*store, clock, *capacity, gpu::Catalog::Default(),
                                                            config.idempotency_ttl);
  // Alive unless the PostgreSQL septad owns stays down despite restarts (an
  // external database being down is a matter of readiness, not liveness).
  probes = std::make_unique<core::Probes>(
      *store, [this] { return postgres_supervisor ? postgres_supervisor->Health() : Status::Ok(); },
      config.db_ready_timeout);
  return Status::Ok();
}

Status SeptadApp::Impl::EnsureAdminToken() {
  const fs::path path = fs::path(config.data_dir) / "admin.token";
  if (fs::exists(path)) return Status::Ok();
  auto issued = tokens->CreateBootstrapAdmin();
  SEPTA_RETURN_IF_ERROR(issued);
  SEPTA_RETURN_IF_ERROR(WriteSecretFile(path, issued->secret_text));
  new_admin_token = issued->secret_text;
  return Status::Ok();
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

// issuer vault: septad's Vault client (logged in lazily, so a Vault down at
// start delays credentials, not septad) and the PKI it configures; the
// provisioner ensures each virtual cluster's part through vault_planes.
Status SeptadApp::Impl::MakeVaultIssuer() {
  vault::VaultClientOptions options;
  options.address = config.vault_addr;
  options.ca_file = config.vault_ca_file;
  options.auth = config.vault_auth == "approle"      ? vault::AuthMethod::kAppRole
                 : config.vault_auth == "kubernetes" ? vault::AuthMethod::kKubernetes
                                                     : vault::AuthMethod::kToken;
  options.token_file = config.vault_token_file;
  options.role_id = config.vault_role_id;
  options.secret_id_file = config.vault_secret_id_file;
  options.kubernetes_role = config.vault_kubernetes_role;
  if (!config.vault_jwt_file.empty()) options.jwt_file = config.vault_jwt_file;
  if (!config.vault_auth_mount.empty()) options.approle_mount = options.kubernetes_mount = config.vault_auth_mount;
  auto client = vault::VaultClient::Create(std::move(options), clock, random);
  SEPTA_RETURN_IF_ERROR(client);
  vault_client = *std::move(client);
  vault::VaultPkiOptions pki;
  pki.root_mount = config.vault_pki_mount;
  vault_pki = std::make_unique<vault::VaultPki>(*vault_client, std::move(pki), core::StoredHostNamespaces(*store));
  issuer = std::make_unique<vault::VaultPkiIssuer>(*vault_pki);
  spdlog::info("credentials: issued by the Vault at {} (root mount {})", config.vault_addr, config.vault_pki_mount);
  if (!config.vault_workload_access) return Status::Ok();
  vault::VaultWorkloadAccessOptions workloads;
  if (!config.vault_workload_policy.empty()) workloads.policy_template = config.vault_workload_policy;
  workloads.token_ttl = std::chrono::duration_cast<std::chrono::seconds>(config.vault_workload_token_ttl);
  // A bad template is the admin's mistake: refuse it now, naming the key, not at every reconcile.
  SEPTA_RETURN_IF_ERROR(
      vault::RenderWorkloadPolicy(workloads.policy_template, "tenant", "vcluster", "vault_workload_policy"));
  vault_workloads = std::make_unique<vault::VaultWorkloadAccess>(*vault_client, std::move(workloads),
                                                                 core::StoredHostNamespaces(*store));
  spdlog::info("workloads' Vault access: a Kubernetes auth method per virtual cluster, role workloads");
  return Status::Ok();
}

// Every virtual cluster's Kubernetes API, served from PostgreSQL-backed
// kubesim stores on one listener, or (control_plane: host) run as a stock
// control plane on the host cluster; the provisioner ensures them.
Status SeptadApp::Impl::StartControlPlanes() {
  virtual_objects = std::make_unique<store::PgVirtualObjectStore>(store::PgVirtualObjectStoreOptions{
      .database_url = database_url, .pool_size = 4, .statement_timeout = config.db_statement_timeout});
  SEPTA_RETURN_IF_ERROR(SealCaKeys());
  if (config.issuer == "vault") {
    SEPTA_RETURN_IF_ERROR(MakeVaultIssuer());
  } else {
    issuer = std::make_unique<vault::BuiltinCaIssuer>(*sealed_objects, clock, random);
  }
  // Tenants' kubeconfigs trust the CA their endpoint's serving certificate
  // is from: the listener's for simulated control planes, the virtual
  // cluster's own on the host (services/hostcp signs with it).
  auto serving_ca = [this](const std::string& tenant, const std::string& vcluster) -> Result<std::string> {
    if (control_planes) return control_planes->listener_ca_certificate();
    auto stored = sealed_objects->GetControlPlane({tenant, vcluster});
    SEPTA_RETURN_IF_ERROR(stored);
    if (!stored->has_value()) return Unavailable("the virtual cluster's control plane is not stored yet");
    return (*stored)->ca_certificate;
  };
  credentials = std::make_unique<core::CredentialService>(*store, clock, *issuer, serving_ca);
  // With issuer vault, client certificates chain to the virtual cluster's Vault intermediate.
  std::function<Result<std::string>(const core::VirtualClusterKey&)> client_ca;
  if (vault_pki) {
    client_ca = [pki = vault_pki.get()](const core::VirtualClusterKey& key) {
      return pki->ClientCaPem(key.tenant, key.vcluster);
    };
  }
  core::ControlPlanes* inner = nullptr;
  if (config.control_plane == "host") {
    hostcp::HostControlPlanesOptions options;
    options.config.database_sslmode = config.control_plane_database_sslmode;
    options.database_admin_url = database_url;
    options.database_address = config.control_plane_database_address;
    options.client_ca = client_ca;
    options.host_namespace_of = core::StoredHostNamespaces(*store);
    SEPTA_RETURN_IF_ERROR(hostcp::ValidateHostControlPlanesOptions(options));
    host_control_planes = std::make_unique<hostcp::HostControlPlanes>(*host_cluster, *sealed_objects, options);
    inner = host_control_planes.get();
    spdlog::info("virtual control planes: on the host cluster, kine's databases reached at {}",
                 config.control_plane_database_address);
  } else {
    auto [host, port] = HostPort(config.vcluster_addr);
    vcp::SimulatedControlPlanesOptions options{.host = host,
                                               .port = port,
                                               .advertise_host = config.vcluster_advertise_address,
                                               .max_connections = config::VirtualApiMaxConnections(config, fd_limit),
                                               .idle_after = config.vcluster_idle_after};
    spdlog::info("virtual control planes serve at most {} connections", options.max_connections);
    options.client_ca = client_ca;
    options.api_limits = [this](const core::VirtualClusterKey& key) {
      return core::EffectiveApiLimitsOf(*store, key.tenant, key.vcluster);
    };
    control_planes = std::make_unique<vcp::SimulatedControlPlanes>(*sealed_objects, std::move(options));
    if (Status st = control_planes->Start(); !st.ok())
      return Status(st.code(), "vcluster_addr " + config.vcluster_addr + ": " + st.message());
    inner = control_planes.get();
    spdlog::info("virtual control planes serving {}", control_planes->endpoint("<tenant>", "<vcluster>"));
    // Other replicas' writes (migrations/0010_virtual_objects_notify.sql) refresh the copies loaded here.
    virtual_object_changes = std::make_unique<store::NotificationListener>(
        database_url, "septa_virtual_objects",
        [planes = control_planes.get()](const std::string& payload) {
          if (auto key = core::ParseVirtualClusterKey(payload)) planes->Changed(key->tenant, key->vcluster);
        },
        [planes = control_planes.get()] { planes->ChangedAll(); });
    // A virtual cluster's row changed (an admin's api_limits, say): its limits are read again.
    vcluster_limit_changes = std::make_unique<store::NotificationListener>(
        database_url, "septa_vclusters",
        [planes = control_planes.get()](const std::string& payload) {
          if (auto key = core::ParseVirtualClusterKey(payload)) planes->LimitsChanged(key->tenant, key->vcluster);
        },
        [planes = control_planes.get()] { planes->LimitsChangedAll(); });
  }
  if (vault_pki) {
    vault::WorkloadVaultSetup workloads{
        .access = vault_workloads.get(), .serving_ca = serving_ca, .secrets_operator = std::nullopt};
    if (vault_workloads && config.vault_secrets_operator) {
      auto ca = config.vault_ca_file.empty() ? Result<std::string>("") : base::ReadFile(config.vault_ca_file);
      if (!ca.ok()) return InvalidField("vault_ca_file", "cannot be read: " + ca.status().message());
      workloads.secrets_operator = vault::VaultSecretsOperatorOptions{
          .vault_address =
              config.vault_secrets_operator_address.empty() ? config.vault_addr : config.vault_secrets_operator_address,
          .vault_ca_pem = *ca,
          .operator_namespace = config.vault_secrets_operator_namespace};
    }
    // The issuer is the Vault one here (MakeVaultIssuer).
    vault::RevocationsToVault revocations{
        .revoked_serials =
            [credentials = credentials.get()](const std::string& tenant, const std::string& vcluster) {
              return credentials->RevokedUnexpiredSerials(tenant, vcluster);
            },
        .issuer = static_cast<vault::VaultPkiIssuer*>(issuer.get())};
    vault_planes =
        std::make_unique<vault::VaultControlPlanes>(*inner, *vault_pki, std::move(workloads), std::move(revocations));
  }
  return Status::Ok();
}

// The CA keys at rest: the KEK (kek_file, or data_dir/kek made on first
// start), the sealed store every user of CA keys goes through, and the pass
// that wraps keys still in clear or under kek_previous_file's KEK.
Status SeptadApp::Impl::SealCaKeys() {
  const bool default_path = config.kek_file.empty();
  const fs::path path = default_path ? fs::path(config.data_dir) / "kek" : fs::path(config.kek_file);
  auto current = vault::LoadKek("kek_file", path, random, default_path);
  SEPTA_RETURN_IF_ERROR(current);
  std::optional<vault::KeyEncryptionKey> previous;
  if (!config.kek_previous_file.empty()) {
    auto loaded = vault::LoadKek("kek_previous_file", config.kek_previous_file, random, false);
    SEPTA_RETURN_IF_ERROR(loaded);
    previous = *std::move(loaded);
  }
  ca_keys = std::make_unique<vault::KeyRing>(*std::move(current), std::move(previous));
  sealed_objects = std::make_unique<vault::SealedVirtualObjectStore>(*virtual_objects, *ca_keys, random);
  auto report = vault::RewrapStoredKeys(*virtual_objects, *ca_keys, random);
  if (!report.ok()) return Status(report.status().code(), "CA keys at rest: " + report.status().message());
  spdlog::info("CA keys at rest under key-encryption key {}: {} wrapped now, {} already", ca_keys->current().id,
               report->rewrapped, report->current);
  return Status::Ok();
}

Status SeptadApp::Impl::StartSimulatedCluster() {
  kubesim::KubeSimOptions options;
  options.listen = config.kubesim_addr;
  options.cluster_name = "septa-host";
  // KAI's role in the simulator: synced pods carry schedulerName kai-scheduler.
  options.nodes.scheduler_names = {"default-scheduler", "kai-scheduler"};
  std::string inventory_text(kubesim::SampleInventoryYaml());
  std::string inventory_source = "built-in sample inventory";
  if (!config.kubesim_inventory.empty()) {
    auto text = ReadConfiguredFile("kubesim_inventory", config.kubesim_inventory);
    SEPTA_RETURN_IF_ERROR(text);
    inventory_text = *std::move(text);
    inventory_source = config.kubesim_inventory;
  }
  auto inventory = kubesim::ParseInventory(inventory_text, inventory_source);
  if (!inventory.ok()) return InvalidField("kubesim_inventory", inventory.status().message());
  if (!inventory->mig_configs_yaml.empty()) {
    auto own = gpu::ParseMigParted(inventory->mig_configs_yaml, inventory_source + ": migConfigs");
    if (!own.ok()) return InvalidField("kubesim_inventory", own.status().message());
    for (auto& [name, groups] : own->configs) mig_configs.configs[name] = std::move(groups);
  }
  options.inventory = *std::move(inventory);
  kubesim = std::make_unique<kubesim::KubeSim>(std::move(options));
  if (Status st = kubesim->Start(); !st.ok()) {
    // The nodes are checked against the GPU catalog only when they are built.
    if (st.message().starts_with("inventory: ")) {
      return InvalidField("kubesim_inventory", inventory_source + ": " + st.message().substr(11));
    }
    return Status(st.code(), "kubesim_addr " + config.kubesim_addr + ": " + st.message());
  }
  auto admin = kubesim->AdminKubeconfig();
  SEPTA_RETURN_IF_ERROR(admin);
  // It holds an admin client key: owner-only, like the admin token.
  kubeconfig_path = (fs::path(config.data_dir) / "kubeconfig").string();
  SEPTA_RETURN_IF_ERROR(WriteSecretFile(kubeconfig_path, *admin));
  spdlog::info("simulated host cluster (kubesim, {}) serving {}; kubeconfig {}", inventory_source,
               kubesim->server_url(), kubeconfig_path);
  return Status::Ok();
}

// Connects to the host cluster (the simulated one when no kubeconfig is
// configured) and proves it answers before septad reports itself started.
Status SeptadApp::Impl::ConnectHostCluster() {
  if (config.kubeconfig.empty()) {
    SEPTA_RETURN_IF_ERROR(StartSimulatedCluster());
  } else {
    kubeconfig_path = config.kubeconfig;
  }
  // Any failure to load or use the file is a configuration error.
  auto client_config = kube::LoadKubeconfig(kubeconfig_path);
  if (!client_config.ok()) return InvalidArgument(client_config.status().message());
  auto client = kube::Client::Create(*std::move(client_config));
  if (!client.ok()) return InvalidArgument("kubeconfig " + kubeconfig_path + ": " + client.status().message());
  host_cluster = *std::move(client);
  kube::ListOptions one_page;
  one_page.limit = 500;
  auto nodes = host_cluster->List(kube::kNodes, "", one_page);
  if (!nodes.ok()) {
    return Status(nodes.status().code(), "cannot reach the host cluster at " + host_cluster->config().server + ": " +
                                             nodes.status().message());
  }
  spdlog::info("host cluster {} answers: {}{} nodes", host_cluster->config().server, nodes->items.size(),
               nodes->continue_token.empty() ? "" : "+");
  return Status::Ok();
}

// The inventory controller, on shards leased in PostgreSQL so that of
// several replicas exactly one acts on each node. Returns once the first
// sync is done, so the inventory is complete when septad starts serving.
Status SeptadApp::Impl::StartInventory() {
  const auto started = std::chrono::steady_clock::now();
  constexpr std::chrono::seconds kFirstSync{30};
  leases = std::make_unique<store::PgLeaseStore>(
      store::PgLeaseStoreOptions{.database_url = database_url, .statement_timeout = config.db_statement_timeout});
  inventory_shards = std::make_unique<reconcile::ShardLeases>(
      reconcile::ShardLeasesOptions{.name = "inventory", .holder = replica_id, .shards = 8}, *leases, clock);
  inventory_shards->Start();
  if (!inventory_shards->AwaitRounds(1, kFirstSync)) {
    return DeadlineExceeded("inventory: leases could not be taken within 30 s");
  }
  inventory = std::make_unique<reconcile::InventoryController>(
      reconcile::InventoryControllerOptions{.shards = inventory_shards.get()}, *store, *host_cluster,
      gpu::Catalog::Default(), mig_configs, clock, *registry);
  SEPTA_RETURN_IF_ERROR(inventory->Start(kFirstSync));
  if (!inventory->AwaitIdle(kFirstSync)) {
    spdlog::warn("inventory: the first sync did not finish within 30 s; it goes on in the background");
  }
  spdlog::info(
      "inventory: first sync in {} ms ({} of {} shards held)",
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count(),
      inventory_shards->Held().size(), inventory_shards->shard_count());
  return StartMigLayouts();
}

// The MIG layout controller, on shards of its own; told of new layout
// targets by NOTIFY, from whichever replica wrote them.
Status SeptadApp::Impl::StartMigLayouts() {
  constexpr std::chrono::seconds kStart{30};
  mig_layout_shards = std::make_unique<reconcile::ShardLeases>(
      reconcile::ShardLeasesOptions{.name = "mig-layout", .holder = replica_id, .shards = 8}, *leases, clock);
  mig_layout_shards->Start();
  if (!mig_layout_shards->AwaitRounds(1, kStart)) {
    return DeadlineExceeded("mig-layout: leases could not be taken within 30 s");
  }
  mig_layouts = std::make_unique<reconcile::MigLayoutController>(
      reconcile::MigLayoutControllerOptions{.shards = mig_layout_shards.get()}, *store, *host_cluster,
      gpu::Catalog::Default(), clock, *registry);
  SEPTA_RETURN_IF_ERROR(mig_layouts->Start(kStart));
  mig_layout_changes = std::make_unique<store::NotificationListener>(
      database_url, "septa_mig_layout_targets",
      [controller = mig_layouts.get()](const std::string& node) { controller->Enqueue(node); },
      [controller = mig_layouts.get()] { controller->Resync(); });
  return Status::Ok();
}

// The provisioner, on its own shards; triggered by every committed change
// to a virtual cluster (migrations/0008_vcluster_notify.sql).
Status SeptadApp::Impl::StartProvisioner() {
  auto scheduler = tenancy::host::ParseScheduler("scheduler", config.scheduler);
  SEPTA_RETURN_IF_ERROR(scheduler);
  provisioner_shards = std::make_unique<reconcile::ShardLeases>(
      reconcile::ShardLeasesOptions{.name = "provisioner", .holder = replica_id, .shards = 8}, *leases, clock);
  provisioner_shards->Start();
  if (!provisioner_shards->AwaitRounds(1, std::chrono::seconds(30))) {
    return DeadlineExceeded("provisioner: leases could not be taken within 30 s");
  }
  reconcile::ProvisionerControllerOptions options;
  options.render = RenderConfigOf(config, *scheduler, control_planes.get());
  options.shards = provisioner_shards.get();
  options.sleep_reservation = config.sleep_reservation == "release" ? reconcile::SleepReservation::kRelease
                                                                    : reconcile::SleepReservation::kKeep;
  options.ledger = capacity.get();
  core::ControlPlanes* planes = vault_planes     ? static_cast<core::ControlPlanes*>(vault_planes.get())
                                : control_planes ? static_cast<core::ControlPlanes*>(control_planes.get())
                                                 : host_control_planes.get();
  provisioner =
      std::make_unique<reconcile::ProvisionerController>(options, *store, *host_cluster, planes, clock, *registry);
  // Listening before the start's listing, so that nothing committed in between is missed, and so that the
  // listener's first Resync and the start's are one listing, not two.
  if (config.syncer) SEPTA_RETURN_IF_ERROR(MakeSyncer());
  vcluster_changes = std::make_unique<store::NotificationListener>(
      database_url, "septa_vclusters",
      [this](const std::string& payload) {
        provisioner->EnqueuePayload(payload);
        if (syncer) syncer->VirtualClusterChanged(payload);
      },
      [this] {
        provisioner->Resync();
        if (syncer) syncer->Resync();
      });
  if (vault_planes) {
    // A revocation reaches Vault's CRL at the virtual cluster's next reconcile: at once, or at the resync.
    credential_revocations = std::make_unique<store::NotificationListener>(
        database_url, "septa_credentials",
        [this](const std::string& key) {  // "<tenant>/<vcluster>/<serial>"
          if (const auto slash = key.rfind('/'); slash != std::string::npos) {
            provisioner->EnqueuePayload(std::string_view(key).substr(0, slash));
          }
        },
        [this] { provisioner->Resync(); });
  }
  SEPTA_RETURN_IF_ERROR(provisioner->Start(std::chrono::seconds(30)));
  spdlog::info("provisioner: started (scheduler {}; {} of {} shards held)", config.scheduler,
               provisioner_shards->Held().size(), provisioner_shards->shard_count());
  if (syncer) {
    SEPTA_RETURN_IF_ERROR(syncer->Start(std::chrono::seconds(30)));
    spdlog::info("syncer: started (fraction backend {}){}", config.fraction_backend,
                 host_control_planes ? "; it reaches each virtual cluster's API server at its Service" : "");
  }
  return Status::Ok();
}

// The syncer acts on the provisioner's shards and keys; made before the
// NOTIFY listener both consume, started after the provisioner.
Status SeptadApp::Impl::MakeSyncer() {
  auto scheduler = tenancy::host::ParseScheduler("scheduler", config.scheduler);
  SEPTA_RETURN_IF_ERROR(scheduler);
  syncer::SyncerOptions options;
  options.settings.scheduler = *scheduler;
  options.settings.fraction_backend = FractionBackendOf(config);
  options.settings.default_fraction_milli = config.default_gpu_fraction_milli;
  // Host control planes give each virtual cluster's own (WorkloadEndpointsOf).
  if (control_planes) {
    options.settings.virtual_api_host = control_planes->endpoint_host();
    options.settings.virtual_api_port = control_planes->port();
  }
  options.render = RenderConfigOf(config, *scheduler, control_planes.get());
  options.shards = provisioner_shards.get();
  core::ControlPlanes& planes =
      control_planes ? static_cast<core::ControlPlanes&>(*control_planes) : *host_control_planes;
  syncer = std::make_unique<syncer::SyncerController>(options, *store, *host_cluster, planes, clock, *registry);
  return Status::Ok();
}

Status SeptadApp::Impl::Listen() {
  // Both transports serve one table of the API's RPCs (services/apiv1/api.h).
  auto api = apiv1::LoadApiV1(UseCases());
  SEPTA_RETURN_IF_ERROR(api);
  rest = std::make_unique<rest::RestApi>(
      *api, UseCases(), *registry, static_cast<std::size_t>(config.worker_threads),
      std::vector<std::shared_ptr<prometheus::Collectable>>{std::make_shared<PoolCollector>(*store)});

  auto [host, port] = HostPort(config.http_addr);
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
    auto certificate = ReadConfiguredFile("tls_cert_file", config.tls_cert_file);
    SEPTA_RETURN_IF_ERROR(certificate);
    auto key = ReadConfiguredFile("tls_key_file", config.tls_key_file);
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
  return Status::Ok();
}

Result<std::unique_ptr<SeptadApp>> SeptadApp::Start(const config::Config& config) {
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->fd_limit = base::RaiseOpenFilesLimit();
  SEPTA_RETURN_IF_ERROR(impl->Open());
  SEPTA_RETURN_IF_ERROR(impl->EnsureAdminToken());
  impl->sweeper =
      std::make_unique<IdempotencySweeper>(*impl->store, impl->clock, config.idempotency_ttl, *impl->registry);
  SEPTA_RETURN_IF_ERROR(impl->LockReplicaId());
  SEPTA_RETURN_IF_ERROR(impl->ConnectHostCluster());
  SEPTA_RETURN_IF_ERROR(impl->StartInventory());
  SEPTA_RETURN_IF_ERROR(impl->StartControlPlanes());
  if (config.provisioner) SEPTA_RETURN_IF_ERROR(impl->StartProvisioner());
  SEPTA_RETURN_IF_ERROR(impl->Listen());
  return std::unique_ptr<SeptadApp>(new SeptadApp(std::move(impl)));
}

SeptadApp::SeptadApp(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SeptadApp::~SeptadApp() { Shutdown(impl_->config.shutdown_grace); }

std::uint16_t SeptadApp::http_port() const { return impl_->http->port(); }
bool SeptadApp::tls() const { return !impl_->config.tls_cert_file.empty(); }
int SeptadApp::grpc_port() const { return impl_->grpc->port(); }
const rest::RestApi& SeptadApp::rest_api() const { return *impl_->rest; }
std::string SeptadApp::admin_token_path() const { return (fs::path(impl_->config.data_dir) / "admin.token").string(); }
const std::optional<std::string>& SeptadApp::new_admin_token() const { return impl_->new_admin_token; }
std::string SeptadApp::database_description() const { return store::RedactPassword(impl_->database_url); }
const std::string& SeptadApp::kubeconfig_path() const { return impl_->kubeconfig_path; }
vcp::SimulatedControlPlanes& SeptadApp::control_planes() { return *impl_->control_planes; }

void SeptadApp::Shutdown(std::chrono::milliseconds grace) {
  if (impl_->stopped) return;
  impl_->stopped = true;
  // Both listeners drain at once; the HTTP server's drain also waits for
  // replies the workers still owe.
  if (impl_->http) impl_->http->Shutdown(grace);
  if (impl_->grpc) impl_->grpc->Shutdown(grace);
  impl_->rest.reset();
  impl_->sweeper.reset();
  if (impl_->store) impl_->store->WatchRevocations(nullptr);
  impl_->vcluster_changes.reset();
  impl_->credential_revocations.reset();
  impl_->syncer.reset();
  impl_->provisioner.reset();
  impl_->provisioner_shards.reset();
  impl_->mig_layout_changes.reset();
  impl_->mig_layouts.reset();
  impl_->mig_layout_shards.reset();
  impl_->inventory.reset();
  impl_->inventory_shards.reset();  // releases the leases: another replica takes over at once
  impl_->leases.reset();
  impl_->replica_lock.reset();  // after the leases are released: the name is free
  impl_->host_cluster.reset();
  impl_->virtual_object_changes.reset();
  impl_->vcluster_limit_changes.reset();
  impl_->vault_planes.reset();
  impl_->control_planes.reset();  // before the store its writes go to
  impl_->host_control_planes.reset();
  impl_->sealed_objects.reset();
  impl_->virtual_objects.reset();
  if (impl_->kubesim) impl_->kubesim->Stop();
  impl_->store.reset();
  impl_->postgres_supervisor.reset();  // before stopping the server it would start again
  if (impl_->postgres) {
    if (Status st = impl_->postgres->Stop(); !st.ok()) spdlog::warn("stopping PostgreSQL: {}", st.message());
  }
}

}  // namespace septa::app
