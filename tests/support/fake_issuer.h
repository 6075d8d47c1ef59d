// vault::Issuer in memory for the use cases' unit tests: records each
// request, answers with a certificate whose validity follows the request
// (from the injected clock, capped at max_ttl), and runs `on_issue` (if set)
// before answering, e.g. to make the store fail next.
#pragma once

#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

#include "common/clock.h"
#include "services/vault/issuer.h"

namespace septa::test {

class FakeIssuer final : public vault::Issuer {
 public:
  explicit FakeIssuer(const Clock& clock) : clock_(clock) {}

  Result<vault::ClientCertificate> IssueClientCertificate(const vault::ClientCertificateRequest& request) override {
    requests.push_back(request);
    if (on_issue) on_issue();
    if (!failure.ok()) return failure;
    vault::ClientCertificate c;
    c.certificate_pem = "-----BEGIN CERTIFICATE-----\nfake " + request.user + "\n-----END CERTIFICATE-----\n";
    c.private_key_pem = "-----BEGIN PRIVATE KEY-----\nfake-key\n-----END PRIVATE KEY-----\n";
    c.ca_certificate_pem = "vcluster CA";
    char serial[33];
    std::snprintf(serial, sizeof serial, "%032x", static_cast<unsigned>(requests.size()));
    c.serial = serial;
    c.not_before = clock_.Now();
    c.not_after = c.not_before + std::min(request.ttl, request.max_ttl);
    c.ttl_capped = request.ttl > request.max_ttl;
    return c;
  }

  std::vector<vault::ClientCertificateRequest> requests;
  std::function<void()> on_issue;
  Status failure;

 private:
  const Clock& clock_;
};

}  // namespace septa::test
