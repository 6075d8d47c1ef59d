// At most `max_per_key` holders per key at a time, refused rather than
// queued (a refused request costs nothing and blocks no worker thread):
// what bounds a tenant to one validate_only check in flight (the checks of
// all tenants take turns on one ledger, so one tenant that checks without
// pause takes at most its turn from the others) and to a few usage reports.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace septa::core {

class PerKeyLimit {
 public:
  explicit PerKeyLimit(int max_per_key = 1) : max_per_key_(max_per_key) {}

  // Gives the slot back when it goes.
  class Held {
   public:
    Held(PerKeyLimit& owner, std::string key) : owner_(&owner), key_(std::move(key)) {}
    Held(Held&& other) noexcept : owner_(std::exchange(other.owner_, nullptr)), key_(std::move(other.key_)) {}
    Held& operator=(Held&&) = delete;
    ~Held() {
      if (owner_ == nullptr) return;
      std::lock_guard lock(owner_->mu_);
      if (--owner_->held_[key_] == 0) owner_->held_.erase(key_);
    }

   private:
    PerKeyLimit* owner_;
    std::string key_;
  };

  // nullopt while `max_per_key` others hold `key`.
  std::optional<Held> TryHold(const std::string& key) {
    std::lock_guard lock(mu_);
    int& holders = held_[key];
    if (holders >= max_per_key_) return std::nullopt;
    ++holders;
    return std::optional<Held>(std::in_place, *this, key);
  }

  int max_per_key() const { return max_per_key_; }

 private:
  const int max_per_key_;
  std::mutex mu_;
  std::map<std::string, int> held_;  // keys held at least once
};

}  // namespace septa::core
