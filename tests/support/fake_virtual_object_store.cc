#include "tests/support/fake_virtual_object_store.h"

#include <algorithm>

namespace septa::test {
namespace {

Status Gone(const core::VirtualClusterKey& key) {
  return NotFound("virtual control plane " + key.tenant + "/" + key.vcluster + " does not exist");
}

Status Expect(const core::VirtualClusterKey& key, std::uint64_t stored, std::uint64_t expected) {
  if (stored == expected) return Status::Ok();
  return Aborted("virtual control plane " + key.tenant + "/" + key.vcluster + " is at resource version " +
                 std::to_string(stored) + ", not " + std::to_string(expected));
}

}  // namespace

Result<std::pair<core::StoredControlPlane, bool>> FakeVirtualObjectStore::CreateControlPlane(
    const core::VirtualClusterKey& key, const core::StoredControlPlane& created) {
  std::lock_guard lock(mu_);
  auto [it, inserted] = planes_.try_emplace(key);
  if (inserted) it->second.stored = {created.ca_certificate, created.ca_private_key, 0};
  return std::pair{it->second.stored, inserted};
}

Result<std::optional<core::StoredControlPlane>> FakeVirtualObjectStore::GetControlPlane(
    const core::VirtualClusterKey& key) {
  SEPTA_RETURN_IF_ERROR(read_failure());
  std::lock_guard lock(mu_);
  auto it = planes_.find(key);
  if (it == planes_.end()) return std::optional<core::StoredControlPlane>();
  return std::optional(it->second.stored);
}

Result<std::vector<core::VirtualClusterKey>> FakeVirtualObjectStore::ListControlPlanes() {
  std::lock_guard lock(mu_);
  std::vector<core::VirtualClusterKey> out;
  for (const auto& [key, plane] : planes_) out.push_back(key);
  return out;
}

Status FakeVirtualObjectStore::RemoveControlPlane(const core::VirtualClusterKey& key) {
  std::lock_guard lock(mu_);
  planes_.erase(key);
  return Status::Ok();
}

Result<std::vector<core::VirtualObject>> FakeVirtualObjectStore::LoadObjects(const core::VirtualClusterKey& key) {
  SEPTA_RETURN_IF_ERROR(read_failure());
  std::lock_guard lock(mu_);
  std::vector<core::VirtualObject> out;
  auto it = planes_.find(key);
  if (it == planes_.end()) return out;
  for (const auto& [k, object] : it->second.objects) out.push_back(object);
  return out;
}

Result<std::optional<std::uint64_t>> FakeVirtualObjectStore::ResourceVersion(const core::VirtualClusterKey& key) {
  std::lock_guard lock(mu_);
  auto it = planes_.find(key);
  if (it == planes_.end()) return std::optional<std::uint64_t>();
  return std::optional(it->second.stored.resource_version);
}

Status FakeVirtualObjectStore::PutObject(const core::VirtualClusterKey& key, const core::VirtualObject& object,
                                         std::uint64_t expected) {
  if (fail_writes) return Unavailable("fake: the database is down");
  SEPTA_RETURN_IF_ERROR(Held(key));
  std::lock_guard lock(mu_);
  auto it = planes_.find(key);
  if (it == planes_.end()) return Gone(key);
  SEPTA_RETURN_IF_ERROR(Expect(key, it->second.stored.resource_version, expected));
  it->second.stored.resource_version = object.resource_version;
  it->second.objects[{object.type_key, object.ns, object.name}] = object;
  return Status::Ok();
}

Status FakeVirtualObjectStore::DeleteObject(const core::VirtualClusterKey& key, const std::string& type_key,
                                            const std::string& ns, const std::string& name,
                                            std::uint64_t resource_version, std::uint64_t expected) {
  if (fail_writes) return Unavailable("fake: the database is down");
  SEPTA_RETURN_IF_ERROR(Held(key));
  std::lock_guard lock(mu_);
  auto it = planes_.find(key);
  if (it == planes_.end()) return Gone(key);
  SEPTA_RETURN_IF_ERROR(Expect(key, it->second.stored.resource_version, expected));
  it->second.stored.resource_version = resource_version;
  it->second.objects.erase({type_key, ns, name});
  return Status::Ok();
}

Status FakeVirtualObjectStore::AddTokenDigest(const core::VirtualClusterKey& key, const std::string& sha256_hex) {
  std::lock_guard lock(mu_);
  auto it = planes_.find(key);
  if (it == planes_.end()) return Gone(key);
  it->second.tokens.insert(sha256_hex);
  return Status::Ok();
}

Result<std::vector<std::string>> FakeVirtualObjectStore::TokenDigests(const core::VirtualClusterKey& key) {
  SEPTA_RETURN_IF_ERROR(read_failure());
  std::lock_guard lock(mu_);
  auto it = planes_.find(key);
  if (it == planes_.end()) return std::vector<std::string>();
  return std::vector<std::string>(it->second.tokens.begin(), it->second.tokens.end());
}

Result<core::VirtualObjectStore::ListenerCertificate> FakeVirtualObjectStore::ListenerCa(
    const ListenerCertificate& created) {
  std::lock_guard lock(mu_);
  if (!listener_) listener_ = created;
  return *listener_;
}

Status FakeVirtualObjectStore::ReplaceCaPrivateKey(const core::VirtualClusterKey& key, const std::string& expected,
                                                   const std::string& replacement) {
  std::lock_guard lock(mu_);
  auto it = planes_.find(key);
  if (it == planes_.end()) return Gone(key);
  if (it->second.stored.ca_private_key != expected) {
    return Aborted("the CA key of virtual control plane " + key.tenant + "/" + key.vcluster +
                   " was replaced meanwhile");
  }
  it->second.stored.ca_private_key = replacement;
  return Status::Ok();
}

Result<std::optional<core::VirtualObjectStore::ListenerCertificate>> FakeVirtualObjectStore::StoredListenerCa() {
  std::lock_guard lock(mu_);
  return listener_;
}

Status FakeVirtualObjectStore::ReplaceListenerCaPrivateKey(const std::string& expected,
                                                           const std::string& replacement) {
  std::lock_guard lock(mu_);
  if (!listener_) return NotFound("the virtual control planes' listener has no CA");
  if (listener_->ca_private_key != expected) return Aborted("the listener CA key was replaced meanwhile");
  listener_->ca_private_key = replacement;
  return Status::Ok();
}

Result<core::CredentialStatus> FakeVirtualObjectStore::GetCredentialStatus(const core::VirtualClusterKey& key,
                                                                           const std::string& serial) {
  std::lock_guard lock(mu_);
  auto it = credentials_.find({key, serial});
  if (it == credentials_.end()) return core::CredentialStatus::kUnrecorded;
  if (it->second) return core::CredentialStatus::kRevoked;
  return suspended_tenants_.contains(key.tenant) ? core::CredentialStatus::kSuspended : core::CredentialStatus::kActive;
}

Result<bool> FakeVirtualObjectStore::TenantSuspended(const std::string& tenant) {
  std::lock_guard lock(mu_);
  return suspended_tenants_.contains(tenant);
}

void FakeVirtualObjectStore::SetTenantSuspended(const std::string& tenant, bool suspended) {
  std::lock_guard lock(mu_);
  if (suspended) {
    suspended_tenants_.insert(tenant);
  } else {
    suspended_tenants_.erase(tenant);
  }
}

Result<std::int64_t> FakeVirtualObjectStore::CredentialTtlMax(const core::VirtualClusterKey& key) {
  std::lock_guard lock(mu_);
  auto it = credential_ttl_max_.find(key.tenant);
  return it == credential_ttl_max_.end() ? 0 : it->second;
}

void FakeVirtualObjectStore::SetCredentialTtlMax(const std::string& tenant, std::int64_t seconds) {
  std::lock_guard lock(mu_);
  credential_ttl_max_[tenant] = seconds;
}

void FakeVirtualObjectStore::RecordCredential(const core::VirtualClusterKey& key, const std::string& serial) {
  std::lock_guard lock(mu_);
  credentials_.emplace(std::pair{key, serial}, false);
}

void FakeVirtualObjectStore::RevokeCredential(const core::VirtualClusterKey& key, const std::string& serial) {
  std::lock_guard lock(mu_);
  credentials_[{key, serial}] = true;
}

void FakeVirtualObjectStore::FailReads(Status failure) {
  std::lock_guard lock(hold_mu_);
  read_failure_ = std::move(failure);
}

void FakeVirtualObjectStore::HoldWrites(const core::VirtualClusterKey& key) {
  std::lock_guard lock(hold_mu_);
  held_keys_.insert(key);
}

void FakeVirtualObjectStore::ReleaseWrites() {
  std::lock_guard lock(hold_mu_);
  held_keys_.clear();
  hold_changed_.notify_all();
}

bool FakeVirtualObjectStore::AwaitHeld(std::size_t n, std::chrono::milliseconds bound) {
  std::unique_lock lock(hold_mu_);
  return hold_changed_.wait_for(lock, bound, [&] { return held_ >= n; });
}

Status FakeVirtualObjectStore::Held(const core::VirtualClusterKey& key) {
  std::unique_lock lock(hold_mu_);
  if (!held_keys_.contains(key)) return Status::Ok();
  ++held_;
  hold_changed_.notify_all();
  hold_changed_.wait(lock, [&] { return !held_keys_.contains(key); });
  --held_;
  return Status::Ok();
}

}  // namespace septa::test
