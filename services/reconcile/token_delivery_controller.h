// The token delivery controller: writes the secret of each API token
// declared in Git (core/token_declaration_kind.h) to its Secret of the host
// cluster, and a new one before the last one runs out. Keys are
// declarations' names. Triggers: NOTIFY septa_token_declarations (a
// declaration made or changed, migrations/0022) and the resync, which lists
// every declaration (at start, on a shard gained, after the listener
// reconnects); each Reconcile asks to be looked at again when the next
// token is due.
//
// Reconcile(name), level-based (core/token_delivery.h):
//  - Begin: nothing due → requeue at the due time; the declaration gone →
//    done (its tokens were revoked with it; the Secret stays, holding a
//    revoked token);
//  - a token minted: the Secret is written (server-side apply), then Finish.
//    A Secret septad did not make (no septa.dev/api-token annotation naming
//    this declaration) is never taken over: it is checked before a token is
//    minted, and the error is retried with backoff and logged. A crash or failure between Begin and Finish leaves
//    the token pending, and the next Begin revokes it and mints another.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/clock.h"
#include "services/core/store.h"
#include "services/core/token_delivery.h"
#include "services/kube/client.h"
#include "services/reconcile/controller.h"

namespace septa::reconcile {

// Marks a Secret as septad's, for the declaration it names.
inline constexpr char kApiTokenAnnotation[] = "septa.dev/api-token";

struct TokenDeliveryControllerOptions {
  int workers = 1;
  ShardLeases* shards = nullptr;  // as ControllerOptions::shards
};

class TokenDeliveryController final : public Reconciler<std::string> {
 public:
  TokenDeliveryController(TokenDeliveryControllerOptions options, core::TokenDelivery& delivery, core::Store& store,
                          kube::Client& host, const Clock& clock, prometheus::Registry& metrics);
  ~TokenDeliveryController() override;  // Stop

  void Start() { controller_.Start(); }
  void Stop() { controller_.Stop(); }
  void Resync() { controller_.Resync(); }
  void Enqueue(const std::string& name);
  bool AwaitIdle(std::chrono::milliseconds timeout) const { return controller_.AwaitIdle(timeout); }

  Outcome Reconcile(const std::string& name) override;

 private:
  Result<std::vector<std::string>> ListNames();
  // OK when the Secret is absent or septad's for this declaration.
  Status CheckSink(const std::string& name, const core::SecretSink& sink);
  Status WriteSecret(const std::string& name, const core::Delivery& delivery);

  core::TokenDelivery& delivery_;
  core::Store& store_;
  kube::Client& host_;
  const Clock& clock_;
  Controller<std::string> controller_;
};

}  // namespace septa::reconcile
