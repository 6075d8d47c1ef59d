// The usage scraper's reads (reconcile/dcgm_scraper.h) through real
// sockets: kubesim's dcgm-exporters found through the cluster's API as on a
// real host, and hostile exporters — a body past the byte bound, one that
// trickles in to hold the scraper, an error status, malformed text, invalid
// UTF-8, too many series, nothing listening — each refused with its reason
// and nothing kept, while the next good read works.
#include "services/reconcile/dcgm_scraper.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "services/http/server.h"
#include "services/kube/config.h"
#include "services/kube/resources.h"
#include "services/kubesim/kubesim.h"
#include "services/kubesim/nodesim.h"
#include "tests/support/dcgm_test_inventory.h"
#include "tests/support/fake_clock.h"
#include "tests/support/seeded_random.h"

namespace septa::reconcile {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using tenancy::usage::DcgmSignal;

class DcgmScraperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kubesim::KubeSimOptions options;
    options.clock = &clock_;
    options.random = &random_;
    options.tick_interval = 0ms;
    options.nodes.pod_start_delay = 1s;
    options.inventory = *kubesim::ParseInventory(test::kDcgmTestInventory, "test");
    options.dcgm = kubesim::DcgmSimOptions{.seed = 7};
    sim_ = std::make_unique<kubesim::KubeSim>(options);
    ASSERT_TRUE(sim_->Start().ok());
    client_ = std::move(*kube::Client::Create(*kube::ParseKubeconfig(*sim_->AdminKubeconfig())));
    hostile_ = std::make_unique<http::Server>(
        http::ServerOptions{}, [this](http::Request&&, auto exchange) { behaviour_(std::move(exchange)); });
    ASSERT_TRUE(hostile_->Start().ok());
  }

  void TearDown() override {
    stop_ = true;
    std::thread drip;
    {
      std::lock_guard lock(mu_);
      drip = std::move(drip_);
    }
    if (drip.joinable()) drip.join();
    hostile_->Shutdown(0ms);
  }

  void Behave(std::function<void(std::shared_ptr<http::Exchange>)> behaviour) {
    std::lock_guard lock(mu_);
    behaviour_ = std::move(behaviour);
  }

  // The hostile exporter's base URL.
  std::string Hostile() const { return "http://127.0.0.1:" + std::to_string(hostile_->port()); }

  static http::Response Text(http::HttpStatus status, std::string body) {
    http::Response response{status, 11};
    response.set(boost::beast::http::field::content_type, "text/plain; version=0.0.4");
    response.body() = std::move(body);
    return response;
  }

  void Serve(std::string body, http::HttpStatus status = http::HttpStatus::ok) {
    Behave([status, body](std::shared_ptr<http::Exchange> exchange) { exchange->Reply(Text(status, body)); });
  }

  FakeClock clock_;
  SeededRandom random_{42};
  std::unique_ptr<kubesim::KubeSim> sim_;
  std::unique_ptr<kube::Client> client_;
  std::mutex mu_;
  std::function<void(std::shared_ptr<http::Exchange>)> behaviour_;  // guarded by mu_
  std::thread drip_;                                                // guarded by mu_
  std::unique_ptr<http::Server> hostile_;
  std::atomic<bool> stop_{false};
};

TEST_F(DcgmScraperTest, FindsKubesimsExportersThroughTheApiAndReadsTheirPods) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "busy"}, {"annotations", {{"run.ai/simulated-gpu-utilization", "50"}}}}},
              {"spec",
               {{"nodeSelector", {{"kubernetes.io/hostname", "a100-0"}}},
                {"containers",
                 {{{"name", "main"}, {"image", "cuda"}, {"resources", {{"limits", {{"nvidia.com/gpu", 1}}}}}}}}}}};
  ASSERT_TRUE(client_->Create(kube::kPods, "default", pod).ok());
  sim_->Tick();
  clock_.Advance(1s);
  sim_->Tick();

  DcgmScraper scraper({}, *client_, clock_);
  const DcgmScrapeResult read = scraper.Scrape("a100-0");
  ASSERT_TRUE(read.scrape.has_value()) << read.error.ToString();
  EXPECT_GT(read.bytes, 0u);
  std::vector<double> busy;
  for (const auto& sample : read.scrape->samples) {
    if (sample.signal == DcgmSignal::kGrEngineActive) busy.push_back(sample.value);
  }
  std::sort(busy.begin(), busy.end());
  EXPECT_EQ(busy, (std::vector<double>{0, 0.5})) << "one GPU runs the pod at 50 %, the other nothing";

  const DcgmScrapeResult none = scraper.Scrape("cpu-0");
  EXPECT_EQ(none.failure, ScrapeFailure::kNoExporter);
  EXPECT_NE(none.error.message().find("cpu-0"), std::string::npos) << none.error.ToString();
}

TEST_F(DcgmScraperTest, HostileExportersAreRefusedWithTheirReasonAndTheNextGoodReadWorks) {
  DcgmScraperOptions options;
  options.limits.max_bytes = 1 << 20;
  options.limits.max_series = 100;
  DcgmScraper scraper(options, *client_, clock_);
  const auto failure = [&] { return scraper.ScrapeAt("a100-0", Hostile()).failure; };

  // A body past the byte bound, streamed: read no further than the bound.
  Behave([](std::shared_ptr<http::Exchange> exchange) {
    exchange->StartStream(Text(http::HttpStatus::ok, ""));
    for (int i = 0; i < 64 && exchange->WriteChunk(std::string(64 << 10, '#')); ++i) {
    }
    exchange->EndStream();
  });
  const DcgmScrapeResult large = scraper.ScrapeAt("a100-0", Hostile());
  EXPECT_EQ(large.failure, ScrapeFailure::kTooLarge) << large.error.ToString();
  EXPECT_LE(large.bytes, options.limits.max_bytes);

  Serve("internal error", http::HttpStatus::internal_server_error);
  EXPECT_EQ(failure(), ScrapeFailure::kHttpStatus);
  Serve("DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"GPU-1\" 0.5\n");
  EXPECT_EQ(failure(), ScrapeFailure::kMalformed);
  Serve("DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"GPU-\xff\"} 0.5\n");
  EXPECT_EQ(failure(), ScrapeFailure::kMalformed) << "invalid UTF-8";
  std::string many;
  for (int i = 0; i < 1000; ++i) many += "DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"GPU-" + std::to_string(i) + "\"} 0\n";
  Serve(many);
  EXPECT_EQ(failure(), ScrapeFailure::kTooLarge) << "more series than the bound";
  EXPECT_EQ(scraper.ScrapeAt("a100-0", "http://127.0.0.1:1").failure, ScrapeFailure::kUnreachable);

  Serve("DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",UUID=\"GPU-1\",Hostname=\"a100-0\"} 0.25\n");
  const DcgmScrapeResult good = scraper.ScrapeAt("a100-0", Hostile());
  ASSERT_TRUE(good.scrape.has_value()) << good.error.ToString();
  ASSERT_EQ(good.scrape->samples.size(), 1u);
  EXPECT_EQ(good.scrape->samples[0].value, 0.25);
}

TEST_F(DcgmScraperTest, AnExporterThatTricklesItsBodyIsCutAtTheTimeout) {
  SystemClock wall;
  DcgmScraper scraper({.timeout = 300ms}, *client_, wall);
  Behave([this](std::shared_ptr<http::Exchange> exchange) {
    exchange->StartStream(Text(http::HttpStatus::ok, ""));
    // One comment line every 50 ms: never idle long enough for the idle timeout alone.
    std::lock_guard lock(mu_);
    drip_ = std::thread([this, exchange] {
      while (!stop_ && exchange->WriteChunk("# HELP x y\n")) std::this_thread::sleep_for(50ms);
    });
  });
  const auto begun = std::chrono::steady_clock::now();
  const DcgmScrapeResult slow = scraper.ScrapeAt("a100-0", Hostile());
  EXPECT_EQ(slow.failure, ScrapeFailure::kTimeout) << slow.error.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - begun, 2s) << "the whole read is bounded, not each piece";
}

}  // namespace
}  // namespace septa::reconcile
