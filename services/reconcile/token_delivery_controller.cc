#include "services/reconcile/token_delivery_controller.h"

#include <spdlog/spdlog.h>

#include "services/base/base64.h"
#include "services/kube/resources.h"

namespace septa::reconcile {
namespace {

constexpr char kFieldManager[] = "septa-token-delivery";

}  // namespace

TokenDeliveryController::TokenDeliveryController(TokenDeliveryControllerOptions options, core::TokenDelivery& delivery,
                                                 core::Store& store, kube::Client& host, const Clock& clock,
                                                 prometheus::Registry& metrics)
    : delivery_(delivery),
      store_(store),
      host_(host),
      clock_(clock),
      controller_({.name = "token-delivery",
                   .workers = options.workers,
                   .list_keys = [this] { return ListNames(); },
                   .shards = options.shards},
                  *this, clock, metrics) {}

TokenDeliveryController::~TokenDeliveryController() { Stop(); }

void TokenDeliveryController::Enqueue(const std::string& name) {
  if (auto key = DecodeKey<std::string>(name)) controller_.Enqueue(*key);
}

Result<std::vector<std::string>> TokenDeliveryController::ListNames() {
  SEPTA_ASSIGN_OR_RETURN(
      const std::vector<core::TokenDeclaration> all,
      core::TransactFor(store_, core::TxMode::kReadOnly, [](core::Tx& tx) { return tx.TokenDeclarations().List(); }));
  std::vector<std::string> names;
  names.reserve(all.size());
  for (const core::TokenDeclaration& d : all) names.push_back(d.name);
  return names;
}

Status TokenDeliveryController::CheckSink(const std::string& name, const core::SecretSink& sink) {
  auto existing = host_.Get(kube::kSecrets, sink.ns, sink.name);
  if (IsNotFound(existing.status())) return Status::Ok();
  SEPTA_RETURN_IF_ERROR(existing);
  const auto annotations = existing->value("/metadata/annotations"_json_pointer, nlohmann::json::object());
  if (annotations.value(kApiTokenAnnotation, "") == name) return Status::Ok();
  return FailedPrecondition("Secret " + sink.ns + "/" + sink.name + " exists and was not made for apitokens/" + name +
                            ": septad does not take it over (delete it, or deliver elsewhere)");
}

Status TokenDeliveryController::WriteSecret(const std::string& name, const core::Delivery& delivery) {
  const core::SecretSink& sink = delivery.sink;
  SEPTA_RETURN_IF_ERROR(CheckSink(name, sink));
  const nlohmann::json secret = {{"apiVersion", "v1"},
                                 {"kind", "Secret"},
                                 {"metadata",
                                  {{"name", sink.name},
                                   {"namespace", sink.ns},
                                   {"labels", {{"app.kubernetes.io/managed-by", "septa"}}},
                                   {"annotations", {{kApiTokenAnnotation, name}}}}},
                                 {"type", "Opaque"},
                                 {"data", {{sink.key, base::Base64Encode(delivery.secret)}}}};
  return host_.Apply(kube::kSecrets, sink.ns, secret, kFieldManager, /*force=*/true).status();
}

Outcome TokenDeliveryController::Reconcile(const std::string& name) {
  // A sink septad may not write is found before a token is minted for it.
  auto declared = core::TransactFor(store_, core::TxMode::kReadOnly,
                                    [&](core::Tx& tx) { return tx.TokenDeclarations().Get(name); });
  if (!declared.ok()) return Outcome::Error(declared.status());
  if (*declared) {
    if (Status sink = CheckSink(name, (*declared)->sink); !sink.ok()) return Outcome::Error(sink);
  }
  auto step = delivery_.Begin(name);
  if (!step.ok()) return Outcome::Error(step.status());
  if (!step->next_due) return Outcome::Done();  // gone
  if (step->deliver) {
    if (Status written = WriteSecret(name, *step->deliver); !written.ok()) return Outcome::Error(written);
    if (Status finished = delivery_.Finish(name, step->deliver->token_id); !finished.ok()) {
      return Outcome::Error(finished);
    }
    spdlog::info("token-delivery: apitokens/{} delivered token {} to Secret {}/{} (key {})", name,
                 step->deliver->token_id, step->deliver->sink.ns, step->deliver->sink.name, step->deliver->sink.key);
  }
  const auto wait = *step->next_due - clock_.Now();
  return Outcome::RequeueAfter(std::max<std::chrono::nanoseconds>(wait, std::chrono::seconds(1)));
}

}  // namespace septa::reconcile
