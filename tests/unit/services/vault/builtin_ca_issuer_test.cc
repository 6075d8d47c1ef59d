#include "services/vault/builtin_ca_issuer.h"

#include <gtest/gtest.h>
#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <memory>
#include <set>
#include <thread>

#include "services/http/tls.h"
#include "services/vault/sealed_object_store.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_virtual_object_store.h"
#include "tests/support/seeded_random.h"

namespace septa::vault {
namespace {

using namespace std::chrono_literals;

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
using Cert = std::unique_ptr<X509, X509Free>;

Cert Parse(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  Cert cert(PEM_read_bio_X509(bio, nullptr, nullptr, nullptr));
  BIO_free(bio);
  return cert;
}

std::vector<std::string> Entries(X509* cert, int nid) {
  std::vector<std::string> out;
  X509_NAME* name = X509_get_subject_name(cert);
  for (int i = X509_NAME_get_index_by_NID(name, nid, -1); i >= 0; i = X509_NAME_get_index_by_NID(name, nid, i)) {
    ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
    out.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(data)), ASN1_STRING_length(data));
  }
  return out;
}

class BuiltinCaIssuerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ca = http::IssueCertificate({"acme/train-ca", {}, {}, {}, clock_.Now() - 1h, clock_.Now() + 24h * 3650, true},
                                     nullptr);
    ASSERT_TRUE(ca.ok());
    ca_ = *ca;
    ASSERT_TRUE(sealed_.CreateControlPlane({"acme", "train"}, {ca_.certificate, ca_.private_key, 0}).ok());
  }

  ClientCertificateRequest Request(std::chrono::seconds ttl, std::chrono::seconds max_ttl) {
    return {"acme", "train", "alice", {"septa:view"}, "view", ttl, max_ttl};
  }

  FakeClock clock_;
  SeededRandom random_{42};
  KeyRing keys_{*KekFromSecret(std::string(32, 'k')), std::nullopt};
  test::FakeVirtualObjectStore raw_;
  SealedVirtualObjectStore sealed_{raw_, keys_, random_};
  http::KeyPairPem ca_;
  BuiltinCaIssuer issuer_{sealed_, clock_, random_};
};

TEST_F(BuiltinCaIssuerTest, SubjectIsTheUserAndTheGroupsAndNothingElse) {
  auto issued = issuer_.IssueClientCertificate({"acme", "train", "alice", {"septa:edit", "team-a"}, "edit", 1h, 24h});
  ASSERT_TRUE(issued.ok()) << issued.status().message();
  Cert cert = Parse(issued->certificate_pem);
  ASSERT_TRUE(cert);
  EXPECT_EQ(Entries(cert.get(), NID_commonName), std::vector<std::string>{"alice"});
  EXPECT_EQ(Entries(cert.get(), NID_organizationName), (std::vector<std::string>{"septa:edit", "team-a"}));
  EXPECT_EQ(X509_get_key_usage(cert.get()), static_cast<std::uint32_t>(KU_DIGITAL_SIGNATURE));
  EXPECT_EQ(X509_get_extended_key_usage(cert.get()), static_cast<std::uint32_t>(XKU_SSL_CLIENT));
  EXPECT_LT(X509_get_ext_by_NID(cert.get(), NID_subject_alt_name, -1), 0) << "no SANs";
  EXPECT_EQ(X509_check_ca(cert.get()), 0);
  EXPECT_EQ(issued->ca_certificate_pem, ca_.certificate);
}

TEST_F(BuiltinCaIssuerTest, SignedByTheVirtualClustersCaWithAMatchingP256Key) {
  auto issued = issuer_.IssueClientCertificate(Request(1h, 24h));
  ASSERT_TRUE(issued.ok());
  Cert cert = Parse(issued->certificate_pem);
  Cert ca = Parse(ca_.certificate);
  EXPECT_EQ(X509_verify(cert.get(), X509_get0_pubkey(ca.get())), 1);
  BIO* bio = BIO_new_mem_buf(issued->private_key_pem.data(), static_cast<int>(issued->private_key_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(X509_check_private_key(cert.get(), key), 1);
  char curve[32] = {};
  EVP_PKEY_get_utf8_string_param(key, "group", curve, sizeof curve, nullptr);
  EXPECT_STREQ(curve, "prime256v1");
  EVP_PKEY_free(key);
  // The CA's key was read through the sealed store: the row holds it wrapped.
  EXPECT_TRUE(IsWrapped((*raw_.GetControlPlane({"acme", "train"}))->ca_private_key));
}

TEST_F(BuiltinCaIssuerTest, LifetimeIsTheRequestedTtlCappedByTheTier) {
  // The default tiers' credential_ttl_max (migrations/0001_init.sql) and a 2 s test tier.
  for (auto max_ttl : {std::chrono::seconds(24h), std::chrono::seconds(8h), std::chrono::seconds(1h),
                       std::chrono::seconds(15min), std::chrono::seconds(2)}) {
    for (auto ttl : {std::chrono::seconds(1), std::chrono::seconds(30min), std::chrono::seconds(24h * 365)}) {
      auto issued = issuer_.IssueClientCertificate(Request(ttl, max_ttl));
      ASSERT_TRUE(issued.ok());
      const auto expected = std::min(ttl, max_ttl);
      EXPECT_EQ(issued->not_after - issued->not_before, expected);
      EXPECT_EQ(issued->ttl_capped, ttl > max_ttl);
      EXPECT_EQ(issued->not_before, std::chrono::time_point_cast<std::chrono::seconds>(clock_.Now()));
      Cert cert = Parse(issued->certificate_pem);
      int days = 0, seconds = 0;
      ASSERT_EQ(ASN1_TIME_diff(&days, &seconds, X509_get0_notBefore(cert.get()), X509_get0_notAfter(cert.get())), 1);
      EXPECT_EQ(days * 86400LL + seconds, expected.count());
      ASSERT_EQ(
          ASN1_TIME_cmp_time_t(X509_get0_notBefore(cert.get()), std::chrono::system_clock::to_time_t(clock_.Now())), 0)
          << "validity starts at the injected clock's now";
    }
  }
}

TEST_F(BuiltinCaIssuerTest, SerialsAre127RandomBitsFromTheInjectedSource) {
  std::set<std::string> serials;
  for (int i = 0; i < 50; ++i) {
    auto issued = issuer_.IssueClientCertificate(Request(1h, 1h));
    ASSERT_TRUE(issued.ok());
    EXPECT_EQ(issued->serial.size(), 32u);
    EXPECT_EQ(issued->serial.find_first_not_of("0123456789abcdef"), std::string::npos);
    Cert cert = Parse(issued->certificate_pem);
    BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert.get()), nullptr);
    EXPECT_EQ(BN_num_bits(bn), 127);
    BN_free(bn);
    serials.insert(issued->serial);
  }
  EXPECT_EQ(serials.size(), 50u);
  // Same seed, same serials: the serial comes from the RandomSource, not elsewhere.
  SeededRandom a(7), b(7);
  auto first = BuiltinCaIssuer(sealed_, clock_, a).IssueClientCertificate(Request(1h, 1h));
  auto second = BuiltinCaIssuer(sealed_, clock_, b).IssueClientCertificate(Request(1h, 1h));
  EXPECT_EQ(first->serial, second->serial);
}

TEST_F(BuiltinCaIssuerTest, ExhaustedRandomnessIsAnErrorNotAWeakSerial) {
  ExhaustedRandom none;
  auto issued = BuiltinCaIssuer(sealed_, clock_, none).IssueClientCertificate(Request(1h, 1h));
  ASSERT_FALSE(issued.ok());
  EXPECT_EQ(issued.status().code(), Code::kUnavailable);
}

TEST_F(BuiltinCaIssuerTest, AVirtualClusterWithoutAControlPlaneIsNotFound) {
  auto issued = issuer_.IssueClientCertificate({"acme", "other", "alice", {"septa:view"}, "view", 1h, 1h});
  ASSERT_FALSE(issued.ok());
  EXPECT_EQ(issued.status().code(), Code::kNotFound);
}

TEST_F(BuiltinCaIssuerTest, AVirtualClusterCreatedAgainIsSignedByItsNewCa) {
  ASSERT_TRUE(issuer_.IssueClientCertificate(Request(1h, 1h)).ok());  // the first CA, now decoded and kept
  ASSERT_TRUE(sealed_.RemoveControlPlane({"acme", "train"}).ok());
  auto ca = http::IssueCertificate({"acme/train-ca", {}, {}, {}, clock_.Now() - 1h, clock_.Now() + 24h * 3650, true},
                                   nullptr);
  ASSERT_TRUE(ca.ok());
  ASSERT_TRUE(sealed_.CreateControlPlane({"acme", "train"}, {ca->certificate, ca->private_key, 0}).ok());

  auto issued = issuer_.IssueClientCertificate(Request(1h, 1h));
  ASSERT_TRUE(issued.ok());
  EXPECT_EQ(issued->ca_certificate_pem, ca->certificate);
  Cert cert = Parse(issued->certificate_pem);
  EXPECT_EQ(X509_verify(cert.get(), X509_get0_pubkey(Parse(ca->certificate).get())), 1) << "the new CA signed";
  EXPECT_NE(X509_verify(cert.get(), X509_get0_pubkey(Parse(ca_.certificate).get())), 1) << "not the old one";
}

TEST_F(BuiltinCaIssuerTest, ThreadsIssueAtOnceFromOneVirtualClustersCa) {
  // One decoded CA shared by every thread (under ThreadSanitizer in CI).
  constexpr int kThreads = 4, kEach = 10;
  std::vector<std::vector<std::string>> pems(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        auto issued = issuer_.IssueClientCertificate(Request(1h, 1h));
        pems[t].push_back(issued.ok() ? issued->certificate_pem : "");
      }
    });
  }
  for (auto& thread : threads) thread.join();
  Cert ca = Parse(ca_.certificate);
  for (const auto& each : pems) {
    for (const auto& pem : each) {
      Cert cert = Parse(pem);
      ASSERT_TRUE(cert);
      EXPECT_EQ(X509_verify(cert.get(), X509_get0_pubkey(ca.get())), 1);
    }
  }
}

}  // namespace
}  // namespace septa::vault
