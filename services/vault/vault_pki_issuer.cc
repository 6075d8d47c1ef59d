#include "services/vault/vault_pki_issuer.h"

#include <openssl/asn1.h>
#include <openssl/pem.h>

#include <algorithm>
#include <cctype>
#include <ctime>

#include "services/base/openssl_ptr.h"
#include "tenancy/vcluster_roles.h"

namespace septa::vault {
namespace {

// Vault's warning when it capped a ttl at the role's max_ttl: "TTL ... is
// longer than permitted maxTTL ...".
bool WarnsOfCappedTtl(const std::vector<std::string>& warnings) {
  return std::any_of(warnings.begin(), warnings.end(),
                     [](const std::string& w) { return w.find("maxTTL") != std::string::npos; });
}

Result<TimePoint> AsTimePoint(const ASN1_TIME* time) {
  std::tm tm{};
  if (time == nullptr || ASN1_TIME_to_tm(time, &tm) != 1) return Unavailable("vault: unreadable certificate validity");
  return TimePoint(std::chrono::seconds(timegm(&tm)));
}

struct Validity {
  TimePoint not_before, not_after;
};

Result<Validity> ValidityOf(const std::string& certificate_pem) {
  base::BioPtr bio = base::MemoryBio(certificate_pem);
  base::CertPtr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return Unavailable("vault: the issued certificate cannot be read");
  auto not_before = AsTimePoint(X509_get0_notBefore(cert.get()));
  if (!not_before.ok()) return not_before.status();
  auto not_after = AsTimePoint(X509_get0_notAfter(cert.get()));
  if (!not_after.ok()) return not_after.status();
  return Validity{*not_before, *not_after};
}

}  // namespace

std::string SerialFromVault(const std::string& vault_serial) {
  std::string out;
  for (char c : vault_serial) {
    if (c != ':' && c != '-') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string SerialToVault(const std::string& serial) {
  std::string digits = serial.size() % 2 == 1 ? "0" + serial : serial;
  std::string out;
  for (std::size_t i = 0; i < digits.size(); i += 2) out += (i == 0 ? "" : ":") + digits.substr(i, 2);
  return out;
}

Result<ClientCertificate> VaultPkiIssuer::IssueClientCertificate(const ClientCertificateRequest& request) {
  if (request.ttl.count() <= 0) return InvalidField("ttl", "must be positive");
  if (request.max_ttl.count() <= 0) return InvalidField("max_ttl", "must be positive");
  auto role = std::find_if(tenancy::kVclusterRoles.begin(), tenancy::kVclusterRoles.end(),
                           [&](const tenancy::VclusterRole& r) { return r.name == request.role; });
  if (role == tenancy::kVclusterRoles.end())
    return InvalidField("role", "\"" + request.role + "\" is not a Vault PKI role");
  if (request.groups != std::vector<std::string>{std::string(role->group)}) {
    return InvalidField("groups", "must be the role's group \"" + std::string(role->group) +
                                      "\": a Vault PKI role fixes the certificate's O");
  }
  auto mount_of = pki_.MountOf(request.tenant, request.vcluster);
  SEPTA_RETURN_IF_ERROR(mount_of);
  const std::string& mount = *mount_of;
  bool roles_current = false;
  {
    std::lock_guard lock(mu_);
    auto it = roles_max_ttl_.find(mount);
    roles_current = it != roles_max_ttl_.end() && it->second == request.max_ttl;
  }
  if (!roles_current) {
    // Only a virtual cluster the ensure step gave a CA gets roles: issuing never creates a mount.
    auto ca = pki_.ClientCaPem(request.tenant, request.vcluster);
    if (!ca.ok()) return ca.status();
    SEPTA_RETURN_IF_ERROR(pki_.EnsureRoles(request.tenant, request.vcluster, request.max_ttl));
    std::lock_guard lock(mu_);
    roles_max_ttl_[mount] = request.max_ttl;
  }

  IssueRequest issue;
  issue.common_name = request.user;
  issue.ttl = request.ttl;
  issue.exclude_cn_from_sans = true;
  auto issued = pki_.client().Issue(mount, request.role, issue);
  if (!issued.ok()) {
    std::lock_guard lock(mu_);
    roles_max_ttl_.erase(mount);  // a role or the mount may have gone: the next call checks again
    return issued.status();
  }
  auto validity = ValidityOf(issued->certificate);
  if (!validity.ok()) return validity.status();
  ClientCertificate out;
  out.certificate_pem = std::move(issued->certificate);
  out.private_key_pem = std::move(issued->private_key);
  out.ca_certificate_pem = std::move(issued->issuing_ca);
  out.serial = SerialFromVault(issued->serial_number);
  out.not_before = validity->not_before;
  out.not_after = validity->not_after;
  out.ttl_capped = request.ttl > request.max_ttl || WarnsOfCappedTtl(issued->warnings);
  return out;
}

Result<TimePoint> VaultPkiIssuer::Revoke(const std::string& tenant, const std::string& vcluster,
                                         const std::string& serial) {
  if (serial.empty()) return InvalidField("serial", "is required");
  auto mount = pki_.MountOf(tenant, vcluster);
  SEPTA_RETURN_IF_ERROR(mount);
  return pki_.client().Revoke(*mount, SerialToVault(serial));
}

}  // namespace septa::vault
