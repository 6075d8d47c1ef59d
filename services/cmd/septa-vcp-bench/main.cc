// septa-vcp-bench: what an idle simulated virtual control plane costs. Ensures
// --count virtual clusters (each seeded and written through to PostgreSQL,
// as septad does), then reports the heap (glibc mallinfo2) and RSS growth per
// loaded idle control plane, the Ensure latency, and how long evicting and
// reloading them all takes; and what checking a client certificate adds to a
// request (verification against the CA, the revocation read).
// docs/BENCHMARKS.md has the figures and command.
#include <openssl/pem.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "common/percentile.h"
#include "services/base/process_stats.h"
#include "services/http/tls.h"
#include "services/store/migration.h"
#include "services/store/migration_runner.h"
#include "services/store/pg_virtual_object_store.h"
#include "services/vcp/simulated_control_planes.h"

namespace {

using Clock = std::chrono::steady_clock;

double Millis(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Microseconds per call of `check`, over `rounds` calls; -1 when one failed.
template <class F>
double MicrosEach(int rounds, F&& check) {
  const auto t0 = Clock::now();
  for (int i = 0; i < rounds; ++i) {
    if (!check()) return -1;
  }
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / rounds;
}

// What VirtualControlPlane does per request that presents a certificate:
// the chain verified against the virtual cluster's CA at the clock's time,
// then its serial's revocation read from the store.
int CertificateCheckCost(septa::core::VirtualObjectStore& store, int rounds) {
  const septa::core::VirtualClusterKey key{"bench", "vc-0"};
  auto plane = store.GetControlPlane(key);
  if (!plane.ok() || !plane->has_value()) return std::fprintf(stderr, "no control plane bench/vc-0\n"), 1;
  const septa::http::KeyPairPem ca{(*plane)->ca_certificate, (*plane)->ca_private_key};
  const auto now = std::chrono::system_clock::now();
  auto leaf = septa::http::IssueCertificate({"alice",
                                             {"septa:view"},
                                             {},
                                             {},
                                             now - std::chrono::hours(1),
                                             now + std::chrono::hours(1),
                                             false,
                                             {},
                                             false,
                                             true},
                                            &ca);
  auto verifier = septa::http::ClientCertificateVerifier::Create(ca.certificate);
  if (!leaf.ok() || !verifier.ok()) return std::fprintf(stderr, "cannot issue a client certificate\n"), 1;
  BIO* bio = BIO_new_mem_buf(leaf->certificate.data(), static_cast<int>(leaf->certificate.size()));
  std::vector<std::shared_ptr<x509_st>> chain{
      std::shared_ptr<x509_st>(PEM_read_bio_X509(bio, nullptr, nullptr, nullptr), X509_free)};
  BIO_free(bio);
  std::string serial;
  const double verify_us = MicrosEach(rounds, [&] {
    auto peer = verifier->Verify(chain, now);
    if (peer.ok()) serial = peer->serial;
    return peer.ok();
  });
  const double revocation_us = MicrosEach(rounds, [&] { return store.GetCredentialStatus(key, serial).ok(); });
  std::printf("client certificate check per request: verify %.1f us, revocation read %.1f us (%d rounds)\n", verify_us,
              revocation_us, rounds);
  return verify_us < 0 || revocation_us < 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"septa-vcp-bench: memory per idle simulated virtual control plane"};
  std::string database_url;
  int count = 1000;
  int rounds = 2000;
  app.add_option("--certificate-rounds", rounds, "client certificate checks to time");
  app.add_option("--database-url", database_url, "a PostgreSQL database (migrated here)")->required();
  app.add_option("--count", count, "virtual clusters to ensure");
  CLI11_PARSE(app, argc, argv);

  auto migrations = septa::store::EmbeddedMigrations();
  if (!migrations.ok()) return std::fprintf(stderr, "%s\n", migrations.status().message().c_str()), 1;
  if (auto applied = septa::store::MigrationRunner(*migrations).Apply(database_url); !applied.ok())
    return std::fprintf(stderr, "%s\n", applied.status().message().c_str()), 1;
  septa::store::PgVirtualObjectStore store({.database_url = database_url, .pool_size = 2});
  septa::vcp::SimulatedControlPlanes planes(
      store, {.tick_interval = std::chrono::milliseconds(0), .idle_after = std::chrono::milliseconds(1)});
  if (auto st = planes.Start(); !st.ok()) return std::fprintf(stderr, "%s\n", st.message().c_str()), 1;

  const std::size_t heap_before = septa::base::HeapInUse(), rss_before = septa::base::ResidentBytes();
  std::vector<double> ensure_ms;
  const auto started = Clock::now();
  for (int i = 0; i < count; ++i) {
    const auto t0 = Clock::now();
    auto state = planes.Ensure("bench", "vc-" + std::to_string(i));
    if (!state.ok() || !state->serving) return std::fprintf(stderr, "%s\n", state.status().message().c_str()), 1;
    ensure_ms.push_back(Millis(Clock::now() - t0));
  }
  const double ensure_total = Millis(Clock::now() - started);
  const std::size_t heap_loaded = septa::base::HeapInUse(), rss_loaded = septa::base::ResidentBytes();

  // A tick runs every controller once, then evicts them all (idle after
  // 1 ms); then they are loaded again from PostgreSQL.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  planes.Tick();
  const std::size_t loaded_after_evict = planes.loaded_count();
  const std::size_t heap_evicted = septa::base::HeapInUse();
  const auto reload_started = Clock::now();
  for (int i = 0; i < count; ++i) {
    if (!planes.Ensure("bench", "vc-" + std::to_string(i)).ok()) return 1;
  }
  const double reload_total = Millis(Clock::now() - reload_started);

  std::printf("virtual clusters: %d\n", count);
  std::printf("ensure (new, seeded, written through): total %.0f ms, p50 %.2f ms, p99 %.2f ms\n", ensure_total,
              septa::Percentile(ensure_ms, 0.5), septa::Percentile(ensure_ms, 0.99));
  std::printf("heap per loaded idle control plane: %.1f KiB\n",
              static_cast<double>(heap_loaded - heap_before) / count / 1024);
  std::printf("RSS per loaded idle control plane: %.1f KiB\n",
              static_cast<double>(rss_loaded - rss_before) / count / 1024);
  std::printf("after eviction: %zu loaded, heap %.1f KiB above the start\n", loaded_after_evict,
              (static_cast<double>(heap_evicted) - static_cast<double>(heap_before)) / 1024);
  std::printf("reload of all from PostgreSQL: total %.0f ms, %.2f ms each\n", reload_total, reload_total / count);
  const int certificate_check = CertificateCheckCost(store, rounds);
  for (int i = 0; i < count; ++i) (void)planes.Remove("bench", "vc-" + std::to_string(i));
  return certificate_check;
}
