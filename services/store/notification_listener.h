// LISTEN on one PostgreSQL channel, on a connection of its own (not one of
// a pool's), reconnecting with backoff: the trigger that tells one replica
// what another committed. NOTIFY is delivered only if its transaction
// commits, and only to sessions listening at that moment, so every
// (re)connection calls `on_listening`: notifications sent meanwhile are lost
// and whoever listens should start over (a cache forgets, a controller
// resyncs).
//
//   NotificationListener trigger(url, "septa_vclusters",
//                                [&](const std::string& payload) { provisioner.EnqueuePayload(payload); },
//                                [&] { provisioner.Resync(); });
#pragma once

#include <functional>
#include <future>
#include <stop_token>
#include <string>
#include <thread>

namespace septa::store {

class NotificationListener {
 public:
  // Returns once the first connection listens (or has failed, or after 5 s),
  // so that what commits after construction is told. Both callbacks run on
  // the listener's thread, one at a time.
  NotificationListener(std::string database_url, std::string channel,
                       std::function<void(const std::string& payload)> on_payload, std::function<void()> on_listening);
  ~NotificationListener();  // stops within a fraction of a second
  NotificationListener(const NotificationListener&) = delete;
  NotificationListener& operator=(const NotificationListener&) = delete;

 private:
  void Run(std::stop_token stop);

  const std::string database_url_;
  const std::string channel_;
  const std::function<void(const std::string&)> on_payload_;
  const std::function<void()> on_listening_;
  std::promise<void> first_attempt_;
  std::jthread thread_;  // last: starts once everything above is built
};

}  // namespace septa::store
