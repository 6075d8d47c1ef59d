// septa-issuer-bench: how fast an issuer makes client certificates.
// --issuer builtin: stores one virtual cluster's CA through the sealed store
// (its key wrapped under a fresh KEK, as septad does) on a PostgreSQL
// database; each issuance reads the CA row, unwraps the key, makes a P-256
// key and signs. --issuer vault: starts septa-vaultsim in this process (HTTP
// on loopback), configures it as septad's ensure step does
// (vault::VaultPki) and issues through vault::VaultPkiIssuer, each issuance
// one `POST <mount>/issue/<role>` over a pooled keep-alive connection.
// Then --count certificates from --threads threads. Reports latency
// percentiles and the rate. docs/BENCHMARKS.md has the figures and command.
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "common/percentile.h"
#include "services/base/secure_random.h"
#include "services/http/tls.h"
#include "services/store/migration.h"
#include "services/store/migration_runner.h"
#include "services/store/pg_virtual_object_store.h"
#include "services/vault/builtin_ca_issuer.h"
#include "services/vault/sealed_object_store.h"
#include "services/vault/vault_pki_issuer.h"
#include "services/vaultsim/vaultsim.h"
#include "tenancy/host/names.h"

namespace {

using Steady = std::chrono::steady_clock;
using namespace std::chrono_literals;

double Millis(Steady::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Issues `count` certificates from `threads` threads; 0 when none failed.
int Run(septa::vault::Issuer& issuer, int count, int threads) {
  std::vector<std::vector<double>> latencies(threads);
  std::atomic<int> next{0}, failures{0};
  const auto start = Steady::now();
  {
    std::vector<std::jthread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        while (next.fetch_add(1) < count) {
          const auto begin = Steady::now();
          auto issued = issuer.IssueClientCertificate({"bench", "issuer", "alice", {"septa:view"}, "view", 1h, 24h});
          latencies[t].push_back(Millis(Steady::now() - begin));
          if (!issued.ok()) ++failures;
        }
      });
    }
  }
  const double seconds = Millis(Steady::now() - start) / 1000;
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  auto pct = [&](double q) { return septa::Percentile(all, q); };
  std::printf("issued %zu certificates (%d failed) from %d threads in %.2f s: %.0f/s\n", all.size(), failures.load(),
              threads, seconds, all.size() / seconds);
  std::printf("latency ms: p50 %.2f  p90 %.2f  p99 %.2f  max %.2f\n", pct(0.5), pct(0.9), pct(0.99), pct(1.0));
  return failures.load() == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"septa-issuer-bench: client certificates from the built-in CA or a Vault"};
  std::string database_url;
  std::string kind = "builtin";
  int count = 2000;
  int threads = 2;
  app.add_option("--issuer", kind, "builtin or vault (septa-vaultsim in this process)")
      ->check(CLI::IsMember({"builtin", "vault"}));
  app.add_option("--database-url", database_url, "with --issuer builtin: a PostgreSQL database (migrated here)");
  app.add_option("--count", count, "certificates to issue");
  app.add_option("--threads", threads, "issuing threads");
  CLI11_PARSE(app, argc, argv);
  septa::SystemClock clock;
  septa::base::SecureRandom random;
  if (kind == "vault") {
    septa::vaultsim::VaultSimOptions sim_options;
    sim_options.io_threads = static_cast<std::size_t>(std::max(1, threads));
    septa::vaultsim::VaultSim sim(sim_options);
    if (!sim.Start().ok()) return std::fprintf(stderr, "cannot start septa-vaultsim\n"), 1;
    const std::string token_file = "/tmp/septa-issuer-bench-" + std::to_string(::getpid()) + ".token";
    if (std::FILE* f = std::fopen(token_file.c_str(), "w")) {
      std::fputs(sim.root_token().c_str(), f);
      std::fclose(f);
    }
    septa::vault::VaultClientOptions client_options;
    client_options.address = sim.address();
    client_options.token_file = token_file;
    auto client = septa::vault::VaultClient::Create(std::move(client_options), clock, random);
    if (!client.ok()) return std::fprintf(stderr, "%s\n", client.status().message().c_str()), 1;
    // One virtual cluster, named as a new one would be (no store here).
    septa::vault::VaultPki pki(**client, {},
                               [](const septa::core::VirtualClusterKey& key) -> septa::Result<std::string> {
                                 return septa::tenancy::host::HostNamespaceName(key.tenant, key.vcluster);
                               });
    auto ensured = pki.EnsureVirtualClusterPki("bench", "issuer", 24h);
    std::remove(token_file.c_str());
    if (!ensured.ok()) return std::fprintf(stderr, "%s\n", ensured.status().message().c_str()), 1;
    septa::vault::VaultPkiIssuer issuer(pki);
    return Run(issuer, count, threads);
  }
  if (database_url.empty()) return std::fprintf(stderr, "--database-url is required with --issuer builtin\n"), 1;

  auto migrations = septa::store::EmbeddedMigrations();
  if (!migrations.ok()) return std::fprintf(stderr, "%s\n", migrations.status().message().c_str()), 1;
  if (auto applied = septa::store::MigrationRunner(*migrations).Apply(database_url); !applied.ok())
    return std::fprintf(stderr, "%s\n", applied.status().message().c_str()), 1;
  septa::store::PgVirtualObjectStore raw({.database_url = database_url, .pool_size = threads});
  std::string secret(32, '\0');
  if (!random.Fill(std::span(reinterpret_cast<std::uint8_t*>(secret.data()), secret.size())).ok()) return 1;
  septa::vault::KeyRing keys(*septa::vault::KekFromSecret(secret), std::nullopt);
  septa::vault::SealedVirtualObjectStore sealed(raw, keys, random);
  const auto now = std::chrono::system_clock::now();
  auto ca = septa::http::IssueCertificate({"bench-ca", {}, {}, {}, now - 1h, now + 24h, true}, nullptr);
  if (!ca.ok() || !sealed.CreateControlPlane({"bench", "issuer"}, {ca->certificate, ca->private_key, 0}).ok())
    return std::fprintf(stderr, "cannot store the CA\n"), 1;

  septa::vault::BuiltinCaIssuer issuer(sealed, clock, random);
  return Run(issuer, count, threads);
}
