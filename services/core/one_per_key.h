// At most one holder per key at a time, refused rather than queued: what
// bounds a tenant to one validate_only check in flight (the checks of all
// tenants take turns on one ledger, so one tenant that checks without pause
// takes at most its turn from the others).
#pragma once

#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

namespace septa::core {

class OnePerKey {
 public:
  // Gives the key back when it goes.
  class Held {
   public:
    Held(OnePerKey& owner, std::string key) : owner_(&owner), key_(std::move(key)) {}
    Held(Held&& other) noexcept : owner_(std::exchange(other.owner_, nullptr)), key_(std::move(other.key_)) {}
    Held& operator=(Held&&) = delete;
    ~Held() {
      if (owner_ == nullptr) return;
      std::lock_guard lock(owner_->mu_);
      owner_->held_.erase(key_);
    }

   private:
    OnePerKey* owner_;
    std::string key_;
  };

  // nullopt while another holds `key`.
  std::optional<Held> TryHold(const std::string& key) {
    std::lock_guard lock(mu_);
    if (!held_.insert(key).second) return std::nullopt;
    return std::optional<Held>(std::in_place, *this, key);
  }

 private:
  std::mutex mu_;
  std::set<std::string> held_;
};

}  // namespace septa::core
