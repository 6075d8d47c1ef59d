#include "services/config/config.h"

#include <gtest/gtest.h>

#include "tests/support/hostile_documents.h"

namespace septa::config {
namespace {

TEST(Config, DefaultsWithoutSources) {
  auto c = Load({}, "/home/ada");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->data_dir, "/home/ada/.local/share/septa");
  EXPECT_EQ(c->http_addr, "127.0.0.1:8080");
  EXPECT_EQ(c->grpc_addr, "127.0.0.1:9090");
  EXPECT_TRUE(c->database_url.empty());
  EXPECT_TRUE(c->kubeconfig.empty()) << "the simulated cluster by default";
  EXPECT_EQ(c->kubesim_addr, "127.0.0.1:0");
  EXPECT_EQ(c->vcluster_addr, "127.0.0.1:0");
  EXPECT_TRUE(c->vcluster_advertise_address.empty()) << "vcluster_addr's host";
  EXPECT_EQ(c->vcluster_idle_after, std::chrono::minutes(10));
  EXPECT_EQ(c->idempotency_ttl, std::chrono::hours(24));
  EXPECT_EQ(c->db_request_timeout, std::chrono::seconds(5));
  EXPECT_EQ(c->db_ready_timeout, std::chrono::seconds(1));
  EXPECT_EQ(c->admin_token_ttl_max, std::chrono::hours(768));
  EXPECT_EQ(c->tenant_live_tokens_max, 100);
  EXPECT_EQ(c->token_retention, std::chrono::hours(720));
  EXPECT_EQ(c->scheduler, tenancy::host::Scheduler::kKai);
  EXPECT_TRUE(c->provisioner);
  EXPECT_EQ(c->mig_relayout, MigRelayout::kAuto);
  EXPECT_EQ(c->sleep_reservation, SleepReservation::kKeep);
  EXPECT_TRUE(c->syncer);
  EXPECT_EQ(c->fraction_backend, tenancy::host::FractionBackend::kKai);
  EXPECT_EQ(c->default_gpu_fraction_milli, 250);
  EXPECT_TRUE(c->external_service_tiers.empty()) << "no tier opens host ports by default";
  EXPECT_EQ(c->control_plane, ControlPlane::kSimulated);
  EXPECT_EQ(c->control_plane_database_sslmode, DatabaseSslMode::kRequire);
  EXPECT_EQ(c->log_level, LogLevel::kInfo);
  EXPECT_EQ(c->log_format, LogFormat::kText);
  EXPECT_EQ(c->issuer, Issuer::kBuiltin);
  EXPECT_EQ(c->vault_auth, VaultAuth::kToken);
  EXPECT_TRUE(c->replica_id.empty()) << "the one kept in data_dir";
}

TEST(Config, ExternalServiceTiers) {
  Sources s;
  s.yaml_text = "external_service_tiers: exclusive,dedicated,gpu-farm\n";
  auto c = Load(s, "/h");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->external_service_tiers, (std::set<std::string>{"dedicated", "exclusive", "gpu-farm"}));
}

TEST(Config, IntegrationKeysByTier) {
  Sources s;
  s.yaml_text = "integration_keys: shared=external-dns.alpha.kubernetes.io,shared=cert-manager.io,isolated=istio.io\n";
  auto c = Load(s, "/h");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->integration_keys,
            (std::map<std::string, std::set<std::string>>{
                {"shared", {"cert-manager.io", "external-dns.alpha.kubernetes.io"}}, {"isolated", {"istio.io"}}}));
  auto none = Load({}, "/h");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->integration_keys.empty()) << "no tier reaches a host integration by default";
}

TEST(Config, UsageHoardingSleepIsOptInByTrustTier) {
  Sources s;
  s.yaml_text = "usage_hoarding_sleep_after: shared=1h,gpu-farm=90m\nusage_minute_retention: 48h\n";
  auto c = Load(s, "/h");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->usage_hoarding_sleep_after,
            (std::map<std::string, std::chrono::seconds>{{"gpu-farm", std::chrono::minutes(90)},
                                                         {"shared", std::chrono::hours(1)}}));
  EXPECT_EQ(c->usage_minute_retention, std::chrono::hours(48));
  auto defaults = Load({}, "/h");
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->usage_hoarding_sleep_after.empty()) << "no tier's hoarders are slept by default";
  EXPECT_EQ(defaults->usage_minute_retention, std::chrono::hours(35 * 24));

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"usage_hoarding_sleep_after: shared\n", "is not TIER=DURATION"},
      {"usage_hoarding_sleep_after: Shared=1h\n", "\"Shared\" is not a trust tier name"},
      {"usage_hoarding_sleep_after: shared=30s\n", "\"shared=30s\" is shorter than 1m"},
      {"usage_hoarding_sleep_after: shared=1h,shared=2h\n", "trust tier \"shared\" is given twice"},
      {"usage_hoarding_sleep_after: shared=soon\n", "is not a duration"},
      {"usage_minute_retention: 47h\n", "shorter than 48h"},
  };
  for (const auto& [yaml, message] : bad) {
    Sources b;
    b.yaml_text = yaml;
    auto refused = Load(b, "/h");
    ASSERT_FALSE(refused.ok()) << yaml;
    EXPECT_NE(refused.status().message().find(message), std::string::npos) << refused.status().ToString();
  }
}

TEST(Config, VirtualClustersAdvertisedAddress) {
  for (const std::string address : {"10.0.0.7", "fd00::7"}) {
    Sources s;
    s.yaml_text = "vcluster_advertise_address: " + address + "\n";
    auto c = Load(s, "/h");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->vcluster_advertise_address, address);
  }
}

TEST(Config, ReplicaId) {
  Sources s;
  s.env = {{"SEPTA_REPLICA_ID", "node-7.zone_a:septa-0"}};
  auto c = Load(s, "/h");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->replica_id, "node-7.zone_a:septa-0");
}

TEST(Config, HostControlPlanesNeedTheDatabaseAddress) {
  Sources s;
  s.yaml_text = "control_plane: host\ncontrol_plane_database_address: pg.septa-system.svc:5432\n";
  s.flags = {{"control_plane_database_sslmode", "verify-full"}};
  auto c = Load(s, "/h");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->control_plane, ControlPlane::kHost);
  EXPECT_EQ(c->control_plane_database_address, "pg.septa-system.svc:5432");
  EXPECT_EQ(c->control_plane_database_sslmode, DatabaseSslMode::kVerifyFull);
}

TEST(Config, HostControlPlanesTakeTheVaultIssuer) {
  Sources s;
  s.yaml_text =
      "control_plane: host\ncontrol_plane_database_address: pg:5432\nissuer: vault\nvault_addr: https://vault:8200\n"
      "vault_token_file: /run/token\n";
  auto c = Load(s, "/h");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->control_plane, ControlPlane::kHost);
  EXPECT_EQ(c->issuer, Issuer::kVault);
  EXPECT_TRUE(c->vault_workload_access);
  // The operator's objects go through the syncer's access, the API server's Service.
  s.flags = {{"vault_secrets_operator", "true"}};
  c = Load(s, "/h");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->vault_secrets_operator);
}

TEST(Config, VaultIssuer) {
  auto builtin = Load({}, "/h");
  ASSERT_TRUE(builtin.ok());
  EXPECT_EQ(builtin->issuer, Issuer::kBuiltin);
  EXPECT_EQ(builtin->vault_auth, VaultAuth::kToken);
  EXPECT_EQ(builtin->vault_pki_mount, "septa-pki");
  Sources s;
  s.yaml_text =
      "issuer: vault\nvault_addr: https://vault:8200\nvault_auth: approle\nvault_role_id: r-1\n"
      "vault_secret_id_file: /run/secret-id\n";
  auto c = Load(s, "/h");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->issuer, Issuer::kVault);
  EXPECT_EQ(c->vault_addr, "https://vault:8200");
  EXPECT_EQ(c->vault_role_id, "r-1");
  EXPECT_EQ(c->vault_secret_id_file, "/run/secret-id");
  EXPECT_TRUE(c->vault_workload_access) << "the workloads' Vault access is on with the Vault issuer";
  EXPECT_EQ(c->vault_workload_token_ttl, std::chrono::hours(1));
  s.yaml_text +=
      "vault_workload_access: false\nvault_workload_token_ttl: 15m\n"
      "vault_workload_policy: |\n  path \"kv/data/{tenant}/*\" { capabilities = [\"read\"] }\n";
  c = Load(s, "/h");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->vault_workload_access);
  EXPECT_EQ(c->vault_workload_token_ttl, std::chrono::minutes(15));
  EXPECT_EQ(c->vault_workload_policy, "path \"kv/data/{tenant}/*\" { capabilities = [\"read\"] }\n");
  EXPECT_FALSE(c->vault_secrets_operator);
  EXPECT_EQ(c->vault_secrets_operator_namespace, "vault-secrets-operator-system");
}

TEST(Config, LaterSourcesWin) {
  Sources s;
  s.yaml_text = "http_addr: 0.0.0.0:8000\ngrpc_addr: 0.0.0.0:9000\nworker_threads: 3\n";
  s.yaml_name = "septa.yaml";
  s.env = {{"SEPTA_HTTP_ADDR", "127.0.0.1:8001"}, {"SEPTA_DATABASE_URL", "postgresql://x/y"}, {"PATH", "/bin"}};
  s.flags = {{"http_addr", "127.0.0.1:0"}, {"mig_relayout", "off"}};
  auto c = Load(s, "/h");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->http_addr, "127.0.0.1:0");          // flag over env over file
  EXPECT_EQ(c->grpc_addr, "0.0.0.0:9000");         // file over default
  EXPECT_EQ(c->database_url, "postgresql://x/y");  // env
  EXPECT_EQ(c->worker_threads, 3);
  EXPECT_EQ(c->mig_relayout, MigRelayout::kOff);
}

TEST(Config, DurationsAcceptUnits) {
  Sources s;
  s.flags = {{"http_read_timeout", "250ms"},
             {"shutdown_grace", "2m"},
             {"auth_cache_ttl", "0"},
             {"idempotency_ttl", "1h"},
             {"db_request_timeout", "1500ms"}};
  auto c = Load(s, "/h");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->http_read_timeout.count(), 250);
  EXPECT_EQ(c->shutdown_grace.count(), 120'000);
  EXPECT_EQ(c->auth_cache_ttl.count(), 0);
  EXPECT_EQ(c->idempotency_ttl, std::chrono::hours(1));
  EXPECT_EQ(c->db_request_timeout.count(), 1500);
}

struct BadCase {
  Sources sources;
  std::string field;
  std::string fragment;
};

TEST(Config, ErrorsNameTheKeyAndSource) {
  std::vector<BadCase> cases = {
      {{"bogus: 1\n", "f.yaml", {}, {}}, "bogus", "unknown configuration key in f.yaml"},
      {{"http_addr: nope\n", "f.yaml", {}, {}}, "http_addr (f.yaml)", "not host:port"},
      {{"", "", {{"SEPTA_GRPC_ADDR", "127.0.0.1:99999"}}, {}}, "grpc_addr (SEPTA_GRPC_ADDR)", "out of range"},
      {{"", "", {}, {{"log_level", "loud"}}}, "log_level (--log-level)", "not one of"},
      {{"", "", {}, {{"worker_threads", "x"}}}, "worker_threads (--worker-threads)", "not an integer"},
      {{"", "", {}, {{"http_idle_timeout", "5y"}}}, "http_idle_timeout (--http-idle-timeout)", "unknown unit"},
      {{"", "", {}, {{"no_such", "1"}}}, "no_such", "unknown flag --no-such"},
      {{"", "", {}, {{"idempotency_ttl", "500ms"}}}, "idempotency_ttl (--idempotency-ttl)", "shorter than 1s"},
      {{"", "", {}, {{"admin_token_ttl_max", "0"}}}, "admin_token_ttl_max (--admin-token-ttl-max)", "shorter than 1s"},
      {{"", "", {}, {{"db_request_timeout", "0"}}}, "db_request_timeout (--db-request-timeout)", "shorter than 1ms"},
      {{"db_ready_timeout: 0ms\n", "f.yaml", {}, {}}, "db_ready_timeout (f.yaml)", "shorter than 1ms"},
      {{"", "", {{"SEPTA_TENANT_LIVE_TOKENS_MAX", "0"}}, {}},
       "tenant_live_tokens_max (SEPTA_TENANT_LIVE_TOKENS_MAX)",
       "out of range"},
      {{"kubesim_addr: here\n", "f.yaml", {}, {}}, "kubesim_addr (f.yaml)", "not host:port"},
      {{"vcluster_addr: here\n", "f.yaml", {}, {}}, "vcluster_addr (f.yaml)", "not host:port"},
      {{"vcluster_advertise_address: septa.example.com\n", "f.yaml", {}, {}},
       "vcluster_advertise_address (f.yaml)",
       "not an IPv4 or IPv6 address"},
      {{"", "", {}, {{"vcluster_advertise_address", "10.0.0.7:6444"}}},
       "vcluster_advertise_address (--vcluster-advertise-address)",
       "not an IPv4 or IPv6 address"},
      {{"", "", {}, {{"vcluster_idle_after", "10ms"}}},
       "vcluster_idle_after (--vcluster-idle-after)",
       "shorter than 1s"},
      {{"scheduler: slurm\n", "f.yaml", {}, {}}, "scheduler (f.yaml)", "not one of"},
      {{"sleep_reservation: sometimes\n", "f.yaml", {}, {}}, "sleep_reservation (f.yaml)", "not one of"},
      {{"", "", {}, {{"provisioner", "yes"}}}, "provisioner (--provisioner)", "not one of"},
      {{"syncer: maybe\n", "f.yaml", {}, {}}, "syncer (f.yaml)", "not one of"},
      {{"fraction_backend: mps\n", "f.yaml", {}, {}}, "fraction_backend (f.yaml)", "not one of"},
      {{"default_gpu_fraction_milli: 1001\n", "f.yaml", {}, {}}, "default_gpu_fraction_milli (f.yaml)", "out of range"},
      {{"replica_id: a b\n", "f.yaml", {}, {}}, "replica_id (f.yaml)", "a character other than"},
      {{"external_service_tiers: exclusive,,shared\n", "f.yaml", {}, {}},
       "external_service_tiers (f.yaml)",
       "\"\" is not a trust tier name"},
      {{"", "", {}, {{"external_service_tiers", "Exclusive"}}},
       "external_service_tiers (--external-service-tiers)",
       "\"Exclusive\" is not a trust tier name"},
      {{"", "", {}, {{"replica_id", std::string(129, 'r')}}}, "replica_id (--replica-id)", "longer than 128"},
      {{"", "", {}, {{"integration_keys", "shared"}}}, "integration_keys (--integration-keys)", "is not TIER=DOMAIN"},
      {{"", "", {}, {{"integration_keys", "shared=example.com"}}},
       "integration_keys (--integration-keys)",
       "\"example.com\" is not a known integration domain"},
      {{"", "", {}, {{"integration_keys", "Shared=istio.io"}}},
       "integration_keys (--integration-keys)",
       "\"Shared\" is not a trust tier name"},
      {{"", "", {{"SEPTA_MIG_RELAYOUT", "sometimes"}}, {}}, "mig_relayout (SEPTA_MIG_RELAYOUT)", "not one of"},
      {{"", "", {}, {{"tls_cert_file", "/c.pem"}}}, "tls_key_file", "required when tls_cert_file is set"},
      {{"control_plane: k3s\n", "f.yaml", {}, {}}, "control_plane (f.yaml)", "not one of"},
      {{"control_plane: host\n", "f.yaml", {}, {}},
       "control_plane_database_address",
       "required when control_plane is host"},
      {{"", "", {{"SEPTA_CONTROL_PLANE_DATABASE_ADDRESS", "pg"}}, {}},
       "control_plane_database_address (SEPTA_CONTROL_PLANE_DATABASE_ADDRESS)",
       "not host:port"},
      {{"", "", {}, {{"control_plane_database_sslmode", "prefer"}}},
       "control_plane_database_sslmode (--control-plane-database-sslmode)",
       "not one of"},
      {{"", "", {{"SEPTA_TLS_KEY_FILE", "/k.pem"}}, {}}, "tls_cert_file", "required when tls_key_file is set"},
      {{"issuer: hsm\n", "f.yaml", {}, {}}, "issuer (f.yaml)", "not one of"},
      {{"issuer: vault\n", "f.yaml", {}, {}}, "vault_addr", "required when issuer is vault"},
      {{"issuer: vault\nvault_addr: http://v\n", "f.yaml", {}, {}}, "vault_token_file", "vault_auth is token"},
      {{"issuer: vault\nvault_addr: http://v\nvault_auth: approle\n", "f.yaml", {}, {}},
       "vault_role_id",
       "vault_auth is approle"},
      {{"issuer: vault\nvault_addr: http://v\nvault_auth: kubernetes\n", "f.yaml", {}, {}},
       "vault_kubernetes_role",
       "vault_auth is kubernetes"},
      {{"", "", {}, {{"vault_auth", "ldap"}}}, "vault_auth (--vault-auth)", "not one of"},
      {{"issuer: vault\nvault_addr: http://v\nvault_token_file: /t\nvault_workload_token_ttl: 0s\n", "f.yaml", {}, {}},
       "vault_workload_token_ttl",
       "at least 1s"},
      {{"", "", {}, {{"vault_workload_access", "yes"}}},
       "vault_workload_access (--vault-workload-access)",
       "not one of"},
      {{"issuer: vault\nvault_addr: http://v\nvault_token_file: /t\nvault_workload_access: false\n"
        "vault_secrets_operator: true\n",
        "f.yaml",
        {},
        {}},
       "vault_secrets_operator",
       "needs vault_workload_access"},
      {{"", "", {}, {{"vault_secrets_operator_namespace", "VSO_System"}}},
       "vault_secrets_operator_namespace (--vault-secrets-operator-namespace)",
       "not a namespace name"},
  };
  for (const auto& bad : cases) {
    auto c = Load(bad.sources, "/h");
    ASSERT_FALSE(c.ok()) << bad.field;
    ASSERT_EQ(c.status().violations().size(), 1u) << c.status().ToString();
    EXPECT_EQ(c.status().violations()[0].field, bad.field);
    EXPECT_NE(c.status().message().find(bad.fragment), std::string::npos) << c.status().ToString();
  }
}

TEST(Config, MalformedYamlNamesThePosition) {
  Sources s;
  s.yaml_text = "http_addr: [unclosed\n";
  s.yaml_name = "f.yaml";
  auto c = Load(s, "/h");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("f.yaml: malformed YAML at line 2"), std::string::npos) << c.status().ToString();
}

// The file is read within the document bounds (common/documents.h): an
// alias bomb is refused before it is expanded.
TEST(Config, AnAliasBombIsRefused) {
  Sources s;
  s.yaml_text = test::YamlAliasBomb(5);
  s.yaml_name = "f.yaml";
  auto c = Load(s, "/h");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("f.yaml: the document expands excessively through aliases"), std::string::npos)
      << c.status().ToString();
}

TEST(Config, HttpMaxConnectionsLeavesDescriptorsForTheRest) {
  Config c;
  c.db_pool_size = 8;
  EXPECT_EQ(EffectiveHttpMaxConnections(c, 1024), 1024u - 128 - 8);  // Debian's default soft limit
  EXPECT_EQ(EffectiveHttpMaxConnections(c, 1u << 20), 4096u);
  EXPECT_EQ(EffectiveHttpMaxConnections(c, 100), 16u);
  c.http_max_connections = 50'000;  // configured: taken as given
  EXPECT_EQ(EffectiveHttpMaxConnections(c, 1024), 50'000u);
  Sources s;
  s.flags = {{"http_max_connections", "-1"}};
  EXPECT_FALSE(Load(s, "/h").ok());
}

TEST(Config, TheVirtualApisTakeHalfOfTheDescriptorsTheRestLeaves) {
  Config c;
  c.db_pool_size = 8;
  // 524288 (systemd's hard limit, which septad raises its soft limit to): 128 reserved, 8 pooled, 4096 REST.
  EXPECT_EQ(VirtualApiMaxConnections(c, 524'288), (524'288u - 128 - 8 - 4096) / 2);
  EXPECT_EQ(VirtualApiMaxConnections(c, 20'000), (20'000u - 128 - 8 - 4096) / 2);
  // The REST listener takes what 4,096 leaves: the virtual APIs keep what they had before.
  EXPECT_EQ(VirtualApiMaxConnections(c, 4096), 1024u);
}

// Every enumerated key: each spelling parses to its value, from any source,
// and Spelling gives the spelling back.
template <typename E>
void ExpectEnumKey(const std::string& key, const std::vector<std::pair<std::string, E>>& values, E Config::*field) {
  for (const auto& [text, value] : values) {
    Sources s;
    s.flags = {{key, text}};
    auto c = Load(s, "/h");
    ASSERT_TRUE(c.ok()) << key << "=" << text << ": " << c.status().ToString();
    EXPECT_EQ((*c).*field, value) << key << "=" << text;
    EXPECT_EQ(Spelling(value), text) << key;
  }
}

TEST(Config, EnumeratedKeysParseEachValue) {
  using tenancy::host::FractionBackend;
  using tenancy::host::Scheduler;
  ExpectEnumKey<LogLevel>("log_level",
                          {{"trace", LogLevel::kTrace},
                           {"debug", LogLevel::kDebug},
                           {"info", LogLevel::kInfo},
                           {"warn", LogLevel::kWarn},
                           {"error", LogLevel::kError}},
                          &Config::log_level);
  ExpectEnumKey<LogFormat>("log_format", {{"text", LogFormat::kText}, {"json", LogFormat::kJson}}, &Config::log_format);
  ExpectEnumKey<MigRelayout>("mig_relayout", {{"auto", MigRelayout::kAuto}, {"off", MigRelayout::kOff}},
                             &Config::mig_relayout);
  ExpectEnumKey<Scheduler>("scheduler",
                           {{"kai", Scheduler::kKai}, {"kueue", Scheduler::kKueue}, {"default", Scheduler::kDefault}},
                           &Config::scheduler);
  ExpectEnumKey<FractionBackend>("fraction_backend", {{"kai", FractionBackend::kKai}, {"hami", FractionBackend::kHami}},
                                 &Config::fraction_backend);
  ExpectEnumKey<SleepReservation>("sleep_reservation",
                                  {{"keep", SleepReservation::kKeep}, {"release", SleepReservation::kRelease}},
                                  &Config::sleep_reservation);
  ExpectEnumKey<DatabaseSslMode>("control_plane_database_sslmode",
                                 {{"disable", DatabaseSslMode::kDisable},
                                  {"require", DatabaseSslMode::kRequire},
                                  {"verify-ca", DatabaseSslMode::kVerifyCa},
                                  {"verify-full", DatabaseSslMode::kVerifyFull}},
                                 &Config::control_plane_database_sslmode);
  ExpectEnumKey<VaultAuth>(
      "vault_auth",
      {{"token", VaultAuth::kToken}, {"approle", VaultAuth::kAppRole}, {"kubernetes", VaultAuth::kKubernetes}},
      &Config::vault_auth);
  // control_plane host and issuer vault need more keys: from a file.
  Sources s;
  s.yaml_text = "control_plane: simulated\nissuer: builtin\n";
  auto c = Load(s, "/h");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->control_plane, ControlPlane::kSimulated);
  EXPECT_EQ(c->issuer, Issuer::kBuiltin);
  EXPECT_EQ(Spelling(ControlPlane::kSimulated), "simulated");
  EXPECT_EQ(Spelling(ControlPlane::kHost), "host");
  EXPECT_EQ(Spelling(Issuer::kBuiltin), "builtin");
  EXPECT_EQ(Spelling(Issuer::kVault), "vault");
}

// A wrong value is refused once, at load, naming the key, the source and
// every choice: no caller falls back to a default.
TEST(Config, AWrongEnumeratedValueNamesTheKeyAndTheChoices) {
  const std::vector<std::pair<std::string, std::string>> keys = {
      {"log_level", "trace, debug, info, warn, error"},
      {"log_format", "text, json"},
      {"mig_relayout", "auto, off"},
      {"scheduler", "kai, kueue, default"},
      {"fraction_backend", "kai, hami"},
      {"sleep_reservation", "keep, release"},
      {"control_plane", "simulated, host"},
      {"control_plane_database_sslmode", "disable, require, verify-ca, verify-full"},
      {"issuer", "builtin, vault"},
      {"vault_auth", "token, approle, kubernetes"},
  };
  for (const auto& [key, choices] : keys) {
    for (const std::string wrong : {"nope", "", "JSON"}) {
      Sources s;
      s.env = {{EnvName(key), wrong}};
      auto c = Load(s, "/h");
      ASSERT_FALSE(c.ok()) << key << "=" << wrong;
      ASSERT_EQ(c.status().violations().size(), 1u) << c.status().ToString();
      EXPECT_EQ(c.status().violations()[0].field, key + " (" + EnvName(key) + ")");
      EXPECT_NE(c.status().message().find("\"" + wrong + "\" is not one of " + choices), std::string::npos)
          << c.status().ToString();
    }
  }
}

// An empty usage_exporter_selector would take every pod of the exporters'
// namespace for an exporter: refused, naming the key, from every source.
TEST(Config, AnEmptyExporterSelectorIsRefused) {
  for (const Sources& sources : {Sources{"usage_exporter_selector: \"\"\n", "f.yaml", {}, {}},
                                 Sources{"", "", {{"SEPTA_USAGE_EXPORTER_SELECTOR", " "}}, {}},
                                 Sources{"", "", {}, {{"usage_exporter_selector", ""}}}}) {
    auto c = Load(sources, "/h");
    ASSERT_FALSE(c.ok());
    ASSERT_EQ(c.status().violations().size(), 1u) << c.status().ToString();
    EXPECT_TRUE(c.status().violations()[0].field.starts_with("usage_exporter_selector")) << c.status().ToString();
    EXPECT_NE(c.status().message().find("is empty"), std::string::npos) << c.status().ToString();
  }
  auto c = Load(Sources{"", "", {}, {{"usage_exporter_selector", "app.kubernetes.io/name=dcgm-exporter"}}}, "/h");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->usage_exporter_selector, "app.kubernetes.io/name=dcgm-exporter");
}

TEST(Config, EnvNames) { EXPECT_EQ(EnvName("database_url"), "SEPTA_DATABASE_URL"); }

}  // namespace
}  // namespace septa::config
