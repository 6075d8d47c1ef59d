// septad's parts and its stages (septad_app.cc lists them in order), shared
// by the files that define the stages: septad_app.cc (the database, the
// use cases, the replica's identity, the listeners) and septad_cluster_stages.cc
// (the host cluster, the controllers, the CA keys, the issuer, the virtual
// control planes). Private to services/app.
#pragma once

#include <prometheus/registry.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "gpu/catalog.h"
#include "gpu/mig_parted.h"
#include "services/apiv1/declarations.h"
#include "services/app/septad_app.h"
#include "services/app/startup_stages.h"
#include "services/app/sweeper.h"
#include "services/base/secure_random.h"
#include "services/core/use_cases.h"
#include "services/grpc/grpc_server.h"
#include "services/hostcp/host_control_planes.h"
#include "services/http/server.h"
#include "services/kube/client.h"
#include "services/kubesim/kubesim.h"
#include "services/oidc/sign_in_providers.h"
#include "services/reconcile/apply_set_controller.h"
#include "services/reconcile/hoarding_controller.h"
#include "services/reconcile/inventory_controller.h"
#include "services/reconcile/mig_layout_controller.h"
#include "services/reconcile/provisioner_controller.h"
#include "services/reconcile/shard_leases.h"
#include "services/reconcile/token_delivery_controller.h"
#include "services/reconcile/usage_scrape_controller.h"
#include "services/rest/rest_api.h"
#include "services/store/embedded_postgres.h"
#include "services/store/notification_listener.h"
#include "services/store/pg_lease_store.h"
#include "services/store/pg_store.h"
#include "services/store/pg_virtual_object_store.h"
#include "services/store/postgres_supervisor.h"
#include "services/store/replica_lock.h"
#include "services/syncer/syncer_controller.h"
#include "services/vault/key_encryption.h"
#include "services/vault/sealed_object_store.h"
#include "services/vault/vault_control_planes.h"
#include "services/vault/vault_pki_issuer.h"
#include "services/vcp/simulated_control_planes.h"

namespace septa::app {

// Each stage has a start (Status) and, when it leaves something running or
// held, a stop that undoes it: the stop also runs when its start fails, so it
// copes with any prefix of the start (resetting a null pointer is fine).
// Members are grouped by the stage that makes them, in stage order.
struct SeptadApp::Impl {
  // With issuer vault, client certificates chain to the virtual cluster's Vault intermediate.
  using ClientCaFn = std::function<Result<std::string>(const core::VirtualClusterKey&)>;

  config::Config config;
  std::uint64_t fd_limit = 1024;            // the open-file soft limit, raised to the hard one at start
  std::chrono::milliseconds stop_grace{0};  // the listeners' drain: Shutdown's grace
  SystemClock clock;
  base::SecureRandom random;
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  // The MIG layouts nodes may be asked for: mig-parted's stock ones and the
  // simulated cluster's own.
  gpu::MigPartedConfig mig_configs = gpu::StockMigPartedConfigs(gpu::Catalog::Default());

  // embedded-postgres (no database_url)
  std::unique_ptr<store::EmbeddedPostgres> postgres;
  // Restarts the embedded PostgreSQL when it dies; /healthz asks it.
  std::unique_ptr<store::PostgresSupervisor> postgres_supervisor;
  std::string database_url;  // database_url, or the embedded server's
  // store
  std::unique_ptr<store::PgStore> store;
  // use-cases
  std::unique_ptr<core::Authenticator> authenticator;
  std::unique_ptr<core::TenantService> tenants;
  std::unique_ptr<core::MemberService> members;
  std::unique_ptr<core::TrustTierService> tiers;
  std::unique_ptr<core::InventoryService> inventory_service;
  std::unique_ptr<core::TokenService> tokens;
  std::unique_ptr<core::TokenExchangeService> token_exchange;  // identity_wiring.cc
  std::unique_ptr<core::PeopleAuthenticator> people;           // identity_wiring.cc
  std::unique_ptr<core::SessionService> sessions;
  // People's portal sign-in (identity_wiring.cc): the providers' clients and the use case.
  std::unique_ptr<oidc::PortalClients> portal_clients;
  std::unique_ptr<core::PersonSignIn> person_sign_in;
  std::unique_ptr<core::VirtualPodService> pods;  // made once the virtual objects' store is (ca-keys)
  // The placement engine over the reservation rows, shared by every virtual cluster request.
  std::unique_ptr<core::CapacityLedger> capacity;
  std::unique_ptr<core::VirtualClusterService> vclusters;
  apiv1::ApplyObjectDecoder apply_decoder;    // a member's intent, for a revert
  std::unique_ptr<core::ApplyService> apply;  // GitOps' Diff and Apply
  std::unique_ptr<core::UsageService> usage;
  std::unique_ptr<core::Probes> probes;
  // admin-token
  std::optional<std::string> new_admin_token;
  // sweepers
  std::unique_ptr<Sweeper> idempotency_sweeper;
  std::unique_ptr<Sweeper> token_sweeper;
  // replica-lock: the holder of this replica's shard leases, locked so no
  // other live septad uses it (services/store/replica_lock.h).
  std::string replica_id;
  std::unique_ptr<store::ReplicaLock> replica_lock;
  // kubesim (no kubeconfig), host-cluster
  std::unique_ptr<kubesim::KubeSim> kubesim;
  std::string kubeconfig_path;
  std::unique_ptr<kube::Client> host_cluster;
  // leases
  std::unique_ptr<store::PgLeaseStore> leases;
  // inventory
  std::unique_ptr<reconcile::ShardLeases> inventory_shards;
  std::unique_ptr<reconcile::InventoryController> inventory;
  // mig-layouts
  std::unique_ptr<reconcile::ShardLeases> mig_layout_shards;
  std::unique_ptr<reconcile::MigLayoutController> mig_layouts;
  std::unique_ptr<store::NotificationListener> mig_layout_changes;  // NOTIFY of layout targets
  // ca-keys
  std::unique_ptr<store::PgVirtualObjectStore> virtual_objects;
  std::unique_ptr<vault::KeyRing> ca_keys;                          // kek_file (+ kek_previous_file)
  std::unique_ptr<vault::SealedVirtualObjectStore> sealed_objects;  // virtual_objects, CA keys wrapped
  // issuer: kubeconfigs with client certificates from each virtual
  // cluster's CA (the sealed store's), or with issuer vault from its Vault
  // intermediate.
  std::unique_ptr<vault::VaultClient> vault_client;  // issuer vault
  std::unique_ptr<vault::VaultPki> vault_pki;
  std::unique_ptr<vault::Issuer> issuer;
  vault::VaultPkiIssuer* vault_issuer = nullptr;                // issuer vault: `issuer`, typed
  std::unique_ptr<vault::VaultWorkloadAccess> vault_workloads;  // issuer vault with vault_workload_access
  std::unique_ptr<core::CredentialService> credentials;
  // control-planes
  std::unique_ptr<vcp::SimulatedControlPlanes> control_planes;     // control_plane: simulated
  std::unique_ptr<hostcp::HostControlPlanes> host_control_planes;  // control_plane: host
  std::unique_ptr<store::NotificationListener>
      virtual_object_changes;  // NOTIFY septa_virtual_objects -> control_planes
  std::unique_ptr<store::NotificationListener> vcluster_limit_changes;  // septa_vclusters -> their api_limits
  std::unique_ptr<vault::VaultControlPlanes> vault_planes;              // issuer vault: control_planes + the Vault PKI
  // provisioner (config provisioner)
  std::unique_ptr<core::TokenDelivery> token_delivery;
  std::unique_ptr<reconcile::ShardLeases> token_delivery_shards;
  std::unique_ptr<reconcile::TokenDeliveryController> token_deliveries;
  std::unique_ptr<store::NotificationListener> token_declaration_changes;  // NOTIFY septa_token_declarations
  std::unique_ptr<reconcile::ShardLeases> apply_set_shards;
  std::unique_ptr<reconcile::ApplySetController> apply_sets;
  std::unique_ptr<store::NotificationListener> apply_set_drift;  // NOTIFY septa_applyset_drift -> apply_sets
  // usage (config usage)
  std::unique_ptr<reconcile::ShardLeases> usage_shards;
  std::unique_ptr<reconcile::DcgmScraper> dcgm_scraper;
  std::unique_ptr<core::UsageAccounting> usage_accounting;
  std::unique_ptr<reconcile::UsageMetrics> usage_metrics;
  std::unique_ptr<reconcile::UsageScrapeController> usage_scrapes;
  std::unique_ptr<Sweeper> usage_retention;
  std::unique_ptr<reconcile::ShardLeases> provisioner_shards;
  std::unique_ptr<reconcile::ProvisionerController> provisioner;
  std::unique_ptr<syncer::SyncerController> syncer;               // on the provisioner's shards
  std::unique_ptr<store::NotificationListener> vcluster_changes;  // NOTIFY septa_vclusters -> provisioner, syncer
  // hoarding (config usage and provisioner): on the provisioner's shards
  std::unique_ptr<core::HoardingActor> hoarding_actor;
  std::unique_ptr<reconcile::HoardingController> hoarding;
  // issuer vault: NOTIFY septa_credentials -> the provisioner, which carries the revocation to Vault
  std::unique_ptr<store::NotificationListener> credential_revocations;
  // listeners (kept after their stop: their ports stay readable)
  std::unique_ptr<rest::RestApi> rest;
  std::unique_ptr<http::Server> http;
  std::unique_ptr<http::Server> metrics_http;  // metrics_addr
  std::unique_ptr<grpcapi::GrpcServer> grpc;

  // The one owner of the teardown order.
  StartupStages stages;

  ~Impl() { stages.StopAll(); }

  // Runs the stages in order (septad_app.cc); on an error the caller stops
  // the ones started.
  Status StartStages();

  Status MakeDataDir();
  Status StartPostgres();
  void StopPostgres();
  Status OpenStore();
  void CloseStore();
  Status MakeUseCases();
  Status MakeIdentity();
  void DropUseCases();
  Status EnsureAdminToken();
  Status WriteSignInLink();
  Status StartSweepers();
  void StopSweepers();
  Status LockReplicaId();
  void UnlockReplicaId();
  Status StartSimulatedCluster();
  void StopSimulatedCluster();
  Status ConnectHostCluster();
  void DisconnectHostCluster();
  Status OpenLeaseStore();
  void CloseLeaseStore();
  Status StartInventory();
  void StopInventory();
  Status StartMigLayouts();
  void StopMigLayouts();
  Status SealCaKeys();
  void DropCaKeys();
  Status MakeIssuer();
  Status MakeVaultIssuer();
  void DropIssuer();
  Status StartControlPlanes();
  Status StartSimulatedControlPlanes(const ClientCaFn& client_ca);
  Status MakeHostControlPlanes(const ClientCaFn& client_ca);
  void StopControlPlanes();
  Status StartApplySets();
  void StopApplySets();
  Status StartTokenDelivery();
  void StopTokenDelivery();
  Result<std::unique_ptr<reconcile::ShardLeases>> StartShards(const std::string& name);
  Status StartUsage();
  void StopUsage();
  Status StartProvisioner();
  Status MakeSyncer();
  void StopProvisioner();
  Status StartHoarding();
  void StopHoarding();
  Status Listen();
  void StopListening();

  // Tenants' kubeconfigs trust the CA their endpoint's serving certificate
  // is from: the listener's for simulated control planes, the virtual
  // cluster's own on the host (services/hostcp signs with it).
  Result<std::string> ServingCa(const std::string& tenant, const std::string& vcluster);

  core::UseCases UseCases() {
    return {
        *store,
        *authenticator,
        *people,
        *tenants,
        *members,
        *tiers,
        *tokens,
        *token_exchange,
        *sessions,
        person_sign_in.get(),
        *pods,
        random,
        *probes,
        *inventory_service,
        *vclusters,
        *credentials,
        *apply,
        *usage,
        config.db_request_timeout,
    };
  }
};

// Helpers of both files.
namespace wiring {

// Hoarders as the configuration defines them (ListHoarders and the hoarding
// controller alike): an idle run its scraper has not updated for four
// intervals is unknown, never idle.
core::HoardingSettings HoardingSettingsOf(const config::Config& config);
// Splits "host:port" (validated by config).
std::pair<std::string, std::uint16_t> HostPort(const std::string& addr);
// A file a configuration key names; an error names the key.
Result<std::string> ReadConfiguredFile(const std::string& key, const std::string& path);
// Writes the secret so that only the owner can read it, atomically.
Status WriteSecretFile(const std::filesystem::path& path, const std::string& secret);

}  // namespace wiring

}  // namespace septa::app
