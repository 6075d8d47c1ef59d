// A pass run at once and then every `interval` on its own thread, until
// destroyed (which waits for a pass under way and cuts the wait short):
// the sweepers' and the hoarding controller's loop, written once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <stop_token>
#include <thread>

namespace septa::base {

class Periodic {
 public:
  Periodic(std::chrono::milliseconds interval, std::function<void()> pass)
      : thread_([interval, pass = std::move(pass)](std::stop_token stop) {
          std::mutex mu;
          std::condition_variable_any wake;
          while (!stop.stop_requested()) {
            pass();
            std::unique_lock lock(mu);
            wake.wait_for(lock, stop, interval, [] { return false; });  // returns early on stop
          }
        }) {}

 private:
  std::jthread thread_;  // its destructor asks to stop and joins
};

}  // namespace septa::base
