#include "services/store/revocation_listener.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <pqxx/pqxx>

namespace septa::store {

namespace {

constexpr std::string_view kTokenPrefix = "token:", kPrincipalPrefix = "principal:";

class Receiver final : public pqxx::notification_receiver {
 public:
  Receiver(pqxx::connection_base& c, const std::function<void(const core::Revocation&)>& on_revocation)
      : pqxx::notification_receiver(c, std::string(kRevocationChannel)), on_revocation_(on_revocation) {}
  void operator()(const std::string& payload, int) override { on_revocation_(ParseRevocationPayload(payload)); }

 private:
  const std::function<void(const core::Revocation&)>& on_revocation_;
};

}  // namespace

std::string RevocationPayload(const core::Revocation& r) {
  return r.token_id.empty() ? std::string(kPrincipalPrefix) + r.principal : std::string(kTokenPrefix) + r.token_id;
}

core::Revocation ParseRevocationPayload(std::string_view payload) {
  if (payload.starts_with(kTokenPrefix)) return {std::string(payload.substr(kTokenPrefix.size())), ""};
  if (payload.starts_with(kPrincipalPrefix)) return {"", std::string(payload.substr(kPrincipalPrefix.size()))};
  return {};
}

RevocationListener::RevocationListener(std::string database_url,
                                       std::function<void(const core::Revocation&)> on_revocation)
    : database_url_(std::move(database_url)), on_revocation_(std::move(on_revocation)), thread_([this] { Run(); }) {
  first_attempt_.get_future().wait_for(std::chrono::seconds(5));
}

RevocationListener::~RevocationListener() {
  stopping_ = true;
  thread_.join();
}

void RevocationListener::Run() {
  std::chrono::milliseconds backoff{100};
  bool first = true;
  auto attempted = [&] {
    if (first) first_attempt_.set_value();
    first = false;
  };
  while (!stopping_) {
    try {
      pqxx::connection connection(database_url_);
      Receiver receiver(connection, on_revocation_);
      // The receiver has sent LISTEN; whatever was sent before is lost, so caches start over.
      on_revocation_(core::Revocation{});
      attempted();
      backoff = std::chrono::milliseconds(100);
      // A short wait so that stopping never takes long.
      while (!stopping_) connection.await_notification(0, 200'000);
    } catch (const std::exception& e) {
      attempted();
      if (stopping_) return;
      spdlog::warn("token revocation listener: {}; reconnecting in {} ms", e.what(), backoff.count());
      for (auto slept = std::chrono::milliseconds(0); slept < backoff && !stopping_;
           slept += std::chrono::milliseconds(50)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      backoff = std::min<std::chrono::milliseconds>(backoff * 2, std::chrono::seconds(5));
    }
  }
}

}  // namespace septa::store
