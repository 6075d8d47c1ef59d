// Which shards of a controller's keys this replica may act on. Every
// TTL/3 of the injected clock a background thread renews the leases it
// holds (a shard whose renewal fails or is refused is given up at once) and
// tries to take the shards nobody holds or whose lease expired; a lease
// another replica holds is tried again the moment it expires, so that when
// a replica dies another takes its shards over within the TTL. Lease names
// are "<name>/<shard>"; every replica must use the same name and shard count.
//
//   ShardLeases shards({.name = "inventory", .holder = replica_id, .shards = 8}, lease_store, clock);
//   shards.Start();                    // Controller calls OnGained itself
//
// Several consumers may share one ShardLeases (the syncer acts on the
// provisioner's shards): each registers its own OnGained listener.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "services/core/lease_store.h"

namespace septa::reconcile {

struct ShardLeasesOptions {
  std::string name;    // the controller's: lease names are "<name>/<shard>"
  std::string holder;  // this replica, unique among replicas (e.g. host name + pid)
  int shards = 1;
  std::chrono::milliseconds ttl{15'000};
};

class ShardLeases {
 public:
  ShardLeases(ShardLeasesOptions options, core::LeaseStore& store, const Clock& clock);
  ~ShardLeases();  // Stop
  ShardLeases(const ShardLeases&) = delete;
  ShardLeases& operator=(const ShardLeases&) = delete;

  // The first round runs at once, then one every TTL/3, and one when a
  // lease held by another replica expires.
  void Start();
  // Stops renewing and releases the held leases, so another replica takes
  // over without waiting for them to expire.
  void Stop();

  int shard_count() const { return static_cast<int>(held_until_.size()); }  // options' shards, at least 1
  // This replica holds `shard`'s lease, and by its own clock it has not
  // expired (a replica cut off from the database stops acting by itself).
  bool Holds(int shard) const;
  std::vector<int> Held() const;

  // `on_gained` is called with the shards taken in each round that took
  // some, and at once with those held already. One listener per `listener`
  // (its owner, e.g. `this`); nullptr removes that owner's: no more calls,
  // and the call returns after a running one ended.
  void OnGained(const void* listener, std::function<void(const std::vector<int>& gained)> on_gained);

  // Rounds completed so far; AwaitRounds waits (at most `timeout`) until at
  // least `n` did, for start-up (and tests) to know leases were tried.
  std::uint64_t rounds() const;
  bool AwaitRounds(std::uint64_t n, std::chrono::milliseconds timeout) const;

 private:
  void Run(std::stop_token stop);
  // Returns the shards gained; lowers `next` to the expiry of a lease another replica holds.
  std::vector<int> Round(TimePoint& next);
  std::string LeaseName(int shard) const;

  const ShardLeasesOptions options_;
  core::LeaseStore& store_;
  const Clock& clock_;

  mutable std::mutex mu_;
  mutable std::condition_variable round_done_;
  std::vector<TimePoint> held_until_;  // per shard, sized once; TimePoint{} when not held
  std::uint64_t rounds_ = 0;

  std::mutex gained_mu_;  // held while listeners run; never taken under mu_
  std::map<const void*, std::function<void(const std::vector<int>&)>> on_gained_;

  std::jthread thread_;
};

}  // namespace septa::reconcile
