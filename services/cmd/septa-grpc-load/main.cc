// septa-grpc-load: closed-loop load on septad's gRPC GetTenant (the gRPC
// twin of `wrk` on GET /v1/tenants/{name}); prints requests/s and latency
// percentiles. Used by scripts/bench/api_bench.sh.
#include <grpcpp/grpcpp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "common/percentile.h"
#include "septa/v1/tenant.grpc.pb.h"

int main(int argc, char** argv) {
  CLI::App cli{"closed-loop gRPC GetTenant load against septad"};
  std::string server = "127.0.0.1:9090", token, tenant;
  int threads = 8, channels = 2;
  double seconds = 10;
  cli.add_option("--server", server, "septad gRPC address");
  cli.add_option("--token", token, "bearer token")->required();
  cli.add_option("--tenant", tenant, "tenant to read")->required();
  cli.add_option("--threads", threads, "concurrent callers")->check(CLI::Range(1, 512));
  cli.add_option("--channels", channels, "HTTP/2 connections shared by the callers")->check(CLI::Range(1, 64));
  cli.add_option("--seconds", seconds, "duration")->check(CLI::Range(0.1, 3600.0));
  CLI11_PARSE(cli, argc, argv);

  std::vector<std::shared_ptr<grpc::Channel>> pool;
  for (int i = 0; i < channels; ++i) {
    grpc::ChannelArguments args;
    args.SetInt("grpc.channel_id", i);  // distinct args: a connection per channel
    pool.push_back(grpc::CreateCustomChannel(server, grpc::InsecureChannelCredentials(), args));
  }
  std::atomic<bool> stop{false};
  std::atomic<long> errors{0};
  std::vector<std::vector<double>> latencies(threads);
  std::vector<std::thread> workers;
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      auto stub = septa::v1::TenantService::NewStub(pool[t % channels]);
      septa::v1::GetTenantRequest req;
      req.set_name(tenant);
      while (!stop.load(std::memory_order_relaxed)) {
        grpc::ClientContext ctx;
        ctx.AddMetadata("authorization", "Bearer " + token);
        septa::v1::Tenant resp;
        const auto t0 = std::chrono::steady_clock::now();
        grpc::Status st = stub->GetTenant(&ctx, req, &resp);
        const auto t1 = std::chrono::steady_clock::now();
        if (!st.ok()) {
          if (errors.fetch_add(1) == 0) std::fprintf(stderr, "first error: %s\n", st.error_message().c_str());
          continue;
        }
        latencies[t].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& w : workers) w.join();
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  auto pct = [&](double q) { return septa::Percentile(all, q); };
  std::printf("grpc GetTenant: %zu ok, %ld errors in %.1f s: %.0f req/s, p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
              all.size(), errors.load(), elapsed, all.size() / elapsed, pct(0.50), pct(0.99), pct(1.0));
  return errors.load() == 0 ? 0 : 1;
}
