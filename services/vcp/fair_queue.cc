#include "services/vcp/fair_queue.h"

namespace septa::vcp {

FairQueue::FairQueue(FairQueueOptions options)
    : options_(options), clock_(options_.clock ? *options_.clock : system_clock_) {
  workers_.reserve(options_.workers);
  for (std::size_t i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { Work(); });
}

FairQueue::~FairQueue() { Stop(); }

void FairQueue::Stop() {
  std::vector<Item> refused;
  {
    std::lock_guard lock(mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
    for (auto& [name, flow] : flows_) {
      for (Item& item : flow.waiting) refused.push_back(std::move(item));
      flow.waiting.clear();
    }
    ready_.clear();
  }
  wake_.notify_all();
  for (Item& item : refused) item.refuse();
  for (auto& worker : workers_) worker.join();
  std::lock_guard lock(mu_);
  workers_.clear();
}

void FairQueue::Submit(const std::string& flow_name, std::function<void()> work, std::function<void()> refuse) {
  {
    std::lock_guard lock(mu_);
    Flow& flow = flows_[flow_name];
    if (!stopping_ && flow.waiting.size() < options_.flow_queue) {
      flow.waiting.push_back({std::move(work), std::move(refuse), clock_.Now()});
      MakeReady(flow_name, flow);
      wake_.notify_one();
      return;
    }
    if (flow.waiting.empty() && flow.running == 0) flows_.erase(flow_name);
  }
  refuse();
}

void FairQueue::MakeReady(const std::string& name, Flow& flow) {
  if (flow.ready || flow.waiting.empty() || flow.running >= options_.flow_concurrency) return;
  flow.ready = true;
  ready_.push_back(name);
}

void FairQueue::Work() {
  std::unique_lock lock(mu_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !ready_.empty(); });
    if (ready_.empty()) return;  // stopping, nothing left to start
    const std::string name = std::move(ready_.front());
    ready_.pop_front();
    Flow& flow = flows_.at(name);
    flow.ready = false;
    Item item = std::move(flow.waiting.front());
    flow.waiting.pop_front();
    ++flow.running;
    MakeReady(name, flow);  // its next request waits for the next turn
    if (!ready_.empty()) wake_.notify_one();
    lock.unlock();
    if (clock_.Now() - item.enqueued > options_.max_wait) {
      item.refuse();
    } else {
      item.work();
    }
    item = {};  // what the work holds (an exchange) is released outside the lock
    lock.lock();
    Flow& done = flows_.at(name);
    --done.running;
    MakeReady(name, done);
    if (done.ready) wake_.notify_one();
    if (done.waiting.empty() && done.running == 0) flows_.erase(name);
  }
}

std::size_t FairQueue::queued(const std::string& flow) const {
  std::lock_guard lock(mu_);
  auto it = flows_.find(flow);
  return it == flows_.end() ? 0 : it->second.waiting.size();
}

std::size_t FairQueue::running(const std::string& flow) const {
  std::lock_guard lock(mu_);
  auto it = flows_.find(flow);
  return it == flows_.end() ? 0 : it->second.running;
}

}  // namespace septa::vcp
