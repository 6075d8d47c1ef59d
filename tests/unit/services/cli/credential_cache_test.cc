// The exec plugin's certificate cache: when a certificate is reused and
// when renewed (an injected clock), the files' modes, files that are not
// used (corrupt, another key's, readable by others, a symbolic link), and
// concurrent runs.
#include "services/cli/credential_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/support/fake_clock.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/services/cli/test_certificate.h"

namespace septa::cli {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

const CredentialKey kAcmeTrainEdit{"127.0.0.1:9090", "acme", "train", "edit"};
constexpr std::chrono::milliseconds kCacheLockWait{10'000};

// A certificate valid from `from` for `lifetime`, with `serial`.
ClientCertificate CertificateFor(TimePoint from, seconds lifetime, const std::string& serial = "01") {
  const test::TestKeyPair pair = test::MakeTestCertificate(from, from + lifetime);
  auto read = ReadClientCertificate(pair.certificate_pem, pair.private_key_pem);
  EXPECT_TRUE(read.ok()) << read.status().ToString();
  ClientCertificate certificate = read.ok() ? *read : ClientCertificate{};
  certificate.serial = serial;
  return certificate;
}

mode_t ModeOf(const std::filesystem::path& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

std::string FileText(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// An issuer that counts its calls and hands out certificates valid from
// the clock's now for `lifetime`, serials "1", "2", ...
class CountingIssuer {
 public:
  CountingIssuer(const Clock& clock, seconds lifetime) : clock_(clock), lifetime_(lifetime) {}
  std::function<Result<ClientCertificate>()> Function() {
    return [this]() -> Result<ClientCertificate> {
      const int n = ++calls_;
      return CertificateFor(clock_.Now(), lifetime_, std::to_string(n));
    };
  }
  int calls() const { return calls_; }

 private:
  const Clock& clock_;
  seconds lifetime_;
  std::atomic<int> calls_{0};
};

class CredentialCacheTest : public testing::Test {
 protected:
  std::filesystem::path Directory() const { return std::filesystem::path(tmp_.path()) / "cache/septa/credentials"; }

  Result<Obtained> Obtain(CountingIssuer& issuer, std::string* notes_out = nullptr) {
    std::string notes;
    auto obtained = ObtainCertificate(&cache_, kAcmeTrainEdit, clock_, kCacheLockWait, issuer.Function(), notes);
    if (notes_out) *notes_out = notes;
    return obtained;
  }

  test::TempDir tmp_;
  FakeClock clock_;
  CredentialCache cache_{std::filesystem::path(tmp_.path()) / "cache/septa/credentials"};
};

TEST(CredentialRenewal, MarginIsAtLeastThirtySecondsOrATenthOfTheLifetime) {
  const TimePoint t0 = TimePoint(seconds(1'800'000'000));
  EXPECT_EQ(RenewalMargin(CertificateFor(t0, hours(1))), seconds(360));
  EXPECT_EQ(RenewalMargin(CertificateFor(t0, minutes(10))), seconds(60));
  EXPECT_EQ(RenewalMargin(CertificateFor(t0, seconds(300))), seconds(30));
  EXPECT_EQ(RenewalMargin(CertificateFor(t0, seconds(60))), seconds(30));
  EXPECT_EQ(RenewalMargin(CertificateFor(t0, seconds(5))), seconds(30));
}

TEST(CredentialRenewal, ReusedUntilWithinTheMarginOfExpiry) {
  const TimePoint t0 = TimePoint(seconds(1'800'000'000));
  const ClientCertificate hour = CertificateFor(t0, hours(1));
  EXPECT_FALSE(NeedsRenewal(hour, t0));
  EXPECT_FALSE(NeedsRenewal(hour, t0 + minutes(53)));
  EXPECT_FALSE(NeedsRenewal(hour, t0 + hours(1) - seconds(361)));
  EXPECT_TRUE(NeedsRenewal(hour, t0 + hours(1) - seconds(360)));
  EXPECT_TRUE(NeedsRenewal(hour, t0 + hours(2)));
  const ClientCertificate minute = CertificateFor(t0, seconds(60));
  EXPECT_FALSE(NeedsRenewal(minute, t0 + seconds(29)));
  EXPECT_TRUE(NeedsRenewal(minute, t0 + seconds(30)));
  // A lifetime within the margin is renewed at every run.
  EXPECT_TRUE(NeedsRenewal(CertificateFor(t0, seconds(20)), t0));
}

TEST(CredentialRenewal, TheCertificateItselfGivesTheValidity) {
  const TimePoint t0 = TimePoint(seconds(1'800'000'000));
  const test::TestKeyPair pair = test::MakeTestCertificate(t0, t0 + minutes(15));
  auto read = ReadClientCertificate(pair.certificate_pem, pair.private_key_pem);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->not_before, t0);
  EXPECT_EQ(read->not_after, t0 + minutes(15));
  const test::TestKeyPair other = test::MakeTestCertificate(t0, t0 + minutes(15));
  EXPECT_EQ(ReadClientCertificate(pair.certificate_pem, other.private_key_pem).status().message(),
            "the client key is not the certificate's key");
  EXPECT_FALSE(ReadClientCertificate("not a certificate", pair.private_key_pem).ok());
  EXPECT_FALSE(ReadClientCertificate(pair.certificate_pem, "").ok());
}

TEST(CredentialCacheDirectoryTest, XdgCacheHomeElseHomeDotCache) {
  EXPECT_EQ(CredentialCacheDirectory(std::string("/x/cache"), "/home/a"), "/x/cache/septa/credentials");
  // The XDG rule: a relative $XDG_CACHE_HOME is ignored.
  EXPECT_EQ(CredentialCacheDirectory(std::string("rel/cache"), "/home/a"), "/home/a/.cache/septa/credentials");
  EXPECT_EQ(CredentialCacheDirectory(std::string(""), "/home/a"), "/home/a/.cache/septa/credentials");
  EXPECT_EQ(CredentialCacheDirectory(std::nullopt, "/home/a"), "/home/a/.cache/septa/credentials");
  EXPECT_EQ(CredentialCacheDirectory(std::nullopt, ""), std::nullopt);
}

TEST_F(CredentialCacheTest, OneFilePerServerTenantVclusterAndRole) {
  EXPECT_EQ(cache_.PathOf(kAcmeTrainEdit).filename(), "acme_train_edit@127.0.0.1_9090.json");
  EXPECT_EQ(cache_.PathOf({"septa.example.com:443", "acme", "train", "view"}).filename(),
            "acme_train_view@septa.example.com_443.json");
  // Nothing a caller types leaves the directory.
  EXPECT_EQ(cache_.PathOf({"h/../..", "../etc", "a/b", ".x"}).parent_path(), Directory());
}

TEST_F(CredentialCacheTest, StoredPrivatelyAndReadBack) {
  const ClientCertificate certificate = CertificateFor(clock_.Now(), hours(1), "abc123");
  ASSERT_TRUE(cache_.Store(kAcmeTrainEdit, certificate).ok());
  EXPECT_EQ(ModeOf(Directory()), 0700u);
  EXPECT_EQ(ModeOf(Directory().parent_path()), 0700u);                // septa/
  EXPECT_EQ(ModeOf(Directory().parent_path().parent_path()), 0700u);  // the cache home it made
  EXPECT_EQ(ModeOf(cache_.PathOf(kAcmeTrainEdit)), 0600u);
  const CredentialCache::Loaded loaded = cache_.Load(kAcmeTrainEdit);
  EXPECT_EQ(loaded.ignored, "");
  ASSERT_TRUE(loaded.certificate.has_value());
  EXPECT_EQ(loaded.certificate->serial, "abc123");
  EXPECT_EQ(loaded.certificate->certificate_pem, certificate.certificate_pem);
  EXPECT_EQ(loaded.certificate->private_key_pem, certificate.private_key_pem);
  EXPECT_EQ(loaded.certificate->not_after, certificate.not_after);
  // Only the entry is there: no temporary file is left behind.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(Directory())) {
    ++files;
    EXPECT_EQ(entry.path(), cache_.PathOf(kAcmeTrainEdit));
  }
  EXPECT_EQ(files, 1);
}

TEST_F(CredentialCacheTest, LooseDirectoriesOfOursAreTightened) {
  std::filesystem::create_directories(Directory());
  ::chmod(Directory().c_str(), 0755);
  ::chmod(Directory().parent_path().c_str(), 0775);
  ASSERT_TRUE(cache_.Store(kAcmeTrainEdit, CertificateFor(clock_.Now(), hours(1))).ok());
  EXPECT_EQ(ModeOf(Directory()), 0700u);
  EXPECT_EQ(ModeOf(Directory().parent_path()), 0700u);
}

TEST_F(CredentialCacheTest, FirstRunIssuesThenReusesUntilTheMarginThenRenews) {
  CountingIssuer issuer(clock_, hours(1));
  auto first = Obtain(issuer);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(first->issued);
  EXPECT_EQ(first->certificate.serial, "1");
  const std::string stored = FileText(cache_.PathOf(kAcmeTrainEdit));

  clock_.Advance(minutes(50));  // 10 minutes left, more than the 6-minute margin
  auto second = Obtain(issuer);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->issued);
  EXPECT_EQ(second->certificate.serial, "1");
  EXPECT_EQ(issuer.calls(), 1);
  EXPECT_EQ(FileText(cache_.PathOf(kAcmeTrainEdit)), stored);  // a reuse writes nothing

  clock_.Advance(minutes(4) + seconds(1));  // 5:59 left: within the margin
  auto third = Obtain(issuer);
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE(third->issued);
  EXPECT_EQ(third->certificate.serial, "2");
  EXPECT_EQ(issuer.calls(), 2);
  EXPECT_NE(FileText(cache_.PathOf(kAcmeTrainEdit)), stored);
  EXPECT_EQ(cache_.Load(kAcmeTrainEdit).certificate->serial, "2");

  clock_.Advance(minutes(1));
  auto fourth = Obtain(issuer);
  ASSERT_TRUE(fourth.ok());
  EXPECT_FALSE(fourth->issued);
  EXPECT_EQ(fourth->certificate.serial, "2");
}

TEST_F(CredentialCacheTest, AnExpiredCertificateIsRenewed) {
  CountingIssuer issuer(clock_, minutes(5));
  ASSERT_TRUE(Obtain(issuer).ok());
  clock_.Advance(hours(3));
  auto renewed = Obtain(issuer);
  ASSERT_TRUE(renewed.ok());
  EXPECT_TRUE(renewed->issued);
  EXPECT_GT(renewed->certificate.not_after, clock_.Now());
}

TEST_F(CredentialCacheTest, AFailedIssueKeepsTheOldEntryAndSaysWhy) {
  CountingIssuer issuer(clock_, minutes(5));
  ASSERT_TRUE(Obtain(issuer).ok());
  const std::string stored = FileText(cache_.PathOf(kAcmeTrainEdit));
  clock_.Advance(minutes(5));
  std::string notes;
  auto failed = ObtainCertificate(
      &cache_, kAcmeTrainEdit, clock_, kCacheLockWait,
      []() -> Result<ClientCertificate> { return Unauthenticated("the token was revoked"); }, notes);
  EXPECT_EQ(failed.status().code(), Code::kUnauthenticated);
  EXPECT_EQ(FileText(cache_.PathOf(kAcmeTrainEdit)), stored);
}

// What was written at the entry's path is not used, a note says why, and a
// new certificate replaces it.
class IgnoredCacheFile : public CredentialCacheTest {
 protected:
  void ExpectReplaced(const std::string& why) {
    CountingIssuer issuer(clock_, hours(1));
    std::string notes;
    auto obtained = Obtain(issuer, &notes);
    ASSERT_TRUE(obtained.ok()) << obtained.status().ToString();
    EXPECT_TRUE(obtained->issued);
    EXPECT_NE(notes.find("septactl: note: ignoring the cached credential " + cache_.PathOf(kAcmeTrainEdit).string()),
              std::string::npos)
        << notes;
    EXPECT_NE(notes.find(why), std::string::npos) << notes;
    const CredentialCache::Loaded loaded = cache_.Load(kAcmeTrainEdit);
    EXPECT_EQ(loaded.ignored, "");
    ASSERT_TRUE(loaded.certificate.has_value());
    EXPECT_EQ(loaded.certificate->serial, "1");
    EXPECT_EQ(ModeOf(cache_.PathOf(kAcmeTrainEdit)), 0600u);
    // The next run reuses the replacement without a note.
    auto again = Obtain(issuer, &notes);
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(again->issued);
    EXPECT_EQ(notes, "");
  }
  void WriteEntry(const std::string& text, mode_t mode = 0600) {
    std::filesystem::create_directories(Directory());
    const auto path = cache_.PathOf(kAcmeTrainEdit);
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
  }
};

TEST_F(IgnoredCacheFile, NotJson) {
  WriteEntry("{\"version\": 1, \"certif");
  ExpectReplaced("not a septactl credential cache file");
}

TEST_F(IgnoredCacheFile, FieldsOfOtherTypes) {
  WriteEntry(R"({"version": "1", "server": 7, "certificate": ["x"]})");
  ExpectReplaced("not a septactl credential cache file");
  WriteEntry(R"({"version": 1, "server": 7, "tenant": null, "certificate": ["x"], "private_key": {}})");
  CountingIssuer issuer(clock_, hours(1));
  std::string notes;
  ASSERT_TRUE(Obtain(issuer, &notes).ok());
  EXPECT_NE(notes.find("another server, tenant, virtual cluster or role"), std::string::npos) << notes;
}

TEST_F(IgnoredCacheFile, Empty) {
  WriteEntry("");
  ExpectReplaced("not a septactl credential cache file");
}

TEST_F(IgnoredCacheFile, AnotherKeys) {
  // Servers "h:1" and "h_1" share a file name; the file says whose it is.
  const CredentialKey other{"127.0.0.1_9090", "acme", "train", "edit"};
  ASSERT_EQ(cache_.PathOf(other), cache_.PathOf(kAcmeTrainEdit));
  ASSERT_TRUE(cache_.Store(other, CertificateFor(clock_.Now(), hours(1), "other")).ok());
  ExpectReplaced("another server, tenant, virtual cluster or role");
}

TEST_F(IgnoredCacheFile, ACertificateThatIsNotTheKeys) {
  ASSERT_TRUE(cache_.Store(kAcmeTrainEdit, CertificateFor(clock_.Now(), hours(1))).ok());
  const std::string text = FileText(cache_.PathOf(kAcmeTrainEdit));
  const std::string key_of_another = CertificateFor(clock_.Now(), hours(1)).private_key_pem;
  nlohmann::json entry = nlohmann::json::parse(text);
  entry["private_key"] = key_of_another;
  WriteEntry(entry.dump());
  ExpectReplaced("the client key is not the certificate's key");
}

TEST_F(IgnoredCacheFile, ReadableByOthers) {
  ASSERT_TRUE(cache_.Store(kAcmeTrainEdit, CertificateFor(clock_.Now(), hours(1), "loose")).ok());
  ::chmod(cache_.PathOf(kAcmeTrainEdit).c_str(), 0644);
  ExpectReplaced("others may read or write it (mode 0644, not 0600)");
}

TEST_F(IgnoredCacheFile, ASymbolicLink) {
  std::filesystem::create_directories(Directory());
  const std::string target = tmp_.Write("elsewhere.json", "keep me");
  std::filesystem::create_symlink(target, cache_.PathOf(kAcmeTrainEdit));
  ExpectReplaced("it is a symbolic link");
  EXPECT_EQ(FileText(target), "keep me");  // replaced the link, not what it pointed at
  EXPECT_FALSE(std::filesystem::is_symlink(cache_.PathOf(kAcmeTrainEdit)));
}

TEST_F(IgnoredCacheFile, ADirectory) {
  std::filesystem::create_directories(cache_.PathOf(kAcmeTrainEdit));
  CountingIssuer issuer(clock_, hours(1));
  std::string notes;
  auto obtained = Obtain(issuer, &notes);
  // The certificate is handed out; the note says it could not be cached.
  ASSERT_TRUE(obtained.ok());
  EXPECT_TRUE(obtained->issued);
  EXPECT_NE(notes.find("it is not a regular file"), std::string::npos) << notes;
  EXPECT_NE(notes.find("septactl: note: the certificate was not cached"), std::string::npos) << notes;
}

TEST_F(CredentialCacheTest, ConcurrentRunsIssueOneCertificateBetweenThem) {
  CountingIssuer issuer(clock_, hours(1));
  constexpr int kRuns = 8;
  std::vector<std::string> serials(kRuns);
  {
    std::vector<std::jthread> runs;
    for (int i = 0; i < kRuns; ++i) {
      runs.emplace_back([&, i] {
        std::string notes;
        auto obtained = ObtainCertificate(&cache_, kAcmeTrainEdit, clock_, kCacheLockWait, issuer.Function(), notes);
        serials[i] = obtained.ok() ? obtained->certificate.serial : obtained.status().ToString();
      });
    }
  }
  EXPECT_EQ(issuer.calls(), 1);
  for (const std::string& serial : serials) EXPECT_EQ(serial, "1");
  EXPECT_TRUE(cache_.Load(kAcmeTrainEdit).certificate.has_value());
}

TEST_F(CredentialCacheTest, ConcurrentWritesNeverLeaveAPartialFile) {
  // Writers without the lock (as when it cannot be had): every read sees
  // one whole entry or another, never a mix or a part.
  std::vector<ClientCertificate> certificates;
  for (int i = 0; i < 4; ++i) certificates.push_back(CertificateFor(clock_.Now(), hours(1), std::to_string(i)));
  ASSERT_TRUE(cache_.Store(kAcmeTrainEdit, certificates[0]).ok());
  std::atomic<int> bad_reads{0}, good_reads{0};
  {
    std::vector<std::jthread> threads;
    for (int w = 0; w < 4; ++w) {
      threads.emplace_back([&, w] {
        for (int i = 0; i < 50; ++i) EXPECT_TRUE(cache_.Store(kAcmeTrainEdit, certificates[w]).ok());
      });
    }
    for (int r = 0; r < 2; ++r) {
      threads.emplace_back([&] {
        for (int i = 0; i < 200; ++i) {
          const CredentialCache::Loaded loaded = cache_.Load(kAcmeTrainEdit);
          const bool whole = loaded.certificate.has_value() && loaded.ignored.empty() &&
                             loaded.certificate->certificate_pem ==
                                 certificates[std::stoi(loaded.certificate->serial)].certificate_pem;
          (whole ? good_reads : bad_reads)++;
        }
      });
    }
  }
  EXPECT_EQ(bad_reads.load(), 0);
  EXPECT_EQ(good_reads.load(), 400);
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(Directory())) ++files;
  EXPECT_EQ(files, 1);  // the entry; no temporary file left
}

TEST_F(CredentialCacheTest, AHeldLockKeepsAnotherRunWaiting) {
  std::filesystem::create_directories(Directory());
  const CredentialCache::Lock held = cache_.Acquire(kAcmeTrainEdit, kCacheLockWait);
  ASSERT_TRUE(held.held());
  EXPECT_FALSE(cache_.Acquire(kAcmeTrainEdit, std::chrono::milliseconds(0)).held());
  // Another key's lock is another file.
  EXPECT_TRUE(cache_.Acquire({"127.0.0.1:9090", "acme", "train", "view"}, std::chrono::milliseconds(0)).held());
}

TEST(CredentialCacheAbsent, EveryRunIssues) {
  FakeClock clock;
  CountingIssuer issuer(clock, std::chrono::hours(1));
  std::string notes;
  for (int i = 0; i < 2; ++i) {
    auto obtained = ObtainCertificate(nullptr, kAcmeTrainEdit, clock, kCacheLockWait, issuer.Function(), notes);
    ASSERT_TRUE(obtained.ok());
    EXPECT_TRUE(obtained->issued);
  }
  EXPECT_EQ(issuer.calls(), 2);
}

}  // namespace
}  // namespace septa::cli
