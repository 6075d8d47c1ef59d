#include "tenancy/sync/name_collisions.h"

#include "tenancy/sync/host_claims.h"
#include "tenancy/sync/object_copies.h"
#include "tenancy/sync/pod_references.h"

namespace septa::tenancy::sync {

std::optional<HostNameHolder> OtherHolder(const nlohmann::json& host_object, std::string_view kind, std::string_view ns,
                                          std::string_view name, std::string_view tenant, std::string_view vcluster) {
  auto ref = VirtualRefOf(host_object, tenant, vcluster);
  if (!ref) return std::nullopt;
  HostNameHolder holder{MetadataMapString(host_object, "annotations", kVirtualKindAnnotation), *std::move(ref)};
  if (holder.kind == kind && holder.ref.ns == ns && holder.ref.name == name) return std::nullopt;
  return holder;
}

Refusal HostNameTaken(std::string_view kind, std::string_view ns, std::string_view name, std::string_view host_name,
                      const HostNameHolder& holder) {
  return {"metadata.name", "its host name " + std::string(host_name) + " is the copy of " + holder.kind + " " +
                               holder.ref.ns + "/" + holder.ref.name + " (\"" + std::string(name) + "\" in \"" +
                               std::string(ns) + "\" and \"" + holder.ref.name + "\" in \"" + holder.ref.ns +
                               "\" map to one host name): rename one of them; this " + std::string(kind) +
                               " is synced once that one is gone"};
}

Refusal HostNameUsed(std::string_view kind, std::string_view ns, std::string_view name, std::string_view host_name,
                     std::string_view user_ns, std::string_view user_pod, std::string_view user_name) {
  return {"metadata.name", "its host name " + std::string(host_name) + " is the one pod " + std::string(user_ns) + "/" +
                               std::string(user_pod) + " uses for its " + std::string(kind) + " \"" +
                               std::string(user_name) + "\" (\"" + std::string(name) + "\" in \"" + std::string(ns) +
                               "\" and \"" + std::string(user_name) + "\" in \"" + std::string(user_ns) +
                               "\" map to one host name): rename one of them"};
}

Refusal ReferenceRefused(std::string_view kind, std::string_view ns, std::string_view name, const Refusal& why) {
  return {"spec", "it uses " + std::string(kind) + " " + std::string(ns) + "/" + std::string(name) +
                      ", which cannot be copied to the host: " + why.message};
}

std::string ReferenceWithHostName(const nlohmann::json& virtual_pod, std::string_view kind, std::string_view host_name,
                                  std::string_view vcluster) {
  const std::string ns = MetadataField(virtual_pod, "namespace");
  auto named = [&](const std::string& name) { return HostObjectName(name, ns, vcluster) == host_name; };
  if (kind == kClaimKind) {
    for (const std::string& claim : ReferencedClaims(virtual_pod)) {
      if (named(claim)) return claim;
    }
    return "";
  }
  for (const ObjectRef& ref : ReferencedObjects(virtual_pod)) {
    if (KindName(ref.kind) == kind && named(ref.name)) return ref.name;
  }
  return "";
}

}  // namespace septa::tenancy::sync
