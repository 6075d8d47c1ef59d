// septad's stages from the host cluster on: the simulated cluster (no
// kubeconfig), the host cluster's client, the controllers' leases, the
// inventory and MIG layout controllers, the CA keys at rest, the issuer of
// tenants' certificates, the virtual control planes and the provisioner
// with the syncer. septad_app.cc lists the stages in order.
#include <spdlog/spdlog.h>

#include "services/app/septad_app_impl.h"
#include "services/base/file.h"
#include "services/core/api_limits.h"
#include "services/core/host_namespaces.h"
#include "services/core/retention.h"
#include "services/kube/resources.h"
#include "services/vault/builtin_ca_issuer.h"

namespace septa::app {

namespace fs = std::filesystem;

namespace {

vault::AuthMethod VaultAuthMethodOf(config::VaultAuth auth) {
  switch (auth) {
    case config::VaultAuth::kToken: return vault::AuthMethod::kToken;
    case config::VaultAuth::kAppRole: return vault::AuthMethod::kAppRole;
    case config::VaultAuth::kKubernetes: return vault::AuthMethod::kKubernetes;
  }
  return vault::AuthMethod::kToken;
}

reconcile::SleepReservation SleepReservationOf(config::SleepReservation reservation) {
  switch (reservation) {
    case config::SleepReservation::kKeep: return reconcile::SleepReservation::kKeep;
    case config::SleepReservation::kRelease: return reconcile::SleepReservation::kRelease;
  }
  return reconcile::SleepReservation::kKeep;
}

// What the provisioner renders and the syncer checks pods and services
// against, from one place. With simulated control planes (`planes`), the
// host's pods may reach their listener: the NetworkPolicy's egress rule.
tenancy::host::RenderConfig RenderConfigOf(const config::Config& config, const vcp::SimulatedControlPlanes* planes) {
  tenancy::host::RenderConfig render;
  render.scheduler = config.scheduler;
  render.fraction_backend = config.fraction_backend;
  render.external_service_tiers = config.external_service_tiers;
  render.integration_domains = config.integration_keys;
  if (planes) {
    render.virtual_api_address = planes->endpoint_host();
    render.virtual_api_port = planes->port();
  }
  return render;
}

}  // namespace

Status SeptadApp::Impl::StartSimulatedCluster() {
  kubesim::KubeSimOptions options;
  options.listen = config.kubesim_addr;
  options.cluster_name = "septa-host";
  // KAI's role in the simulator: synced pods carry schedulerName kai-scheduler.
  options.nodes.scheduler_names = {"default-scheduler", "kai-scheduler"};
  std::string inventory_text(kubesim::SampleInventoryYaml());
  std::string inventory_source = "built-in sample inventory";
  if (!config.kubesim_inventory.empty()) {
    auto text = wiring::ReadConfiguredFile("kubesim_inventory", config.kubesim_inventory);
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
  if (config.usage) options.dcgm = kubesim::DcgmSimOptions{};  // its dcgm-exporter test double on every GPU node
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
  SEPTA_RETURN_IF_ERROR(wiring::WriteSecretFile(kubeconfig_path, *admin));
  spdlog::info("simulated host cluster (kubesim, {}) serving {}; kubeconfig {}", inventory_source,
               kubesim->server_url(), kubeconfig_path);
  return Status::Ok();
}

void SeptadApp::Impl::StopSimulatedCluster() {
  if (kubesim) kubesim->Stop();
  kubesim.reset();
}

// Connects to the host cluster (the simulated one when no kubeconfig is
// configured) and proves it answers before septad reports itself started.
Status SeptadApp::Impl::ConnectHostCluster() {
  if (!config.kubeconfig.empty()) kubeconfig_path = config.kubeconfig;
  // Any failure to load or use the file (or the pod's service account) is a configuration error.
  auto client_config =
      kubeconfig_path == config::kInClusterKubeconfig ? kube::InClusterConfig() : kube::LoadKubeconfig(kubeconfig_path);
  if (!client_config.ok()) return InvalidField("kubeconfig", client_config.status().message());
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

void SeptadApp::Impl::DisconnectHostCluster() { host_cluster.reset(); }

Status SeptadApp::Impl::OpenLeaseStore() {
  leases = std::make_unique<store::PgLeaseStore>(
      store::PgLeaseStoreOptions{.database_url = database_url, .statement_timeout = config.db_statement_timeout});
  return Status::Ok();
}

void SeptadApp::Impl::CloseLeaseStore() { leases.reset(); }

// A controller's shards, leased in PostgreSQL so that of several replicas
// exactly one acts on each key; returns once the first round of leasing is
// done, so the controller starts on the shards this replica holds.
Result<std::unique_ptr<reconcile::ShardLeases>> SeptadApp::Impl::StartShards(const std::string& name) {
  constexpr std::chrono::seconds kFirstRound{30};
  auto shards = std::make_unique<reconcile::ShardLeases>(
      reconcile::ShardLeasesOptions{.name = name, .holder = replica_id, .shards = 8}, *leases, clock);
  shards->Start();
  if (!shards->AwaitRounds(1, kFirstRound)) return DeadlineExceeded(name + ": leases could not be taken within 30 s");
  return shards;
}

// The inventory controller, on shards leased in PostgreSQL so that of
// several replicas exactly one acts on each node. Returns once the first
// sync is done, so the inventory is complete when septad starts serving.
Status SeptadApp::Impl::StartInventory() {
  const auto started = std::chrono::steady_clock::now();
  constexpr std::chrono::seconds kFirstSync{30};
  SEPTA_ASSIGN_OR_RETURN(inventory_shards, StartShards("inventory"));
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
  return Status::Ok();
}

void SeptadApp::Impl::StopInventory() {
  inventory.reset();
  inventory_shards.reset();  // releases the leases: another replica takes over at once
}

// The MIG layout controller, on shards of its own; told of new layout
// targets by NOTIFY, from whichever replica wrote them.
Status SeptadApp::Impl::StartMigLayouts() {
  constexpr std::chrono::seconds kStart{30};
  SEPTA_ASSIGN_OR_RETURN(mig_layout_shards, StartShards("mig-layout"));
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

void SeptadApp::Impl::StopMigLayouts() {
  mig_layout_changes.reset();
  mig_layouts.reset();
  mig_layout_shards.reset();
}

// The CA keys at rest: the KEK (kek_file, or data_dir/kek made on first
// start), the sealed store every user of CA keys goes through, and the pass
// that wraps keys still in clear or under kek_previous_file's KEK.
Status SeptadApp::Impl::SealCaKeys() {
  virtual_objects = std::make_unique<store::PgVirtualObjectStore>(store::PgVirtualObjectStoreOptions{
      .database_url = database_url, .pool_size = 4, .statement_timeout = config.db_statement_timeout});
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
  // Pods are in the virtual objects' store only where septad serves the virtual clusters' APIs.
  pods = std::make_unique<core::VirtualPodService>(*store, *virtual_objects,
                                                   config.control_plane == config::ControlPlane::kSimulated);
  auto report = vault::RewrapStoredKeys(*virtual_objects, *ca_keys, random);
  if (!report.ok()) return Status(report.status().code(), "CA keys at rest: " + report.status().message());
  spdlog::info("CA keys at rest under key-encryption key {}: {} wrapped now, {} already", ca_keys->current().id,
               report->rewrapped, report->current);
  return Status::Ok();
}

void SeptadApp::Impl::DropCaKeys() {
  pods.reset();
  sealed_objects.reset();
  ca_keys.reset();
  virtual_objects.reset();
}

// Who signs tenants' client certificates (config issuer), and the
// credentials use case over it.
Status SeptadApp::Impl::MakeIssuer() {
  switch (config.issuer) {
    case config::Issuer::kVault: SEPTA_RETURN_IF_ERROR(MakeVaultIssuer()); break;
    case config::Issuer::kBuiltin:
      issuer = std::make_unique<vault::BuiltinCaIssuer>(*sealed_objects, clock, random);
      break;
  }
  credentials = std::make_unique<core::CredentialService>(
      *store, clock, *issuer,
      [this](const std::string& tenant, const std::string& vcluster) { return ServingCa(tenant, vcluster); });
  return Status::Ok();
}

// issuer vault: septad's Vault client (logged in lazily, so a Vault down at
// start delays credentials, not septad) and the PKI it configures; the
// provisioner ensures each virtual cluster's part through vault_planes.
Status SeptadApp::Impl::MakeVaultIssuer() {
  vault::VaultClientOptions options;
  options.address = config.vault_addr;
  options.ca_file = config.vault_ca_file;
  options.auth = VaultAuthMethodOf(config.vault_auth);
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
  auto pki_issuer = std::make_unique<vault::VaultPkiIssuer>(*vault_pki);
  vault_issuer = pki_issuer.get();
  issuer = std::move(pki_issuer);
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

void SeptadApp::Impl::DropIssuer() {
  credentials.reset();
  vault_workloads.reset();
  vault_issuer = nullptr;
  issuer.reset();
  vault_pki.reset();
  vault_client.reset();
}

Result<std::string> SeptadApp::Impl::ServingCa(const std::string& tenant, const std::string& vcluster) {
  if (control_planes) return control_planes->listener_ca_certificate();
  auto stored = sealed_objects->GetControlPlane({tenant, vcluster});
  SEPTA_RETURN_IF_ERROR(stored);
  if (!stored->has_value()) return Unavailable("the virtual cluster's control plane is not stored yet");
  return (*stored)->ca_certificate;
}

// Every virtual cluster's Kubernetes API, served from PostgreSQL-backed
// kubesim stores on one listener, or (control_plane: host) run as a stock
// control plane on the host cluster; the provisioner ensures them, with
// issuer vault through vault_planes.
Status SeptadApp::Impl::StartControlPlanes() {
  ClientCaFn client_ca;
  if (vault_pki) {
    client_ca = [pki = vault_pki.get()](const core::VirtualClusterKey& key) {
      return pki->ClientCaPem(key.tenant, key.vcluster);
    };
  }
  core::ControlPlanes* inner = nullptr;
  switch (config.control_plane) {
    case config::ControlPlane::kHost:
      SEPTA_RETURN_IF_ERROR(MakeHostControlPlanes(client_ca));
      inner = host_control_planes.get();
      break;
    case config::ControlPlane::kSimulated:
      SEPTA_RETURN_IF_ERROR(StartSimulatedControlPlanes(client_ca));
      inner = control_planes.get();
      break;
  }
  if (vault_issuer == nullptr) return Status::Ok();
  vault::WorkloadVaultSetup workloads{
      .access = vault_workloads.get(),
      .serving_ca = [this](const std::string& tenant,
                           const std::string& vcluster) { return ServingCa(tenant, vcluster); },
      .secrets_operator = std::nullopt};
  if (vault_workloads && config.vault_secrets_operator) {
    auto ca = config.vault_ca_file.empty() ? Result<std::string>("") : base::ReadFile(config.vault_ca_file);
    if (!ca.ok()) return InvalidField("vault_ca_file", "cannot be read: " + ca.status().message());
    workloads.secrets_operator = vault::VaultSecretsOperatorOptions{
        .vault_address =
            config.vault_secrets_operator_address.empty() ? config.vault_addr : config.vault_secrets_operator_address,
        .vault_ca_pem = *ca,
        .operator_namespace = config.vault_secrets_operator_namespace};
  }
  vault::RevocationsToVault revocations{
      .revoked_serials =
          [credentials = credentials.get()](const std::string& tenant, const std::string& vcluster) {
            return credentials->RevokedUnexpiredSerials(tenant, vcluster);
          },
      .issuer = vault_issuer};
  vault_planes =
      std::make_unique<vault::VaultControlPlanes>(*inner, *vault_pki, std::move(workloads), std::move(revocations));
  return Status::Ok();
}

// control_plane host: a stock control plane per virtual cluster on the host
// cluster (services/hostcp), kine's database on septad's PostgreSQL server.
Status SeptadApp::Impl::MakeHostControlPlanes(const ClientCaFn& client_ca) {
  hostcp::HostControlPlanesOptions options;
  options.config.database_sslmode = config::Spelling(config.control_plane_database_sslmode);
  options.database_admin_url = database_url;
  options.database_address = config.control_plane_database_address;
  options.client_ca = client_ca;
  options.host_namespace_of = core::StoredHostNamespaces(*store);
  SEPTA_RETURN_IF_ERROR(hostcp::ValidateHostControlPlanesOptions(options));
  host_control_planes = std::make_unique<hostcp::HostControlPlanes>(*host_cluster, *sealed_objects, options);
  spdlog::info("virtual control planes: on the host cluster, kine's databases reached at {}",
               config.control_plane_database_address);
  return Status::Ok();
}

// control_plane simulated: every virtual cluster's API on the vcluster_addr
// listener, kept fresh by NOTIFY from other replicas' writes.
Status SeptadApp::Impl::StartSimulatedControlPlanes(const ClientCaFn& client_ca) {
  auto [host, port] = wiring::HostPort(config.vcluster_addr);
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
  if (Status st = control_planes->Start(); !st.ok()) {
    return Status(st.code(), "vcluster_addr " + config.vcluster_addr + ": " + st.message());
  }
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
  return Status::Ok();
}

void SeptadApp::Impl::StopControlPlanes() {
  virtual_object_changes.reset();
  vcluster_limit_changes.reset();
  vault_planes.reset();
  control_planes.reset();  // before the store its writes go to
  host_control_planes.reset();
}

// The apply set controller (GitOps' drift), on its own shards; triggered
// by every write outside a set to a field it owns (NOTIFY
// septa_applyset_drift, from core::GuardSetMember).
Status SeptadApp::Impl::StartApplySets() {
  SEPTA_ASSIGN_OR_RETURN(apply_set_shards, StartShards("apply-sets"));
  apply_sets = std::make_unique<reconcile::ApplySetController>(
      reconcile::ApplySetControllerOptions{.shards = apply_set_shards.get()}, *apply, *store, clock, *registry);
  // Listening before the start's listing, so that nothing committed in between is missed.
  apply_set_drift = std::make_unique<store::NotificationListener>(
      database_url, "septa_applyset_drift", [this](const std::string& payload) { apply_sets->DriftNoted(payload); },
      [this] { apply_sets->Resync(); });
  apply_sets->Start();
  return Status::Ok();
}

void SeptadApp::Impl::StopApplySets() {
  apply_set_drift.reset();
  apply_sets.reset();
  apply_set_shards.reset();
}

// The delivery of API tokens declared in Git to Secrets of the host
// cluster, on its own shards; triggered by every declaration made or
// changed (NOTIFY septa_token_declarations), and by each token's due time.
Status SeptadApp::Impl::StartTokenDelivery() {
  token_delivery = std::make_unique<core::TokenDelivery>(*store, clock, *tokens);
  SEPTA_ASSIGN_OR_RETURN(token_delivery_shards, StartShards("token-delivery"));
  token_deliveries = std::make_unique<reconcile::TokenDeliveryController>(
      reconcile::TokenDeliveryControllerOptions{.shards = token_delivery_shards.get()}, *token_delivery, *store,
      *host_cluster, clock, *registry);
  token_declaration_changes = std::make_unique<store::NotificationListener>(
      database_url, "septa_token_declarations", [this](const std::string& name) { token_deliveries->Enqueue(name); },
      [this] { token_deliveries->Resync(); });
  token_deliveries->Start();
  return Status::Ok();
}

void SeptadApp::Impl::StopTokenDelivery() {
  token_declaration_changes.reset();
  token_deliveries.reset();
  token_delivery_shards.reset();
  token_delivery.reset();
}

// The usage scraper (docs/usage.md), on its own shards: each replica reads
// and accounts the GPU nodes of the shards it holds.
Status SeptadApp::Impl::StartUsage() {
  SEPTA_ASSIGN_OR_RETURN(usage_shards, StartShards("usage-scrape"));
  reconcile::DcgmScraperOptions scraper{.exporter_namespace = config.usage_exporter_namespace,
                                        .exporter_selector = config.usage_exporter_selector,
                                        .list_every = config.usage_scrape_interval,
                                        .timeout = config.usage_scrape_timeout};
  scraper.normalise.per_process_pod_values = config.usage_exporter_per_pod_values;
  dcgm_scraper = std::make_unique<reconcile::DcgmScraper>(std::move(scraper), *host_cluster, clock);
  tenancy::usage::NodeAccountingSettings settings;
  settings.usage.scrape_interval = config.usage_scrape_interval;
  usage_accounting = std::make_unique<core::UsageAccounting>(*store, gpu::Catalog::Default(), settings);
  if (!usage_metrics) usage_metrics = std::make_unique<reconcile::UsageMetrics>(*registry, config.usage_currency);
  usage_scrapes = std::make_unique<reconcile::UsageScrapeController>(
      reconcile::UsageScrapeControllerOptions{.interval = config.usage_scrape_interval, .shards = usage_shards.get()},
      *dcgm_scraper, *usage_accounting, *usage_metrics, *store, clock, *registry);
  usage_scrapes->Start();
  const std::chrono::milliseconds retention = config.usage_minute_retention;
  usage_retention = std::make_unique<Sweeper>(
      clock, *registry,
      SweepSpec{.what = "one-minute usage rows older than " +
                        std::to_string(std::chrono::duration_cast<std::chrono::hours>(retention).count()) + " h",
                .interval = std::chrono::hours(1),
                .sweep = [this, retention](TimePoint now) { return core::SweepUsageMinutes(*store, now - retention); },
                .metric = "septa_usage_minutes_deleted_total",
                .help = "One-minute usage rows deleted after usage_minute_retention (hours and days stay)"});
  return Status::Ok();
}

void SeptadApp::Impl::StopUsage() {
  usage_retention.reset();
  usage_scrapes.reset();
  usage_accounting.reset();
  dcgm_scraper.reset();
  usage_shards.reset();
}

// Acting on hoarders (usage_hoarding_sleep_after), on the provisioner's
// shards: the replica that would carry out a sleep decides it.
Status SeptadApp::Impl::StartHoarding() {
  hoarding_actor = std::make_unique<core::HoardingActor>(*store, clock, wiring::HoardingSettingsOf(config));
  hoarding = std::make_unique<reconcile::HoardingController>(
      reconcile::HoardingControllerOptions{.interval = config.usage_scrape_interval,
                                           .shards = provisioner_shards.get()},
      *hoarding_actor, *registry);
  return Status::Ok();
}

void SeptadApp::Impl::StopHoarding() {
  hoarding.reset();
  hoarding_actor.reset();
}

// The provisioner, on its own shards; triggered by every committed change
// to a virtual cluster (migrations/0008_vcluster_notify.sql).
Status SeptadApp::Impl::StartProvisioner() {
  SEPTA_ASSIGN_OR_RETURN(provisioner_shards, StartShards("provisioner"));
  reconcile::ProvisionerControllerOptions options;
  options.render = RenderConfigOf(config, control_planes.get());
  options.shards = provisioner_shards.get();
  options.sleep_reservation = SleepReservationOf(config.sleep_reservation);
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
  spdlog::info("provisioner: started (scheduler {}; {} of {} shards held)", config::Spelling(config.scheduler),
               provisioner_shards->Held().size(), provisioner_shards->shard_count());
  if (syncer) {
    SEPTA_RETURN_IF_ERROR(syncer->Start(std::chrono::seconds(30)));
    spdlog::info("syncer: started (fraction backend {}){}", config::Spelling(config.fraction_backend),
                 host_control_planes ? "; it reaches each virtual cluster's API server at its Service" : "");
  }
  return Status::Ok();
}

// The syncer acts on the provisioner's shards and keys; made before the
// NOTIFY listener both consume, started after the provisioner.
Status SeptadApp::Impl::MakeSyncer() {
  syncer::SyncerOptions options;
  options.settings.scheduler = config.scheduler;
  options.settings.fraction_backend = config.fraction_backend;
  options.settings.default_fraction_milli = config.default_gpu_fraction_milli;
  // Host control planes give each virtual cluster's own (WorkloadEndpointsOf).
  if (control_planes) {
    options.settings.virtual_api_host = control_planes->endpoint_host();
    options.settings.virtual_api_port = control_planes->port();
  }
  options.render = RenderConfigOf(config, control_planes.get());
  options.shards = provisioner_shards.get();
  core::ControlPlanes& planes =
      control_planes ? static_cast<core::ControlPlanes&>(*control_planes) : *host_control_planes;
  syncer = std::make_unique<syncer::SyncerController>(options, *store, *host_cluster, planes, clock, *registry);
  return Status::Ok();
}

void SeptadApp::Impl::StopProvisioner() {
  vcluster_changes.reset();
  credential_revocations.reset();
  syncer.reset();
  provisioner.reset();
  provisioner_shards.reset();
}

}  // namespace septa::app
