#include "services/reconcile/shard_leases.h"

#include <spdlog/spdlog.h>

namespace septa::reconcile {

ShardLeases::ShardLeases(ShardLeasesOptions options, core::LeaseStore& store, const Clock& clock)
    : options_(std::move(options)), store_(store), clock_(clock), held_until_(std::max(1, options_.shards)) {}

ShardLeases::~ShardLeases() { Stop(); }

void ShardLeases::Start() {
  if (thread_.joinable()) return;
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void ShardLeases::Stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
  std::vector<int> held;
  {
    std::lock_guard lock(mu_);
    for (int shard = 0; shard < static_cast<int>(held_until_.size()); ++shard) {
      if (held_until_[shard] != TimePoint{}) held.push_back(shard);
      held_until_[shard] = TimePoint{};
    }
  }
  for (int shard : held) {
    if (const Status released = store_.Release(LeaseName(shard), options_.holder); !released.ok()) {
      spdlog::warn("lease {}: release failed, it will expire instead: {}", LeaseName(shard), released.ToString());
    }
  }
}

std::string ShardLeases::LeaseName(int shard) const { return options_.name + "/" + std::to_string(shard); }

bool ShardLeases::Holds(int shard) const {
  std::lock_guard lock(mu_);
  return shard >= 0 && shard < static_cast<int>(held_until_.size()) && clock_.Now() < held_until_[shard];
}

std::vector<int> ShardLeases::Held() const {
  std::vector<int> held;
  for (int shard = 0; shard < shard_count(); ++shard) {
    if (Holds(shard)) held.push_back(shard);
  }
  return held;
}

void ShardLeases::OnGained(const void* listener, std::function<void(const std::vector<int>& gained)> on_gained) {
  std::lock_guard lock(gained_mu_);
  if (!on_gained) {
    on_gained_.erase(listener);
    return;
  }
  auto& registered = on_gained_[listener] = std::move(on_gained);
  if (const std::vector<int> held = Held(); !held.empty()) registered(held);
}

std::uint64_t ShardLeases::rounds() const {
  std::lock_guard lock(mu_);
  return rounds_;
}

bool ShardLeases::AwaitRounds(std::uint64_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return round_done_.wait_for(lock, timeout, [&] { return rounds_ >= n; });
}

void ShardLeases::Run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    // The next round is due TTL/3 after this one began, however long it
    // took, or sooner when a lease another replica holds runs out: a dead
    // holder's shards are taken the moment its last renewal expires.
    const TimePoint begun = clock_.Now();
    TimePoint next = begun + std::max<std::chrono::milliseconds>(options_.ttl / 3, std::chrono::milliseconds(1));
    if (const std::vector<int> gained = Round(next); !gained.empty()) {
      std::lock_guard lock(gained_mu_);
      for (const auto& listener : on_gained_) listener.second(gained);
    }
    {
      std::lock_guard lock(mu_);
      ++rounds_;
    }
    round_done_.notify_all();
    if (!clock_.SleepUntil(std::max(next, begun + std::chrono::milliseconds(1)), stop)) return;
  }
}

std::vector<int> ShardLeases::Round(TimePoint& next) {
  std::vector<int> gained;
  for (int shard = 0; shard < static_cast<int>(held_until_.size()); ++shard) {
    const TimePoint now = clock_.Now();
    const TimePoint until = now + options_.ttl;
    const std::string name = LeaseName(shard);
    bool held;
    {
      std::lock_guard lock(mu_);
      held = now < held_until_[shard];
    }
    if (held) {
      const Result<bool> renewed = store_.Renew(name, options_.holder, now, options_.ttl);
      std::lock_guard lock(mu_);
      if (renewed.ok() && *renewed) {
        held_until_[shard] = until;
      } else {
        held_until_[shard] = TimePoint{};
        spdlog::warn("lease {}: not renewed, giving the shard up: {}", name,
                     renewed.ok() ? "another holder has it" : renewed.status().ToString());
      }
      continue;
    }
    const Result<bool> acquired = store_.TryAcquire(name, options_.holder, now, options_.ttl);
    if (!acquired.ok()) {
      spdlog::warn("lease {}: could not try to acquire: {}", name, acquired.status().ToString());
      continue;
    }
    if (!*acquired) {
      if (auto lease = store_.Get(name); lease.ok() && lease->has_value() && !(*lease)->holder.empty()) {
        next = std::min(next, (*lease)->expire_time);
      }
      continue;
    }
    std::lock_guard lock(mu_);
    held_until_[shard] = until;
    gained.push_back(shard);
  }
  return gained;
}

}  // namespace septa::reconcile
