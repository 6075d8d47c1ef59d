// Fair dispatch of the virtual-cluster listener's requests to worker
// threads, as kube-apiserver's API Priority and Fairness does within a
// priority level: each flow (a tenant) has a bounded queue and may run at
// most `flow_concurrency` requests at once; free workers take the flows in
// turn (round robin), so one flow's backlog delays another's request by at
// most the requests already running, never by the backlog. A request that
// finds its flow's queue full, or waited longer than `max_wait`, is refused
// (the caller answers 429 with Retry-After). The listener's I/O threads only
// enqueue: the work (PostgreSQL reads and writes, loading a control plane)
// runs here, so it never holds up another connection's reads and writes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"

namespace septa::vcp {

struct FairQueueOptions {
  std::size_t workers = 8;
  std::size_t flow_concurrency = 4;  // at most this many of one flow's requests run at once
  std::size_t flow_queue = 64;       // waiting requests of one flow at most
  std::chrono::milliseconds max_wait{10'000};
  const Clock* clock = nullptr;  // for max_wait; the system clock when null
};

class FairQueue {
 public:
  explicit FairQueue(FairQueueOptions options);
  ~FairQueue();  // Stop()
  FairQueue(const FairQueue&) = delete;
  FairQueue& operator=(const FairQueue&) = delete;

  // Runs `work` on a worker when `flow`'s turn comes. Calls `refuse` instead
  // (at once on this thread when the flow's queue is full, on a worker when
  // the request waited longer than max_wait, or when the queue stops).
  void Submit(const std::string& flow, std::function<void()> work, std::function<void()> refuse);
  // Refuses what waits, lets what runs finish, joins the workers. Idempotent.
  void Stop();

  // Requests of `flow` queued and running, for tests and metrics.
  std::size_t queued(const std::string& flow) const;
  std::size_t running(const std::string& flow) const;

 private:
  struct Item {
    std::function<void()> work, refuse;
    TimePoint enqueued;
  };
  struct Flow {
    std::deque<Item> waiting;
    std::size_t running = 0;
    bool ready = false;  // in ready_
  };
  void Work();
  // Puts `flow` at the back of the turn when it has work and room to run it.
  void MakeReady(const std::string& name, Flow& flow);

  const FairQueueOptions options_;
  SystemClock system_clock_;
  const Clock& clock_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::map<std::string, Flow> flows_;
  std::deque<std::string> ready_;  // flows whose turn is coming, in order
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace septa::vcp
