// PostgreSQL NOTIFY as a controller's trigger, end to end on the test run's
// PostgreSQL: a payload enqueues its key; a lost connection is re-opened and
// the controller resyncs, since notifications sent meanwhile are lost.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <prometheus/registry.h>
#include <atomic>
#include <pqxx/pqxx>

#include "services/reconcile/controller.h"
#include "services/store/notification_listener.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_database.h"
#include "tests/unit/services/reconcile/recording_reconciler.h"

namespace septa::reconcile {
namespace {

using namespace std::chrono_literals;

constexpr char kChannel[] = "septa_test_keys";

TEST(reconcileNotifyTrigger, APayloadEnqueuesItsKeyAndAReconnectResyncs) {
  auto database = test::TestDatabase::Create();
  ASSERT_TRUE(database.ok()) << database.status().ToString();
  FakeClock clock;
  prometheus::Registry registry;
  testing::RecordingReconciler reconciler;
  std::atomic<int> lists{0};
  Controller<std::string> controller({.name = "vclusters",
                                      .list_keys = [&]() -> Result<std::vector<std::string>> {
                                        ++lists;
                                        return std::vector<std::string>{"listed"};
                                      }},
                                     reconciler, clock, registry);
  controller.Start();
  ASSERT_TRUE(controller.AwaitIdle(10s));
  const int lists_before_listening = lists.load();
  std::atomic<int> listening{0};
  store::NotificationListener listener((*database)->url(), kChannel,
                                       [&](const std::string& key) { controller.Enqueue(key); },
                                       [&] {
                                         ++listening;
                                         controller.Resync();
                                       });
  EXPECT_EQ(listening.load(), 1) << "the constructor returns once it listens";

  pqxx::connection notifier((*database)->url());
  auto notify = [&](const std::string& payload) {
    pqxx::nontransaction tx(notifier);
    tx.exec_params("SELECT pg_notify($1, $2)", kChannel, payload);
  };
  notify("acme/vc-1");
  ASSERT_TRUE(reconciler.AwaitCalls(
      [](const auto& calls) { return std::find(calls.begin(), calls.end(), "acme/vc-1") != calls.end(); }));
  {
    pqxx::work tx(notifier);
    tx.exec_params("SELECT pg_notify($1, $2)", kChannel, "rolled-back");
  }  // aborted: never delivered

  // Cut the listener's session, as a database restart or a network cut would.
  ASSERT_TRUE(controller.AwaitIdle(10s));
  const int listed_before = reconciler.CallsOf("listed");
  {
    pqxx::nontransaction tx(notifier);
    const pqxx::result cut = tx.exec(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'");
    ASSERT_EQ(cut.size(), 1u);
  }
  ASSERT_TRUE(reconciler.AwaitCalls([&](const auto& calls) {
    return std::count(calls.begin(), calls.end(), "listed") > listed_before;
  })) << "a reconnect resyncs";
  EXPECT_EQ(listening.load(), 2);
  EXPECT_GT(lists.load(), lists_before_listening);

  notify("acme/vc-2");  // heard on the new connection
  ASSERT_TRUE(reconciler.AwaitCalls(
      [](const auto& calls) { return std::find(calls.begin(), calls.end(), "acme/vc-2") != calls.end(); }));
  ASSERT_TRUE(controller.AwaitIdle(10s));
  EXPECT_EQ(reconciler.CallsOf("rolled-back"), 0);
  controller.Stop();
}

}  // namespace
}  // namespace septa::reconcile
