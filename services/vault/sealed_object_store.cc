#include "services/vault/sealed_object_store.h"

namespace septa::vault {
namespace {

constexpr std::string_view kListenerAad = "septa-ca-key listener";

// Rewraps one stored key; false when it was already current.
Result<bool> Rewrap(const std::string& stored, const std::string& aad, const KeyRing& keys, RandomSource& random,
                    std::string& replacement) {
  if (keys.IsCurrent(stored)) return false;
  std::string plain = stored;
  if (IsWrapped(stored)) {
    auto opened = keys.Unwrap(stored, aad);
    SEPTA_RETURN_IF_ERROR(opened);
    plain = *std::move(opened);
  }
  auto wrapped = keys.Wrap(plain, aad, random);
  SEPTA_RETURN_IF_ERROR(wrapped);
  replacement = *std::move(wrapped);
  return true;
}

}  // namespace

std::string CaKeyAad(const core::VirtualClusterKey& key) { return "septa-ca-key vcluster " + key.ToString(); }

Result<std::string> SealedVirtualObjectStore::Open(const std::string& stored, const std::string& aad) const {
  if (!IsWrapped(stored)) return stored;
  return keys_.Unwrap(stored, aad);
}

Result<std::pair<core::StoredControlPlane, bool>> SealedVirtualObjectStore::CreateControlPlane(
    const core::VirtualClusterKey& key, const core::StoredControlPlane& created) {
  const std::string aad = CaKeyAad(key);
  core::StoredControlPlane sealed = created;
  auto wrapped = keys_.Wrap(created.ca_private_key, aad, random_);
  SEPTA_RETURN_IF_ERROR(wrapped);
  sealed.ca_private_key = *std::move(wrapped);
  auto out = inner_.CreateControlPlane(key, sealed);
  SEPTA_RETURN_IF_ERROR(out);
  auto opened = Open(out->first.ca_private_key, aad);
  SEPTA_RETURN_IF_ERROR(opened);
  out->first.ca_private_key = *std::move(opened);
  return out;
}

Result<std::optional<core::StoredControlPlane>> SealedVirtualObjectStore::GetControlPlane(
    const core::VirtualClusterKey& key) {
  auto out = inner_.GetControlPlane(key);
  SEPTA_RETURN_IF_ERROR(out);
  if (!*out) return out;
  auto opened = Open((*out)->ca_private_key, CaKeyAad(key));
  SEPTA_RETURN_IF_ERROR(opened);
  (*out)->ca_private_key = *std::move(opened);
  return out;
}

Result<core::VirtualObjectStore::ListenerCertificate> SealedVirtualObjectStore::ListenerCa(
    const ListenerCertificate& created) {
  const std::string aad(kListenerAad);
  auto wrapped = keys_.Wrap(created.ca_private_key, aad, random_);
  SEPTA_RETURN_IF_ERROR(wrapped);
  auto out = inner_.ListenerCa({created.ca_certificate, *std::move(wrapped)});
  SEPTA_RETURN_IF_ERROR(out);
  auto opened = Open(out->ca_private_key, aad);
  SEPTA_RETURN_IF_ERROR(opened);
  out->ca_private_key = *std::move(opened);
  return out;
}

Result<std::optional<core::VirtualObjectStore::ListenerCertificate>> SealedVirtualObjectStore::StoredListenerCa() {
  auto out = inner_.StoredListenerCa();
  SEPTA_RETURN_IF_ERROR(out);
  if (!*out) return out;
  auto opened = Open((*out)->ca_private_key, std::string(kListenerAad));
  SEPTA_RETURN_IF_ERROR(opened);
  (*out)->ca_private_key = *std::move(opened);
  return out;
}

Result<RewrapReport> RewrapStoredKeys(core::VirtualObjectStore& raw, const KeyRing& keys, RandomSource& random) {
  RewrapReport report;
  auto count = [&](const Result<bool>& rewrapped, const Status& replaced) -> Status {
    SEPTA_RETURN_IF_ERROR(rewrapped);
    if (!*rewrapped) {
      ++report.current;
      return Status::Ok();
    }
    // kAborted: another replica re-wrapped it first; kNotFound: removed meanwhile.
    if (replaced.ok()) ++report.rewrapped;
    if (replaced.ok() || IsAborted(replaced) || IsNotFound(replaced)) return Status::Ok();
    return replaced;
  };
  auto planes = raw.ListControlPlanes();
  SEPTA_RETURN_IF_ERROR(planes);
  for (const auto& key : *planes) {
    auto stored = raw.GetControlPlane(key);
    SEPTA_RETURN_IF_ERROR(stored);
    if (!*stored) continue;
    std::string replacement;
    auto rewrapped = Rewrap((*stored)->ca_private_key, CaKeyAad(key), keys, random, replacement);
    Status replaced = rewrapped.ok() && *rewrapped
                          ? raw.ReplaceCaPrivateKey(key, (*stored)->ca_private_key, replacement)
                          : Status::Ok();
    SEPTA_RETURN_IF_ERROR(count(rewrapped, replaced));
  }
  auto listener = raw.StoredListenerCa();
  SEPTA_RETURN_IF_ERROR(listener);
  if (*listener) {
    std::string replacement;
    auto rewrapped = Rewrap((*listener)->ca_private_key, std::string(kListenerAad), keys, random, replacement);
    Status replaced = rewrapped.ok() && *rewrapped
                          ? raw.ReplaceListenerCaPrivateKey((*listener)->ca_private_key, replacement)
                          : Status::Ok();
    SEPTA_RETURN_IF_ERROR(count(rewrapped, replaced));
  }
  return report;
}

}  // namespace septa::vault
