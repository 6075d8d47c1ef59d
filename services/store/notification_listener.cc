#include "services/store/notification_listener.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <pqxx/pqxx>

namespace septa::store {

namespace {

class Receiver final : public pqxx::notification_receiver {
 public:
  Receiver(pqxx::connection_base& c, const std::string& channel,
           const std::function<void(const std::string&)>& on_payload)
      : pqxx::notification_receiver(c, channel), on_payload_(on_payload) {}
  void operator()(const std::string& payload, int) override { on_payload_(payload); }

 private:
  const std::function<void(const std::string&)>& on_payload_;
};

// Waits `d` unless a stop is requested first.
void Pause(std::chrono::milliseconds d, std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any never;
  std::unique_lock lock(mu);
  never.wait_for(lock, stop, d, [] { return false; });
}

}  // namespace

NotificationListener::NotificationListener(std::string database_url, std::string channel,
                                           std::function<void(const std::string& payload)> on_payload,
                                           std::function<void()> on_listening)
    : database_url_(std::move(database_url)),
      channel_(std::move(channel)),
      on_payload_(std::move(on_payload)),
      on_listening_(std::move(on_listening)),
      thread_([this](std::stop_token stop) { Run(stop); }) {
  first_attempt_.get_future().wait_for(std::chrono::seconds(5));
}

NotificationListener::~NotificationListener() {
  thread_.request_stop();
  thread_.join();
}

void NotificationListener::Run(std::stop_token stop) {
  std::chrono::milliseconds backoff{100};
  bool first = true;
  auto attempted = [&] {
    if (first) first_attempt_.set_value();
    first = false;
  };
  while (!stop.stop_requested()) {
    try {
      pqxx::connection connection(database_url_);
      Receiver receiver(connection, channel_, on_payload_);
      // The receiver has sent LISTEN; whatever was sent before is lost.
      if (on_listening_) on_listening_();
      attempted();
      backoff = std::chrono::milliseconds(100);
      // A short wait so that stopping never takes long.
      while (!stop.stop_requested()) connection.await_notification(0, 200'000);
    } catch (const std::exception& e) {
      attempted();
      if (stop.stop_requested()) return;
      spdlog::warn("listener on {}: {}; reconnecting in {} ms", channel_, e.what(), backoff.count());
      Pause(backoff, stop);
      backoff = std::min<std::chrono::milliseconds>(backoff * 2, std::chrono::seconds(5));
    }
  }
}

}  // namespace septa::store
