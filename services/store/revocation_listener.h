// Token revocations across septad replicas: PgTx sends a NOTIFY on
// `kRevocationChannel` with each revocation (delivered only if its
// transaction commits), and RevocationListener, a NotificationListener on
// that channel, hands each one to the watcher (core::Store::WatchRevocations).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "services/core/store.h"
#include "services/store/notification_listener.h"

namespace septa::store {

inline constexpr std::string_view kRevocationChannel = "septa_revocations";

// "token:<id>" or "principal:<principal>".
std::string RevocationPayload(const core::Revocation& revocation);
// The inverse; an unknown payload is an empty Revocation ("anything may have changed").
core::Revocation ParseRevocationPayload(std::string_view payload);

class RevocationListener {
 public:
  // Connects and listens in the background, reconnecting with backoff; the
  // watcher gets an empty Revocation after every (re)connection, since
  // notifications sent while no connection listened are lost. Returns once
  // the first connection listens (or has failed, or after 5 s), so that
  // revocations committed after construction are told.
  // Stops within a fraction of a second when destroyed.
  RevocationListener(std::string database_url, std::function<void(const core::Revocation&)> on_revocation);

 private:
  NotificationListener listener_;
};

}  // namespace septa::store
