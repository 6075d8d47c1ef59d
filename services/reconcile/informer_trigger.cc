#include "services/reconcile/informer_trigger.h"

namespace septa::reconcile {

std::string ObjectKey(const nlohmann::json& object) {
  auto text = [&](const char* field) {
    const nlohmann::json* metadata = object.is_object() && object.contains("metadata") ? &object["metadata"] : nullptr;
    if (!metadata || !metadata->is_object() || !metadata->contains(field)) return std::string();
    const nlohmann::json& value = (*metadata)[field];
    return value.is_string() ? value.get<std::string>() : std::string();
  };
  const std::string name = text("name"), ns = text("namespace");
  if (name.empty()) return "";
  return ns.empty() ? name : ns + "/" + name;
}

kube::InformerHandlers EnqueueOnChange(Controller& controller,
                                       std::function<std::string(const nlohmann::json&)> key_of) {
  auto enqueue = [&controller, key_of = std::move(key_of)](const nlohmann::json& object) {
    // An object without a name has no key; "" would mean "resync everything".
    if (const std::string key = key_of(object); !key.empty()) controller.Enqueue(key);
  };
  return {.on_add = enqueue,
          .on_update = [enqueue](const nlohmann::json&, const nlohmann::json& object) { enqueue(object); },
          .on_delete = enqueue};
}

}  // namespace septa::reconcile
