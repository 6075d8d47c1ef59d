// septa-flood-bench: one tenant floods its virtual cluster while another
// tenant's reads are timed, on the one listener septad serves every virtual
// cluster from (hostile-tenant finding M7). Two roles, run as two processes
// so that the victim's client shares nothing with the attacker's (its TLS
// and I/O threads would otherwise wait behind the attacker's watch streams):
// `victim` lists the ConfigMaps of its `default` namespace at a steady rate,
// each over a fresh TLS connection as kubectl does, and prints p50, p95,
// p99, max and timeouts; `attacker` at once creates small ConfigMaps
// (--writers threads), big ones (--big-bytes each) and namespaces, and opens
// --watches watches of every ConfigMap from resourceVersion 0 (reopened
// when refused or ended, after a second), then prints what its requests
// were answered, by HTTP status. scripts/bench/tenant_flood_bench.sh runs
// them against septad with kubeconfigs from its credentials API.
#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/percentile.h"
#include "services/kube/client.h"
#include "services/kube/config.h"
#include "services/kube/watch.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
namespace kube = septa::kube;

double Millis(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

struct Settings {
  std::string victim, attacker;  // kubeconfig paths
  double victim_rate = 20;       // GETs per second
  int writers = 4, watches = 100, big = 20, namespaces = 1000;
  std::size_t big_bytes = 900 * 1024;  // under the API server's 1 MiB object limit
  std::chrono::milliseconds timeout{30'000};
};

std::unique_ptr<kube::Client> NewClient(const std::string& kubeconfig_path, std::chrono::milliseconds timeout) {
  auto config = kube::LoadKubeconfig(kubeconfig_path);
  if (!config.ok()) {
    std::fprintf(stderr, "%s: %s\n", kubeconfig_path.c_str(), config.status().message().c_str());
    std::exit(2);
  }
  kube::ClientOptions options;
  options.max_retries = 0;  // a refusal counts as it is
  options.request_timeout = timeout;
  auto client = kube::Client::Create(*std::move(config), options);
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n", client.status().message().c_str());
    std::exit(2);
  }
  return std::move(*client);
}

// The attacker's answers by HTTP status (0: no answer).
class Tally {
 public:
  void Add(const std::string& what, int status) {
    std::lock_guard lock(mu_);
    ++counts_[what][status];
  }
  void Print() {
    std::lock_guard lock(mu_);
    for (const auto& [what, by_status] : counts_) {
      std::printf("  attacker %-10s", what.c_str());
      for (const auto& [status, n] : by_status) std::printf(" %d: %d", status, n);
      std::printf("\n");
    }
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::map<int, int>> counts_;
};

json ConfigMap(const std::string& name, std::string value) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"data", {{"value", std::move(value)}}}};
}

int Post(kube::Client& client, const std::string& path, const json& object) {
  auto answer = client.Call({"POST", path, object.dump(), "application/json"}, false);
  return answer.ok() ? answer->status : 0;
}

// The victim's list latencies until `until`; a request that got no answer
// within the timeout counts as a timeout, any other failure as an error.
struct VictimRun {
  std::vector<double> ms;
  int timeouts = 0, errors = 0;
};

VictimRun TimeVictim(const Settings& s, Clock::time_point until) {
  VictimRun run;
  const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / s.victim_rate));
  auto next = Clock::now();
  while (Clock::now() < until) {
    auto client = NewClient(s.victim, s.timeout);  // a fresh TLS connection per request, as kubectl
    const auto t0 = Clock::now();
    auto listed = client->Call({"GET", "/api/v1/namespaces/default/configmaps"}, true);
    const double took = Millis(Clock::now() - t0);
    if (!listed.ok() && took >= static_cast<double>(s.timeout.count())) {
      ++run.timeouts;
    } else if (!listed.ok() || listed->status != 200) {
      ++run.errors;
    }
    run.ms.push_back(took);
    next += period;
    std::this_thread::sleep_until(next);
  }
  return run;
}

void PrintVictim(const char* phase, const VictimRun& run) {
  std::printf("victim %-8s GETs %zu: p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms; timeouts %d, errors %d\n",
              phase, run.ms.size(), septa::Percentile(run.ms, 0.5), septa::Percentile(run.ms, 0.95),
              septa::Percentile(run.ms, 0.99), septa::Percentile(run.ms, 1.0), run.timeouts, run.errors);
}

// Starts the attacker's threads; they run until `stop`.
void Attack(const Settings& s, std::atomic<bool>& stop, Tally& tally, std::vector<std::thread>& attackers,
            std::vector<kube::StreamCancel>& cancels) {
  static std::atomic<int> next_small{0};  // one attacker per process
  for (int w = 0; w < s.writers; ++w) {
    attackers.emplace_back([&] {
      auto client = NewClient(s.attacker, s.timeout);
      const std::string path = client->Path({"", "v1", "configmaps", true}, "default");
      while (!stop) tally.Add("configmap", Post(*client, path, ConfigMap("s" + std::to_string(next_small++), "x")));
    });
  }
  attackers.emplace_back([&] {
    auto client = NewClient(s.attacker, s.timeout);
    const std::string path = client->Path({"", "v1", "configmaps", true}, "default");
    for (int i = 0; i < s.big && !stop; ++i)
      tally.Add("big", Post(*client, path, ConfigMap("big" + std::to_string(i), std::string(s.big_bytes, 'b'))));
  });
  attackers.emplace_back([&] {
    auto client = NewClient(s.attacker, s.timeout);
    const std::string path = client->Path({"", "v1", "namespaces", false}, "");
    for (int i = 0; i < s.namespaces && !stop; ++i) {
      json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "flood-" + std::to_string(i)}}}};
      tally.Add("namespace", Post(*client, path, ns));
    }
  });
  for (int w = 0; w < s.watches; ++w) {
    attackers.emplace_back([&, w] {
      auto client = NewClient(s.attacker, s.timeout);
      const std::string target = client->Path({"", "v1", "configmaps", true}, "") + "?watch=true&resourceVersion=0";
      int status = 0;
      while (!stop) {  // reopened when it ends, as an informer would
        auto streamed = client->OpenStream(
            {"GET", target}, std::chrono::seconds(3600), [&](std::string_view) { return !stop; },
            &cancels[static_cast<std::size_t>(w)]);
        // Cancelled at the end: it was open until then (counted as 200); a
        // refusal comes back as an error (429: RESOURCE_EXHAUSTED).
        status = streamed.ok()                                                 ? streamed->status
                 : stop                                                        ? 200
                 : streamed.status().code() == septa::Code::kResourceExhausted ? 429
                                                                               : 0;
        tally.Add("watch", status);
        if (status != 200) std::this_thread::sleep_for(std::chrono::seconds(1));  // as Retry-After says
      }
    });
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"septa-flood-bench: a victim's read latency while another tenant floods its virtual cluster"};
  app.require_subcommand(1);
  Settings s;
  std::string kubeconfig, label = "flooded";
  int seconds = 30;
  CLI::App* victim = app.add_subcommand("victim", "times the victim's GETs for --seconds");
  victim->add_option("--kubeconfig", kubeconfig, "the victim's kubeconfig")->required();
  victim->add_option("--seconds", seconds, "how long");
  victim->add_option("--rate", s.victim_rate, "GETs per second");
  victim->add_option("--label", label, "the phase, in the output");
  CLI::App* attacker = app.add_subcommand("attacker", "floods for --seconds, then prints what it was answered");
  attacker->add_option("--kubeconfig", kubeconfig, "the attacker's kubeconfig")->required();
  attacker->add_option("--seconds", seconds, "how long");
  attacker->add_option("--writers", s.writers, "threads creating small ConfigMaps");
  attacker->add_option("--watches", s.watches, "watches of every ConfigMap from resourceVersion 0");
  attacker->add_option("--big", s.big, "ConfigMaps of --big-bytes");
  attacker->add_option("--big-bytes", s.big_bytes, "the size of a big ConfigMap's value");
  attacker->add_option("--namespaces", s.namespaces, "namespaces");
  CLI11_PARSE(app, argc, argv);

  if (victim->parsed()) {
    s.victim = kubeconfig;
    const VictimRun run = TimeVictim(s, Clock::now() + std::chrono::seconds(seconds));
    PrintVictim(label.c_str(), run);
    return run.timeouts > 0 ? 1 : 0;
  }
  s.attacker = kubeconfig;
  std::atomic<bool> stop{false};
  Tally tally;
  std::vector<std::thread> attackers;
  std::vector<kube::StreamCancel> cancels(static_cast<std::size_t>(s.watches));
  Attack(s, stop, tally, attackers, cancels);
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  stop = true;
  for (auto& cancel : cancels) cancel.Cancel();
  for (auto& t : attackers) t.join();
  tally.Print();
  return 0;
}
