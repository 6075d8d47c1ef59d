#include "services/vault/key_encryption.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "services/base/base64.h"
#include "tests/support/seeded_random.h"
#include "tests/unit/services/vault/test_kek.h"

namespace septa::vault {
namespace {

namespace fs = std::filesystem;

using testing::Kek;

TEST(KeyEncryptionTest, WrapsAndUnwrapsUnderTheCurrentKek) {
  SeededRandom random(1);
  KeyRing ring(Kek('a'), std::nullopt);
  auto wrapped = ring.Wrap("-----BEGIN PRIVATE KEY-----\nsecret\n", "vc acme/train", random);
  ASSERT_TRUE(wrapped.ok()) << wrapped.status().message();
  EXPECT_TRUE(IsWrapped(*wrapped));
  EXPECT_TRUE(ring.IsCurrent(*wrapped));
  EXPECT_EQ(wrapped->find("secret"), std::string::npos);
  EXPECT_EQ(wrapped->rfind("kek1:" + Kek('a').id + ":", 0), 0u);
  auto plain = ring.Unwrap(*wrapped, "vc acme/train");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(*plain, "-----BEGIN PRIVATE KEY-----\nsecret\n");
}

TEST(KeyEncryptionTest, EachWrapUsesAFreshNonce) {
  SeededRandom random(2);
  KeyRing ring(Kek('a'), std::nullopt);
  EXPECT_NE(*ring.Wrap("same", "aad", random), *ring.Wrap("same", "aad", random));
}

TEST(KeyEncryptionTest, AnotherRowsAadDoesNotAuthenticate) {
  SeededRandom random(3);
  KeyRing ring(Kek('a'), std::nullopt);
  auto wrapped = ring.Wrap("key", "vc acme/train", random);
  auto moved = ring.Unwrap(*wrapped, "vc acme/other");
  ASSERT_FALSE(moved.ok());
  EXPECT_EQ(moved.status().code(), Code::kDataLoss);
  EXPECT_NE(moved.status().message().find("moved from another row"), std::string::npos);
}

TEST(KeyEncryptionTest, ATamperedCiphertextDoesNotAuthenticate) {
  SeededRandom random(4);
  KeyRing ring(Kek('a'), std::nullopt);
  std::string wrapped = *ring.Wrap("a CA key of some length", "aad", random);
  const std::size_t colon = wrapped.rfind(':');
  std::string sealed = *base::Base64Decode(wrapped.substr(colon + 1));
  sealed[sealed.size() / 2] ^= 1;
  auto tampered = ring.Unwrap(wrapped.substr(0, colon + 1) + base::Base64Encode(sealed), "aad");
  ASSERT_FALSE(tampered.ok());
  EXPECT_EQ(tampered.status().code(), Code::kDataLoss);
}

TEST(KeyEncryptionTest, RotationReadsThePreviousKekAndWrapsUnderTheNew) {
  SeededRandom random(5);
  KeyRing old_ring(Kek('a'), std::nullopt);
  const std::string old_wrapped = *old_ring.Wrap("key", "aad", random);
  KeyRing rotated(Kek('b'), Kek('a'));
  EXPECT_FALSE(rotated.IsCurrent(old_wrapped));
  EXPECT_EQ(*rotated.Unwrap(old_wrapped, "aad"), "key");
  const std::string new_wrapped = *rotated.Wrap("key", "aad", random);
  EXPECT_TRUE(rotated.IsCurrent(new_wrapped));
  // Without the previous KEK the old wrapping names a KEK nobody has.
  KeyRing only_new(Kek('b'), std::nullopt);
  auto lost = only_new.Unwrap(old_wrapped, "aad");
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(lost.status().message().find(Kek('a').id), std::string::npos);
  EXPECT_FALSE(old_ring.Unwrap(new_wrapped, "aad").ok());
}

TEST(KeyEncryptionTest, AKekHasThirtyTwoBytes) {
  EXPECT_FALSE(KekFromSecret(std::string(16, 'x')).ok());
  EXPECT_NE(Kek('a').id, Kek('b').id);
  EXPECT_EQ(Kek('a').id.size(), 16u);
}

class KekFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("septa-kek-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  SeededRandom random_{6};
};

TEST_F(KekFileTest, CreatedOnFirstStartWithMode0600AndReadAfterwards) {
  const fs::path path = dir_ / "kek";
  auto created = LoadKek("kek_file", path, random_, true);
  ASSERT_TRUE(created.ok()) << created.status().message();
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = LoadKek("kek_file", path, random_, true);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->id, created->id);
  EXPECT_EQ(again->secret, created->secret);
}

TEST_F(KekFileTest, AMissingPreviousFileIsAnErrorNamingTheKey) {
  auto missing = LoadKek("kek_previous_file", dir_ / "absent", random_, false);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("kek_previous_file"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "absent"));
}

TEST_F(KekFileTest, AFileOthersCanReadOrItsGroupWriteIsRefused) {
  const fs::path path = dir_ / "kek";
  ASSERT_TRUE(LoadKek("kek_file", path, random_, true).ok());
  for (const fs::perms extra : {fs::perms::others_read, fs::perms::group_write, fs::perms::group_exec}) {
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | extra, fs::perm_options::replace);
    auto refused = LoadKek("kek_file", path, random_, true);
    ASSERT_FALSE(refused.ok()) << static_cast<int>(extra);
    EXPECT_EQ(refused.status().code(), Code::kFailedPrecondition);
    EXPECT_NE(refused.status().message().find("chmod 0600"), std::string::npos);
  }
}

// A Secret volume under fsGroup: 0440, the group the process runs in.
TEST_F(KekFileTest, ItsOwnGroupMayReadItAsTheKubeletMountsSecrets) {
  const fs::path path = dir_ / "kek";
  ASSERT_TRUE(LoadKek("kek_file", path, random_, true).ok());
  fs::permissions(path, fs::perms::owner_read | fs::perms::group_read, fs::perm_options::replace);
  auto read = LoadKek("kek_file", path, random_, false);
  EXPECT_TRUE(read.ok()) << read.status().ToString();
}

TEST_F(KekFileTest, AnotherGroupMayNotReadIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving the file another group needs root";
  const fs::path path = dir_ / "kek";
  ASSERT_TRUE(LoadKek("kek_file", path, random_, true).ok());
  ASSERT_EQ(::chown(path.c_str(), static_cast<uid_t>(-1), ::getegid() + 1), 0) << std::strerror(errno);
  fs::permissions(path, fs::perms::owner_read | fs::perms::group_read, fs::perm_options::replace);
  auto refused = LoadKek("kek_file", path, random_, false);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kFailedPrecondition);
}

TEST_F(KekFileTest, AFileOfTheWrongLengthIsRefused) {
  const fs::path path = dir_ / "kek";
  { std::ofstream(path) << base::Base64Encode("short") << "\n"; }
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  auto refused = LoadKek("kek_file", path, random_, false);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("32 bytes"), std::string::npos);
}

}  // namespace
}  // namespace septa::vault
