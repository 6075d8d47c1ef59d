#include "tenancy/sync/pod_affinity.h"

#include "tenancy/sync/bookkeeping.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

// Adds `septa.dev/namespace In values` to the term's label selector. A
// term without one selects no pod, and keeps selecting none.
void Require(json& term, const json& values) {
  auto selector = term.find("labelSelector");
  if (selector == term.end() || !selector->is_object()) return;
  (*selector)["matchExpressions"].push_back(
      {{"key", std::string(kVirtualNamespaceLabel)}, {"operator", "In"}, {"values", values}});
}

std::optional<Refusal> ScopeTerm(json& term, const std::string& field, const std::string& virtual_ns,
                                 const std::string& host_namespace) {
  if (!term.is_object()) return Refusal{field, "is not an object"};
  json namespaces = json::array({virtual_ns});
  if (auto selector = term.find("namespaceSelector"); selector != term.end() && !selector->is_null()) {
    const bool everything = selector->is_object() && selector->value("matchLabels", json::object()).empty() &&
                            selector->value("matchExpressions", json::array()).empty();
    if (!everything) {
      return Refusal{field + ".namespaceSelector",
                     "a namespace selector with labels cannot be honoured on the host; list the namespaces instead"};
    }
    namespaces = nullptr;  // every namespace of the virtual cluster: all of the host namespace
    term.erase("namespaceSelector");
  } else if (auto listed = term.find("namespaces"); listed != term.end() && listed->is_array() && !listed->empty()) {
    for (const json& ns : *listed) {
      if (!ns.is_string()) return Refusal{field + ".namespaces", "must be a list of names"};
    }
    namespaces = *listed;
  }
  term["namespaces"] = json::array({host_namespace});
  if (!namespaces.is_null()) Require(term, namespaces);
  return std::nullopt;
}

}  // namespace

std::optional<Refusal> ScopePodAffinity(json& spec, const std::string& virtual_ns, const std::string& host_namespace) {
  if (auto affinity = spec.find("affinity"); affinity != spec.end() && affinity->is_object()) {
    for (const char* kind : {"podAffinity", "podAntiAffinity"}) {
      auto rules = affinity->find(kind);
      if (rules == affinity->end() || rules->is_null()) continue;
      const std::string at = std::string("spec.affinity.") + kind;
      if (!rules->is_object()) return Refusal{at, "is not an object"};
      if (auto required = rules->find("requiredDuringSchedulingIgnoredDuringExecution"); required != rules->end()) {
        if (!required->is_array())
          return Refusal{at + ".requiredDuringSchedulingIgnoredDuringExecution", "is not a list"};
        for (std::size_t i = 0; i < required->size(); ++i) {
          const std::string field = at + ".requiredDuringSchedulingIgnoredDuringExecution[" + std::to_string(i) + "]";
          if (auto refusal = ScopeTerm((*required)[i], field, virtual_ns, host_namespace)) return refusal;
        }
      }
      if (auto preferred = rules->find("preferredDuringSchedulingIgnoredDuringExecution"); preferred != rules->end()) {
        if (!preferred->is_array())
          return Refusal{at + ".preferredDuringSchedulingIgnoredDuringExecution", "is not a list"};
        for (std::size_t i = 0; i < preferred->size(); ++i) {
          const std::string field = at + ".preferredDuringSchedulingIgnoredDuringExecution[" + std::to_string(i) + "]";
          json& weighted = (*preferred)[i];
          if (!weighted.is_object() || !weighted.contains("podAffinityTerm")) {
            return Refusal{field + ".podAffinityTerm", "missing"};
          }
          if (auto refusal =
                  ScopeTerm(weighted["podAffinityTerm"], field + ".podAffinityTerm", virtual_ns, host_namespace)) {
            return refusal;
          }
        }
      }
    }
  }
  if (auto spread = spec.find("topologySpreadConstraints"); spread != spec.end() && !spread->is_null()) {
    if (!spread->is_array()) return Refusal{"spec.topologySpreadConstraints", "is not a list"};
    for (std::size_t i = 0; i < spread->size(); ++i) {
      if (!(*spread)[i].is_object()) {
        return Refusal{"spec.topologySpreadConstraints[" + std::to_string(i) + "]", "is not an object"};
      }
      Require((*spread)[i], json::array({virtual_ns}));
    }
  }
  return std::nullopt;
}

}  // namespace septa::tenancy::sync
