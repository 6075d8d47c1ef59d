// Encryption at rest of the virtual clusters' CA keys, checked where it
// matters: every column of every table of a migrated database, read as text
// (bytea as hex), must hold neither a CA key's PEM nor its DER (base64 or
// hex), after creation through the sealed store, after the start-time pass
// over rows written in clear, and after a KEK rotation.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <pqxx/pqxx>

#include "services/base/base64.h"
#include "services/http/tls.h"
#include "services/store/pg_virtual_object_store.h"
#include "services/vault/sealed_object_store.h"
#include "tests/support/seeded_random.h"
#include "tests/support/test_database.h"

namespace septa::vault {
namespace {

using namespace std::chrono_literals;

// The forms a leaked key could take in a row's text.
std::vector<std::string> Forms(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  unsigned char* der = nullptr;
  const int n = i2d_PrivateKey(key, &der);
  std::string der_bytes(reinterpret_cast<char*>(der), static_cast<std::size_t>(n));
  OPENSSL_free(der);
  EVP_PKEY_free(key);
  std::string hex;
  static constexpr char kDigits[] = "0123456789abcdef";
  for (unsigned char c : der_bytes) {
    hex += kDigits[c >> 4];
    hex += kDigits[c & 15];
  }
  // The PEM's first base64 line: any PEM or base64 of the key starts with it.
  const std::size_t body = pem.find('\n') + 1;
  return {pem, pem.substr(body, 40), base::Base64Encode(der_bytes).substr(0, 40), hex.substr(0, 40)};
}

// Every table of the database, every row as text; a leaked form is named.
void ExpectNowhere(const std::string& url, const std::vector<std::vector<std::string>>& keys) {
  pqxx::connection c(url);
  pqxx::nontransaction tx(c);
  int tables = 0;
  for (const auto& table :
       tx.exec("SELECT quote_ident(table_name) FROM information_schema.tables WHERE table_schema = 'public' AND "
               "table_type = 'BASE TABLE'")) {
    ++tables;
    const std::string name = table[0].as<std::string>();
    for (const auto& row : tx.exec("SELECT t::text FROM " + name + " t")) {
      const std::string text = row[0].is_null() ? "" : row[0].as<std::string>();
      for (const auto& forms : keys) {
        for (const auto& form : forms) EXPECT_EQ(text.find(form), std::string::npos) << "a CA key in " << name;
      }
    }
  }
  EXPECT_GT(tables, 10) << "the migrated schema's tables were scanned";
}

KeyEncryptionKey Kek(char fill) { return *KekFromSecret(std::string(32, fill)); }

TEST(CaKeysAtRestPgTest, NoColumnHoldsACaKeyAndRotationRewrapsThemAll) {
  auto db = test::TestDatabase::CreateMigrated();
  ASSERT_TRUE(db.ok()) << db.status().message();
  store::PgVirtualObjectStore raw({.database_url = (*db)->url()});
  SeededRandom random(11);
  KeyRing first(Kek('a'), std::nullopt);
  SealedVirtualObjectStore sealed(raw, first, random);

  std::vector<std::vector<std::string>> forms;
  std::vector<std::pair<core::VirtualClusterKey, std::string>> keys;
  const auto now = std::chrono::system_clock::now();
  for (const char* vcluster : {"train", "serve", "eval"}) {
    auto ca = http::IssueCertificate({vcluster, {}, {}, {}, now - 1h, now + 1h, true}, nullptr);
    ASSERT_TRUE(ca.ok());
    const core::VirtualClusterKey key{"acme", vcluster};
    // "eval" is a row from before encryption at rest: written in clear.
    auto& writer = std::string(vcluster) == "eval" ? static_cast<core::VirtualObjectStore&>(raw) : sealed;
    ASSERT_TRUE(writer.CreateControlPlane(key, {ca->certificate, ca->private_key, 0}).ok());
    forms.push_back(Forms(ca->private_key));
    keys.emplace_back(key, ca->private_key);
  }
  auto listener = http::IssueCertificate({"listener", {}, {}, {}, now - 1h, now + 1h, true}, nullptr);
  ASSERT_TRUE(sealed.ListenerCa({listener->certificate, listener->private_key}).ok());
  forms.push_back(Forms(listener->private_key));

  // The scan finds a key in clear: the test can fail.
  {
    pqxx::connection c((*db)->url());
    pqxx::nontransaction tx(c);
    auto row = tx.exec("SELECT t::text FROM virtual_control_planes t WHERE vcluster = 'eval'");
    EXPECT_NE(row[0][0].as<std::string>().find(forms[2][1]), std::string::npos);
  }

  auto pass = RewrapStoredKeys(raw, first, random);
  ASSERT_TRUE(pass.ok()) << pass.status().message();
  EXPECT_EQ(pass->rewrapped, 1);
  EXPECT_EQ(pass->current, 3) << "two virtual clusters and the listener were created sealed";
  ExpectNowhere((*db)->url(), forms);

  KeyRing rotated(Kek('b'), Kek('a'));
  auto rotation = RewrapStoredKeys(raw, rotated, random);
  ASSERT_TRUE(rotation.ok()) << rotation.status().message();
  EXPECT_EQ(rotation->rewrapped, 4) << "three virtual clusters' CAs and the listener's";
  ExpectNowhere((*db)->url(), forms);
  KeyRing only_new(Kek('b'), std::nullopt);
  SealedVirtualObjectStore after(raw, only_new, random);
  for (const auto& [key, pem] : keys) {
    auto stored = raw.GetControlPlane(key);
    EXPECT_TRUE(only_new.IsCurrent((*stored)->ca_private_key)) << key.vcluster;
    EXPECT_EQ((*after.GetControlPlane(key))->ca_private_key, pem) << key.vcluster;
  }
  EXPECT_TRUE(only_new.IsCurrent((*raw.StoredListenerCa())->ca_private_key));
  EXPECT_EQ((*after.StoredListenerCa())->ca_private_key, listener->private_key);
}

}  // namespace
}  // namespace septa::vault
