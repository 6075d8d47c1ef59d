// septad's one typed configuration. Sources, later ones winning: built-in
// defaults, a YAML file (--config), environment variables (SEPTA_<KEY>, e.g.
// SEPTA_DATABASE_URL), command-line flags (--<key> with '-' for '_').
// Every error names the key and the source it came from.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "tenancy/host/config.h"
#include "tenancy/usage/usage_math.h"

namespace septa::config {

// The enumerated keys, parsed once by Load: an unknown spelling is refused
// naming the key and its choices, and callers switch on these (no default
// case, so a new value is a compile error wherever it is not handled).
// scheduler and fraction_backend take tenancy::host's Scheduler and
// FractionBackend, which rendering uses as they are.
enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError };               // trace debug info warn error
enum class LogFormat { kText, kJson };                                      // text json
enum class MigRelayout { kAuto, kOff };                                     // auto off
enum class SleepReservation { kKeep, kRelease };                            // keep release
enum class ControlPlane { kSimulated, kHost };                              // simulated host
enum class DatabaseSslMode { kDisable, kRequire, kVerifyCa, kVerifyFull };  // disable require verify-ca verify-full
enum class Issuer { kBuiltin, kVault };                                     // builtin vault
enum class VaultAuth { kToken, kAppRole, kKubernetes };                     // token approle kubernetes

// Each value as the configuration spells it (for logs and messages).
std::string_view Spelling(LogLevel value);
std::string_view Spelling(LogFormat value);
std::string_view Spelling(MigRelayout value);
std::string_view Spelling(SleepReservation value);
std::string_view Spelling(ControlPlane value);
std::string_view Spelling(DatabaseSslMode value);
std::string_view Spelling(Issuer value);
std::string_view Spelling(VaultAuth value);
std::string_view Spelling(tenancy::host::Scheduler value);
std::string_view Spelling(tenancy::host::FractionBackend value);

// The `kubeconfig` value that means the pod's own service account
// (KUBERNETES_SERVICE_HOST/PORT and /var/run/secrets/kubernetes.io/serviceaccount).
inline constexpr char kInClusterKubeconfig[] = "in-cluster";

// An OpenID Connect identity provider septad trusts (docs/identity.md).
struct OidcIssuer {
  // Its issuer identifier: https (plain http only on a loopback host, for
  // tests); discovery at <issuer>/.well-known/openid-configuration.
  std::string issuer;
  std::string audience;  // the "aud" its tokens must carry for Septa
  // The portal's sign-in client (confidential: client_secret_file) and
  // septactl's (public; client_id when empty). An issuer with a client_id
  // signs people in: their ID tokens, "aud" one of these clients, are
  // bearer credentials (services/core/people.h).
  std::string client_id;
  std::string cli_client_id;
  std::string client_secret_file;  // the portal client's secret: set, people sign in to the portal here
  std::string name;                // the portal's sign-in button names it; empty: the issuer's host
  // What the portal's sign-in asks for; "groups" and "offline_access"
  // (for the refresh token that renews a session) as most providers name
  // them (Entra ID: leave out groups, its groups claim is configured on
  // the application).
  std::vector<std::string> scopes{"openid", "email", "profile", "groups", "offline_access"};
  std::string username_claim = "sub";
  std::string groups_claim = "groups";
  // Groups (as its groups claim names them) whose members are admins.
  std::vector<std::string> admin_groups{};
  std::string ca_file;  // PEM the provider's TLS certificate must chain to; empty: the system's
};

// Which tokens of an identity provider are exchanged for Septa tokens
// (core/token_exchange.h): a token of `issuer` carrying every one of
// `claims` becomes a token of `principal` with `role`, for `ttl` at most.
struct TokenExchangeRule {
  std::string issuer;                         // one of oidc_issuers
  std::map<std::string, std::string> claims;  // at least one
  std::string principal;                      // "admin" or "tenant:<name>"
  std::string role;                           // "owner" or "viewer"
  std::chrono::seconds ttl{900};
  std::vector<std::string> apply_sets;  // the token's scope (at most 16 set names); empty: none
};

struct Config {
  std::string data_dir;      // default: $HOME/.local/share/septa
  std::string database_url;  // empty: start the embedded PostgreSQL
  // Names this replica as the holder of its controllers' shard leases, so
  // that after a crash it takes its own leases back at once. Empty: a name
  // made once and kept in data_dir/replica_id. Two live septads never share
  // one: the second refuses to start (services/store/replica_lock.h).
  std::string replica_id;
  std::string http_addr = "127.0.0.1:8080";
  std::string grpc_addr = "127.0.0.1:9090";
  // Set: /metrics is also served without a token on this plain-HTTP address
  // (for Prometheus; a NetworkPolicy keeps everyone else off). On the REST
  // listener it always needs an admin token.
  std::string metrics_addr;
  // Both set: REST serves HTTPS and gRPC TLS with this PEM pair (leaf first,
  // then intermediates). Neither: plaintext, meant for loopback.
  std::string tls_cert_file;
  std::string tls_key_file;
  // The key-encryption key of the virtual clusters' CA keys (services/vault/
  // key_encryption.h). Empty: data_dir/kek, created 0600 on first start.
  std::string kek_file;
  // The KEK before a rotation: keys wrapped under it are read and re-wrapped
  // under kek_file's at start. Empty: no rotation under way.
  std::string kek_previous_file;
  LogLevel log_level = LogLevel::kInfo;
  LogFormat log_format = LogFormat::kText;
  std::string migrations_dir;  // empty: the migrations built into the binary
  // The portal's built files (web/dist), served at `/` on the REST listener
  // (services/rest/web_app.h). Empty: no portal, the API alone.
  std::string web_dir;
  // At start, a one-time link that signs a browser in to the portal as the
  // bootstrap admin, written to data_dir/sign-in-link and logged (as
  // Jupyter's token URL): for deploy/dev/run.sh, off by default.
  bool sign_in_link = false;
  std::uint64_t http_body_limit = 1 << 20;
  std::chrono::milliseconds http_read_timeout{30'000};
  std::chrono::milliseconds http_idle_timeout{60'000};
  int http_io_threads = 1;
  // Open HTTP connections at most; 0: derived from the file-descriptor limit,
  // see EffectiveHttpMaxConnections.
  int http_max_connections = 0;
  int worker_threads = 4;  // run use cases (database calls) off the I/O threads
  int db_pool_size = 8;
  // A database that stalls answers 503 UNAVAILABLE (Retry-After) after these,
  // instead of holding the request: a statement runs at most
  // db_statement_timeout (PostgreSQL's statement_timeout; it also bounds
  // connecting), a request waits at most db_acquire_timeout for a pooled
  // connection, and at most db_request_timeout on the database altogether
  // (waits, connects, statements and retries: core/deadline.h); readiness
  // (/readyz, gRPC health) at most db_ready_timeout.
  std::chrono::milliseconds db_statement_timeout{5'000};
  std::chrono::milliseconds db_acquire_timeout{2'000};
  std::chrono::milliseconds db_request_timeout{5'000};
  std::chrono::milliseconds db_ready_timeout{1'000};
  std::chrono::milliseconds auth_cache_ttl{5'000};
  std::chrono::milliseconds idempotency_ttl{24 * 3'600'000};  // then the key is free again and swept
  // Lifetime cap of API-issued admin tokens (tenant tokens: their tier's cap).
  std::chrono::milliseconds admin_token_ttl_max{768LL * 3'600'000};
  // Lifetime of the bootstrap admin token, minted only while no live admin
  // owner token exists (capped by admin_token_ttl_max).
  std::chrono::milliseconds bootstrap_admin_ttl{24LL * 3'600'000};
  int tenant_live_tokens_max = 100;  // unexpired, unrevoked API tokens one tenant may hold
  // How long a revoked or expired API token (and the sessions made from
  // it) stays listed before it is deleted; its audit records stay.
  std::chrono::milliseconds token_retention{30LL * 24 * 3'600'000};
  std::chrono::milliseconds shutdown_grace{10'000};
  // auto: an isolated request that fits only after MIG GPUs that run
  // nothing are re-laid out gets them re-laid out; off: its refusal says
  // what a re-layout would free.
  MigRelayout mig_relayout = MigRelayout::kAuto;
  // The host Kubernetes cluster. Empty: septad runs a simulated cluster
  // (kubesim) in-process and writes its admin kubeconfig to data_dir.
  std::string kubeconfig;
  std::string kubesim_addr = "127.0.0.1:0";  // where the simulated cluster serves HTTPS
  std::string kubesim_inventory;             // its nodes (YAML file); empty: the built-in sample
  // Which scheduler's queues the provisioner writes on the host: KAI Queues,
  // Kueue ClusterQueues, or none (the default scheduler). KAI's CRDs are on
  // the simulated host.
  tenancy::host::Scheduler scheduler = tenancy::host::Scheduler::kKai;  // kai | kueue | default
  // false: septad runs no provisioner, so virtual clusters stay as the API
  // wrote them (the API's own tests, which assert its synchronous answers).
  bool provisioner = true;
  // The syncer (services/syncer): pods of every virtual cluster whose
  // provisioner shard this replica holds, copied to the host. Runs only with
  // the provisioner and the simulated control planes.
  bool syncer = true;
  // kai | hami: shared-tier fractions on the host
  tenancy::host::FractionBackend fraction_backend = tenancy::host::FractionBackend::kKai;
  int default_gpu_fraction_milli = 250;  // a shared pod's `nvidia.com/gpu: 1` without a fraction
  // Trust tiers whose virtual clusters may have NodePort and LoadBalancer
  // services on the host (tenancy::host::RenderConfig); none by default.
  std::set<std::string> external_service_tiers;
  // By trust tier, the host integrations whose keys tenants' objects may
  // carry to the host (tenancy/sync/host_keys.h); none by default.
  std::map<std::string, std::set<std::string>> integration_keys;
  // What a sleeping virtual cluster does with its reservation: keep it, or
  // release it at sleep and place it again on wake (all or nothing; a
  // shortfall keeps it waking with CapacityReady False).
  SleepReservation sleep_reservation = SleepReservation::kKeep;  // keep | release
  // The simulated virtual control planes: every virtual cluster's Kubernetes
  // API on this one HTTPS listener, at /vc/<tenant>/<vcluster>.
  std::string vcluster_addr = "127.0.0.1:0";  // deploy/dev uses 127.0.0.1:6444
  // The IP address tenants and the host's pods reach that listener at: the
  // host of the virtual clusters' endpoints (kubeconfigs), of the synced
  // pods' KUBERNETES_SERVICE_HOST, and of the host NetworkPolicy's egress
  // rule, which needs an address. Empty: vcluster_addr's host, 127.0.0.1
  // when that is a wildcard.
  std::string vcluster_advertise_address;
  // A virtual control plane without requests or watches for this long leaves
  // memory (its objects stay in PostgreSQL) until its next request.
  std::chrono::milliseconds vcluster_idle_after{10 * 60'000};
  // simulated: the above. host: a stock control plane per virtual
  // cluster on the host cluster (kube-apiserver on kine, a reduced
  // controller-manager, CoreDNS; services/hostcp), kine's database made on
  // septad's PostgreSQL server, which the host's pods reach at
  // control_plane_database_address (required then).
  ControlPlane control_plane = ControlPlane::kSimulated;  // simulated | host
  std::string control_plane_database_address;
  DatabaseSslMode control_plane_database_sslmode = DatabaseSslMode::kRequire;
  // Who signs tenants' client certificates: builtin, each virtual
  // cluster's own CA; or vault, a Vault (or OpenBao) septad configures
  // itself (services/vault/vault_pki.h), reached at vault_addr and logged
  // into with vault_auth. Vault needs control_plane simulated.
  Issuer issuer = Issuer::kBuiltin;          // builtin | vault
  std::string vault_addr;                    // "https://vault.example:8200"
  std::string vault_ca_file;                 // PEM; empty: the system trust store
  VaultAuth vault_auth = VaultAuth::kToken;  // token | approle | kubernetes
  std::string vault_token_file;
  std::string vault_role_id;  // approle
  std::string vault_secret_id_file;
  std::string vault_kubernetes_role;
  std::string vault_jwt_file;                 // kubernetes; empty: the pod's service account token
  std::string vault_auth_mount;               // empty: "approle" or "kubernetes"
  std::string vault_pki_mount = "septa-pki";  // the root CA's mount
  // Per-tenant Vault access for workloads (services/vault/
  // vault_workload_access.h): each virtual cluster's pods log in to the
  // Vault with their own service account token and get the policy rendered
  // from vault_workload_policy ({tenant}, {vcluster} replaced; empty: the
  // default, reading secret/data/tenants/<tenant>/*).
  bool vault_workload_access = true;
  std::string vault_workload_policy;
  std::chrono::milliseconds vault_workload_token_ttl{3'600'000};
  // The Vault Secrets Operator's default VaultConnection and VaultAuth in
  // each virtual cluster (services/vault/vault_secrets_operator.h), with the
  // Vault's address as its pods reach it (empty: vault_addr).
  bool vault_secrets_operator = false;
  std::string vault_secrets_operator_address;
  std::string vault_secrets_operator_namespace = "vault-secrets-operator-system";
  // GPU usage (docs/usage.md): every GPU node's dcgm-exporter is scraped
  // each usage_scrape_interval and its usage accounted; the simulated
  // cluster runs its test double of the exporter.
  bool usage = true;
  std::chrono::milliseconds usage_scrape_interval{30'000};  // the exporter's DCGM_EXPORTER_INTERVAL
  std::chrono::milliseconds usage_scrape_timeout{10'000};
  std::string usage_exporter_namespace = "gpu-operator";
  std::string usage_exporter_selector = "app=nvidia-dcgm-exporter";
  // The exporter runs with --kubernetes-virtual-gpus at PR #594 or later:
  // its GPU_UTIL and FB_USED series with a vgpu label are per pod, which
  // splits a shared GPU by what each pod used (else by reserved share).
  bool usage_exporter_per_pod_values = false;
  std::string usage_currency = "USD";  // of every GPU price and cost
  // How long all of a virtual cluster's GPUs must idle before it is a
  // hoarder, per tier (USAGE-FACTS §4: Run:ai's rule, its thresholds).
  tenancy::usage::HoardingThresholds usage_hoarding_after{};
  // By trust tier name: how long a hoarder stays flagged before it is put to
  // sleep. Opt-in: a tier not named is never slept (and none is by default).
  std::map<std::string, std::chrono::seconds> usage_hoarding_sleep_after{};
  // One-minute usage rows older than this are deleted (hours and days stay).
  std::chrono::milliseconds usage_minute_retention{35LL * 24 * 3'600'000};
  // Identity providers whose tokens septad verifies, and the rules by which
  // their tokens are exchanged for Septa tokens. Lists of mappings: in the
  // YAML file as such, in SEPTA_OIDC_ISSUERS / --oidc-issuers as JSON.
  std::vector<OidcIssuer> oidc_issuers;
  std::vector<TokenExchangeRule> token_exchange_rules;
};

// One configuration key as it appears in YAML; flags and environment
// variables are derived from it.
struct KeyInfo {
  std::string key;
  std::string help;
  // A list of mappings (YAML in the file, JSON or YAML flow text in the
  // environment and on the command line), not a scalar.
  bool structured = false;
};
const std::vector<KeyInfo>& Keys();

// Layered sources in increasing precedence. `flags` maps a key (YAML
// spelling) to its value as given on the command line.
struct Sources {
  std::string yaml_text;  // empty: no file
  std::string yaml_name;  // for messages, e.g. the file path
  std::map<std::string, std::string> env;
  std::map<std::string, std::string> flags;
};

// `home` fills the default data_dir. Validates every value.
Result<Config> Load(const Sources& sources, const std::string& home);

// http_max_connections, or when it is 0 what the process's file-descriptor
// soft limit leaves after the database pool and a reserve for everything else
// (gRPC, the simulated cluster, PostgreSQL's lifeline, files, logs): at least
// 16, at most 4096.
std::size_t EffectiveHttpMaxConnections(const Config& config, std::uint64_t fd_soft_limit);

// The simulated control planes' listener (every virtual cluster's API):
// half of what the soft limit leaves after the reserve, the database pool
// and the REST listener's share, since the syncer's clients of those APIs
// hold the other end of most connections in this process; at least 1,024.
// A watched virtual cluster takes 2-4 (its pods, services, and the objects
// its pods use).
std::size_t VirtualApiMaxConnections(const Config& config, std::uint64_t fd_soft_limit);

// The environment variable of a key: data_dir -> SEPTA_DATA_DIR.
std::string EnvName(const std::string& key);

}  // namespace septa::config
