// The PKI secrets engine: a CA per mount (root or intermediate), roles,
// issue/sign, revocation, CRL. Certificates are built by
// http::IssueCertificate; x509.h reads them back and makes CSRs and CRLs.
#include <algorithm>

#include "services/vaultsim/backend.h"
#include "services/vaultsim/x509.h"

namespace septa::vaultsim {
namespace {

// Role fields with Vault's defaults, for writes and for reading back.
json RoleDefaults() {
  return json{{"allowed_domains", json::array()},
              {"allow_any_name", false},
              {"allow_subdomains", false},
              {"allow_bare_domains", false},
              {"allow_localhost", true},
              {"allow_ip_sans", true},
              {"enforce_hostnames", true},
              {"server_flag", true},
              {"client_flag", true},
              {"key_type", "ec"},
              {"key_bits", 256},
              {"organization", json::array()},
              {"ttl", 0},
              {"max_ttl", 0},
              {"generate_lease", false},
              {"no_store", false}};
}

bool Ends(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool NameAllowed(const json& role, const std::string& name) {
  if (role.value("allow_any_name", false)) return true;
  if (name == "localhost" && role.value("allow_localhost", true)) return true;
  for (const auto& d : role["allowed_domains"]) {
    std::string domain = d.get<std::string>();
    if (name == domain && role.value("allow_bare_domains", false)) return true;
    if (role.value("allow_subdomains", false) && Ends(name, "." + domain)) return true;
  }
  return false;
}

bool IsIp(const std::string& s) {
  return !s.empty() && (s.find(':') != std::string::npos || std::all_of(s.begin(), s.end(), [](char c) {
                          return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
                        }));
}

// A boolean request field as Vault reads it: a JSON bool or "true".
bool BoolField(const json& body, const char* name) {
  auto it = body.find(name);
  if (it == body.end()) return false;
  if (it->is_boolean()) return it->get<bool>();
  return it->is_string() && it->get<std::string>() == "true";
}

}  // namespace

ApiReply Backend::Pki(const ApiRequest& request, const std::string& mount, PkiState& pki) {
  const auto& s = request.segments;
  const std::string what = s.size() > 1 ? s[1] : "";
  const std::string rest = request.path.substr(mount.size() + (s.size() > 1 ? 1 : 0));
  TimePoint now = clock_.Now();
  auto pem_reply = [](std::string body, std::string type) { return ApiReply{200, std::move(body), std::move(type)}; };

  if (request.op == Operation::kRead &&
      (rest == "ca/pem" || rest == "ca" || rest == "ca_chain" || rest == "cert/ca_chain")) {
    if (!pki.ca) return ApiReply{204, "", ""};
    if (rest == "ca/pem") return pem_reply(pki.ca->certificate, "application/pem-certificate-chain");
    if (rest == "ca") {
      auto der = CertificateDer(pki.ca->certificate);
      if (!der.ok()) return Error(500, "internal error");
      return pem_reply(*der, "application/pkix-cert");
    }
    std::string chain;
    for (const auto& c : pki.ca_chain) chain += c;
    if (rest == "ca_chain") return pem_reply(chain, "application/pem-certificate-chain");
    return Ok(json{{"certificate", chain}, {"ca_chain", pki.ca_chain}});
  }
  if (request.op == Operation::kRead && (rest == "crl" || rest == "crl/pem")) {
    if (!pki.ca) return Error(400, "no CA is configured on this mount");
    std::vector<RevokedSerial> revoked;
    for (const auto& [serial, cert] : pki.certificates) {
      if (cert.revoked_at) revoked.push_back({serial, *cert.revoked_at});
    }
    auto der = MakeCrl(*pki.ca, revoked, now, now + std::chrono::hours(72));
    if (!der.ok()) return Error(500, "internal error");
    if (rest == "crl") return pem_reply(*der, "application/pkix-crl");
    return pem_reply(CrlPem(*der), "application/x-pem-file");
  }
  if (what == "cert" && s.size() == 3 && request.op == Operation::kRead) {
    std::string serial = s[2];
    std::replace(serial.begin(), serial.end(), '-', ':');
    std::transform(serial.begin(), serial.end(), serial.begin(), [](unsigned char c) { return std::tolower(c); });
    auto it = pki.certificates.find(serial);
    if (it == pki.certificates.end()) return ApiReply{204, "", ""};
    return Ok(json{{"certificate", it->second.pem},
                   {"revocation_time", it->second.revoked_at ? UnixSeconds(*it->second.revoked_at) : 0},
                   {"revocation_time_rfc3339", it->second.revoked_at ? FormatRfc3339(*it->second.revoked_at) : ""}});
  }
  if (what == "certs" && request.op == Operation::kList) {
    json keys = json::array();
    for (const auto& [serial, cert] : pki.certificates) {
      std::string dashed = serial;
      std::replace(dashed.begin(), dashed.end(), ':', '-');
      keys.push_back(dashed);
    }
    return keys.empty() ? Error(404, "") : Ok(json{{"keys", keys}});
  }
  if (what == "roles") {
    if (s.size() == 2 && request.op == Operation::kList) {
      json keys = json::array();
      for (const auto& [name, r] : pki.roles) keys.push_back(name);
      return keys.empty() ? Error(404, "") : Ok(json{{"keys", keys}});
    }
    if (s.size() != 3) return Error(404, "no handler for route \"" + request.path + "\"");
    auto it = pki.roles.find(s[2]);
    if (request.op == Operation::kRead) return it == pki.roles.end() ? Error(404, "") : Ok(it->second.settings);
    if (request.op == Operation::kDelete) {
      pki.roles.erase(s[2]);
      return NoContent();
    }
    if (request.op != Operation::kWrite) return Error(405, "unsupported operation");
    json settings = it == pki.roles.end() ? RoleDefaults() : it->second.settings;
    for (const auto& [key, value] : request.body.items()) {
      if (!settings.contains(key)) continue;  // Vault ignores fields it does not know on a role write
      if (key == "allowed_domains" || key == "organization") {
        settings[key] = StringList(value);
      } else if (key == "ttl" || key == "max_ttl") {
        auto d = ParseDuration(value);
        if (!d) return Error(400, "error converting input " + value.dump() + " for field \"" + key + "\"");
        settings[key] = d->count();
      } else if (key == "key_bits") {
        settings[key] = value.is_string() ? std::stoi(value.get<std::string>()) : value.get<int>();
      } else if (settings[key].is_boolean()) {
        settings[key] = value.is_string() ? value.get<std::string>() == "true" : value.get<bool>();
      } else {
        settings[key] = value;
      }
    }
    std::string key_type = settings["key_type"].get<std::string>();
    if (key_type != "ec" && key_type != "any") {
      return Error(400, "key_type \"" + key_type + "\" is not supported by septa-vaultsim (ec with key_bits 256 is)");
    }
    if (key_type == "ec" && settings["key_bits"].get<int>() != 256) {
      return Error(400, "septa-vaultsim issues P-256 keys only: key_bits must be 256");
    }
    pki.roles[s[2]] = PkiRole{settings};
    return NoContent();
  }
  if (what == "issue" && s.size() == 3 && request.op == Operation::kWrite) return PkiIssue(request, mount, pki, false);
  if (what == "sign" && s.size() == 3 && request.op == Operation::kWrite) return PkiIssue(request, mount, pki, true);
  if (rest == "root/generate/internal" || rest == "root/generate/exported" ||
      rest == "intermediate/generate/internal" || rest == "intermediate/generate/exported" ||
      rest == "root/sign-intermediate" || rest == "intermediate/set-signed") {
    if (request.op != Operation::kWrite) return Error(405, "unsupported operation");
    return PkiRoot(request, pki, rest);
  }
  if (rest == "revoke" && request.op == Operation::kWrite) {
    std::string serial = request.body.value("serial_number", std::string());
    std::replace(serial.begin(), serial.end(), '-', ':');
    std::transform(serial.begin(), serial.end(), serial.begin(), [](unsigned char c) { return std::tolower(c); });
    auto it = pki.certificates.find(serial);
    if (serial.empty()) return Error(400, "the serial number must be provided");
    if (it == pki.certificates.end()) return Error(400, "certificate with serial " + serial + " not found.");
    if (it->second.is_ca) return Error(400, "adding CA to CRL is not allowed");
    if (!it->second.revoked_at) it->second.revoked_at = now;
    std::erase_if(leases_,
                  [&](const auto& entry) { return entry.second.mount == mount && entry.second.serial == serial; });
    return Ok(json{{"revocation_time", UnixSeconds(*it->second.revoked_at)},
                   {"revocation_time_rfc3339", FormatRfc3339(*it->second.revoked_at)},
                   {"state", "revoked"}});
  }
  return Error(404, "no handler for route \"" + request.path + "\"");
}

ApiReply Backend::PkiRoot(const ApiRequest& request, PkiState& pki, const std::string& kind) {
  TimePoint now = clock_.Now();
  const json& b = request.body;
  std::string cn = b.value("common_name", std::string());
  auto ttl = DurationField(b, "ttl", std::chrono::hours(24 * 365));
  if (!ttl.ok()) return BadRequest(ttl.status());
  std::string key_type = b.value("key_type", std::string("ec"));
  if (kind != "intermediate/set-signed" && kind != "root/sign-intermediate" && key_type != "ec") {
    return Error(400, "key_type \"" + key_type + "\" is not supported by septa-vaultsim (ec is)");
  }
  auto facts_json = [&](const std::string& pem, json extra) -> ApiReply {
    auto facts = ReadCertificate(pem);
    if (!facts.ok()) return Error(500, "internal error");
    extra["serial_number"] = facts->serial;
    extra["expiration"] = UnixSeconds(facts->not_after);
    return Ok(extra);
  };
  auto record = [&](const std::string& pem, bool is_ca) {
    auto facts = ReadCertificate(pem);
    if (facts.ok()) pki.certificates[facts->serial] = IssuedCertificate{pem, facts->not_after, std::nullopt, is_ca};
  };
  if (kind.rfind("root/generate/", 0) == 0) {
    if (cn.empty()) return Error(400, "the 'common_name' field is required");
    http::CertificateRequest req;
    req.common_name = cn;
    req.organizations = StringList(b.value("organization", json(nullptr)));
    req.not_before = now - std::chrono::seconds(30);
    req.not_after = now + *ttl;
    req.is_ca = true;
    auto issued = http::IssueCertificate(req, nullptr);
    if (!issued.ok()) return Error(500, "internal error");
    std::vector<std::string> warnings;
    if (pki.ca) warnings.push_back("this mount had a CA: septa-vaultsim replaced it (Vault 1.11+ would add an issuer)");
    pki.ca = *issued;
    pki.ca_chain = {issued->certificate};
    record(issued->certificate, true);
    json data = {{"certificate", issued->certificate}, {"issuing_ca", issued->certificate}};
    if (kind == "root/generate/exported") {
      data["private_key"] = issued->private_key;
      data["private_key_type"] = "ec";
    }
    ApiReply reply = facts_json(issued->certificate, data);
    if (!warnings.empty()) {
      json body = json::parse(reply.body);
      body["warnings"] = warnings;
      reply.body = body.dump();
    }
    return reply;
  }
  if (kind.rfind("intermediate/generate/", 0) == 0) {
    if (cn.empty()) return Error(400, "the 'common_name' field is required");
    auto csr = MakeCsr(cn);
    if (!csr.ok()) return Error(500, "internal error");
    pki.pending_key_pem = csr->private_key_pem;
    json data = {{"csr", csr->pem}};
    if (kind == "intermediate/generate/exported") {
      data["private_key"] = csr->private_key_pem;
      data["private_key_type"] = "ec";
    }
    return Ok(data);
  }
  if (kind == "root/sign-intermediate") {
    if (!pki.ca) return Error(400, "no CA is configured on this mount");
    auto csr = ReadCsr(b.value("csr", std::string()));
    if (!csr.ok()) return BadRequest(csr.status());
    http::CertificateRequest req;
    req.common_name = cn.empty() ? csr->common_name : cn;
    req.organizations = StringList(b.value("organization", json(nullptr)));
    req.not_before = now - std::chrono::seconds(30);
    req.not_after = now + *ttl;
    req.is_ca = true;
    req.public_key_pem = csr->public_key_pem;
    auto issued = http::IssueCertificate(req, &*pki.ca);
    if (!issued.ok()) return Error(500, "internal error");
    record(issued->certificate, true);
    std::vector<std::string> chain = {issued->certificate};
    chain.insert(chain.end(), pki.ca_chain.begin(), pki.ca_chain.end());
    return facts_json(issued->certificate,
                      {{"certificate", issued->certificate}, {"issuing_ca", pki.ca->certificate}, {"ca_chain", chain}});
  }
  // intermediate/set-signed: the certificate (maybe with its chain) for the pending key.
  if (!pki.pending_key_pem) return Error(400, "no pending intermediate key: call intermediate/generate first");
  std::vector<std::string> chain = SplitPem(b.value("certificate", std::string()));
  if (chain.empty() || !ReadCertificate(chain.front()).ok()) return Error(400, "no certificate found in the input");
  pki.ca = http::KeyPairPem{chain.front(), *pki.pending_key_pem};
  pki.ca_chain = chain;
  pki.pending_key_pem.reset();
  return Ok(json{{"imported_issuers", json::array()}, {"imported_keys", json::array()}});
}

ApiReply Backend::PkiIssue(const ApiRequest& request, const std::string& mount, PkiState& pki, bool sign) {
  const json& b = request.body;
  auto role_it = pki.roles.find(request.segments[2]);
  if (role_it == pki.roles.end()) return Error(400, "unknown role: " + request.segments[2]);
  if (!pki.ca) return Error(400, "no default issuer currently configured");
  const json& role = role_it->second.settings;
  std::string cn = b.value("common_name", std::string());
  std::string public_key;
  if (sign) {
    auto csr = ReadCsr(b.value("csr", std::string()));
    if (!csr.ok()) return BadRequest(csr.status());
    if (cn.empty()) cn = csr->common_name;
    public_key = csr->public_key_pem;
  }
  if (cn.empty())
    return Error(
        400,
        "the common_name field is required, or must be provided in a CSR with \"use_csr_common_name\" set to true");
  if (!NameAllowed(role, cn)) return Error(400, "common name " + cn + " not allowed by this role");
  std::vector<std::string> dns, ips = StringList(b.value("ip_sans", json(nullptr)));
  if (!IsIp(cn) && !BoolField(b, "exclude_cn_from_sans")) dns.push_back(cn);
  for (const auto& alt : StringList(b.value("alt_names", json(nullptr)))) {
    if (!NameAllowed(role, alt)) return Error(400, "subject alternate name " + alt + " not allowed by this role");
    if (std::find(dns.begin(), dns.end(), alt) == dns.end()) dns.push_back(alt);
  }
  if (!ips.empty() && !role.value("allow_ip_sans", true))
    return Error(400, "IP Subject Alternative Names are not allowed in this role");
  if (b.contains("ttl") && b.contains("not_after"))
    return Error(400, "Either ttl or not_after should be provided. Both should not be provided in the same request.");
  const Mount& m = mounts_.at(mount);
  std::chrono::seconds max_ttl(role["max_ttl"].get<std::int64_t>());
  if (max_ttl.count() == 0) max_ttl = m.max_lease_ttl;
  std::chrono::seconds role_ttl(role["ttl"].get<std::int64_t>());
  if (role_ttl.count() == 0) role_ttl = std::min(m.default_lease_ttl, max_ttl);
  auto ttl = DurationField(b, "ttl", role_ttl);
  if (!ttl.ok()) return BadRequest(ttl.status());
  std::vector<std::string> warnings;
  if (*ttl > max_ttl) {
    warnings.push_back("TTL \"" + GoDuration(*ttl) + "\" is longer than permitted maxTTL \"" + GoDuration(max_ttl) +
                       "\", so the certificate's lifetime is capped at maxTTL");
    *ttl = max_ttl;
  }
  TimePoint now = clock_.Now();
  TimePoint not_after = now + *ttl;
  auto ca_facts = ReadCertificate(pki.ca->certificate);
  if (ca_facts.ok() && not_after > ca_facts->not_after) not_after = ca_facts->not_after;  // never outlive the CA

  http::CertificateRequest req;
  req.common_name = cn;
  req.organizations = role["organization"].get<std::vector<std::string>>();  // the role's O: a request cannot choose it
  req.dns_names = dns;
  req.ip_addresses = ips;
  req.not_before = now - std::chrono::seconds(30);
  req.not_after = not_after;
  req.public_key_pem = public_key;
  req.server_auth = role.value("server_flag", true);
  req.client_auth = role.value("client_flag", true);
  auto issued = http::IssueCertificate(req, &*pki.ca);
  if (!issued.ok()) return Error(500, "internal error");
  auto facts = ReadCertificate(issued->certificate);
  if (!facts.ok()) return Error(500, "internal error");
  if (!role.value("no_store", false)) {
    pki.certificates[facts->serial] = IssuedCertificate{issued->certificate, facts->not_after, std::nullopt, false};
  }
  json data = {{"certificate", issued->certificate},
               {"issuing_ca", pki.ca->certificate},
               {"ca_chain", pki.ca_chain},
               {"serial_number", facts->serial},
               {"expiration", UnixSeconds(facts->not_after)}};
  if (!sign) {
    data["private_key"] = issued->private_key;
    data["private_key_type"] = "ec";
  }
  Envelope e;
  e.data = data;
  e.warnings = warnings;
  if (role.value("generate_lease", false)) {
    e.lease_id = mount + "/" + (sign ? "sign/" : "issue/") + request.segments[2] + "/" + RandomId();
    e.lease_duration = std::chrono::duration_cast<std::chrono::seconds>(facts->not_after - now).count();
    leases_[e.lease_id] = Lease{mount, facts->serial, now, facts->not_after, false};
  }
  return Reply(e, RequestId());
}

}  // namespace septa::vaultsim
