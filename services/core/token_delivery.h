// The delivery of API tokens declared in Git (token_declaration_kind.h):
// the use case under the token delivery controller
// (reconcile/token_delivery_controller.h), which writes the secret between
// its two transactions.
//   Begin(name): decides in one transaction. When a token is due it revokes
//     a pending one (minted by a delivery that never finished: its secret is
//     lost), mints a new one (TokenService::IssueIn, every rule of
//     CreateToken) and records it as pending, and answers its secret and
//     sink; otherwise it answers when the next one is due.
//   Finish(name, token_id): the secret is in the sink; the pending token
//     becomes the delivered one. The one before lives out its own lifetime
//     (at most a third of it is left), so a reader of the old Secret is not
//     cut off; a change of who the token is revoked it already.
// A token is due when none was delivered, it follows an older version of
// the declaration, it was revoked or has expired, or a third of its
// lifetime is left. The secret is never stored, logged or audited.
#pragma once

#include <optional>
#include <string>

#include "common/clock.h"
#include "services/core/store.h"
#include "services/core/token_service.h"

namespace septa::core {

struct Delivery {
  std::string token_id{};
  std::string secret{};  // the bearer token's text: for the sink only
  SecretSink sink{};
  TimePoint expire_time{};
};

struct DeliveryStep {
  std::optional<Delivery> deliver{};    // a token to write to the sink now
  std::optional<TimePoint> next_due{};  // none: the declaration is gone
};

class TokenDelivery {
 public:
  TokenDelivery(Store& store, const Clock& clock, TokenService& tokens)
      : store_(store), clock_(clock), tokens_(tokens) {}

  Result<DeliveryStep> Begin(const std::string& name);
  // OK and nothing done when `token_id` is no longer the pending one (the
  // declaration changed or went meanwhile: its token was revoked).
  Status Finish(const std::string& name, const std::string& token_id);

 private:
  Store& store_;
  const Clock& clock_;
  TokenService& tokens_;
};

}  // namespace septa::core
