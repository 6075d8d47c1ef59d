// septa-issuer-bench: how fast the built-in CA issues client certificates.
// Stores one virtual cluster's CA through the sealed store (its key wrapped
// under a fresh KEK, as septad does) on a PostgreSQL database, then issues
// --count certificates from --threads threads; each issuance reads the CA
// row, unwraps the key, makes a P-256 key and signs. Reports latency
// percentiles and the rate. docs/BENCHMARKS.md has the figures and command.
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

namespace {

using Steady = std::chrono::steady_clock;
using namespace std::chrono_literals;

double Millis(Steady::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"septa-issuer-bench: client certificates from the built-in CA"};
  std::string database_url;
  int count = 2000;
  int threads = 2;
  app.add_option("--database-url", database_url, "a PostgreSQL database (migrated here)")->required();
  app.add_option("--count", count, "certificates to issue");
  app.add_option("--threads", threads, "issuing threads");
  CLI11_PARSE(app, argc, argv);

  auto migrations = septa::store::EmbeddedMigrations();
  if (!migrations.ok()) return std::fprintf(stderr, "%s\n", migrations.status().message().c_str()), 1;
  if (auto applied = septa::store::MigrationRunner(*migrations).Apply(database_url); !applied.ok())
    return std::fprintf(stderr, "%s\n", applied.status().message().c_str()), 1;
  septa::store::PgVirtualObjectStore raw({.database_url = database_url, .pool_size = threads});
  septa::base::SecureRandom random;
  std::string secret(32, '\0');
  if (!random.Fill(std::span(reinterpret_cast<std::uint8_t*>(secret.data()), secret.size())).ok()) return 1;
  septa::vault::KeyRing keys(*septa::vault::KekFromSecret(secret), std::nullopt);
  septa::vault::SealedVirtualObjectStore sealed(raw, keys, random);
  const auto now = std::chrono::system_clock::now();
  auto ca = septa::http::IssueCertificate({"bench-ca", {}, {}, {}, now - 1h, now + 24h, true}, nullptr);
  if (!ca.ok() || !sealed.CreateControlPlane({"bench", "issuer"}, {ca->certificate, ca->private_key, 0}).ok())
    return std::fprintf(stderr, "cannot store the CA\n"), 1;

  septa::SystemClock clock;
  septa::vault::BuiltinCaIssuer issuer(sealed, clock, random);
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
