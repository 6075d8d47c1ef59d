#include "tests/support/fake_credentials.h"

#include <regex>

namespace septa::core {

namespace {

std::string NameOf(const std::string& tenant, const std::string& vcluster, const std::string& serial) {
  return "credential \"" + serial + "\" of virtual cluster \"" + tenant + "/" + vcluster + "\"";
}

}  // namespace

Status FakeCredentials::Insert(const VclusterCredential& c) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  static const std::regex kSerial("[0-9a-f]{16,40}");
  if (!std::regex_match(c.serial, kSerial)) return InvalidField("serial", "must be 16-40 lower-case hex digits");
  if (c.role != "admin" && c.role != "edit" && c.role != "view") {
    return InvalidField("role", "must be admin, edit or view");
  }
  if (c.expire_time <= c.issue_time) return InvalidField("expire_time", "must be after issue_time");
  if (!w_.s.vclusters.count({c.tenant, c.vcluster})) return NotFound("no such virtual cluster");
  VclusterCredential row = c;
  row.issue_time = Truncated(c.issue_time);
  row.expire_time = Truncated(c.expire_time);
  row.revoke_time.reset();
  if (!w_.s.credentials.emplace(std::tuple{c.tenant, c.vcluster, c.serial}, std::move(row)).second) {
    return AlreadyExists("a credential with this serial already exists");
  }
  return Status::Ok();
}

Result<VclusterCredential> FakeCredentials::Get(const std::string& tenant, const std::string& vcluster,
                                                const std::string& serial) {
  const auto it = w_.s.credentials.find({tenant, vcluster, serial});
  if (it == w_.s.credentials.end()) return NotFound(NameOf(tenant, vcluster, serial) + " not found");
  return it->second;
}

Result<std::vector<VclusterCredential>> FakeCredentials::List(const CredentialQuery& q) {
  SEPTA_RETURN_IF_ERROR(CheckLimit(q.limit));
  std::vector<VclusterCredential> rows;
  const std::string& after_vcluster = q.vcluster.empty() ? q.after_vcluster : q.vcluster;
  for (auto it = w_.s.credentials.upper_bound({q.tenant, after_vcluster, q.after_serial});
       it != w_.s.credentials.end() && static_cast<int>(rows.size()) < q.limit; ++it) {
    const VclusterCredential& c = it->second;
    if (c.tenant != q.tenant || (!q.vcluster.empty() && c.vcluster != q.vcluster)) break;
    if (q.expiring && (c.revoke_time || c.expire_time <= q.expiring->now || c.expire_time > q.expiring->before)) {
      continue;
    }
    rows.push_back(c);
  }
  return rows;
}

Result<VclusterCredential> FakeCredentials::Revoke(const std::string& tenant, const std::string& vcluster,
                                                   const std::string& serial, TimePoint when) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  const auto it = w_.s.credentials.find({tenant, vcluster, serial});
  if (it == w_.s.credentials.end()) return NotFound(NameOf(tenant, vcluster, serial) + " not found");
  if (!it->second.revoke_time) it->second.revoke_time = Truncated(when);
  return it->second;
}

}  // namespace septa::core
