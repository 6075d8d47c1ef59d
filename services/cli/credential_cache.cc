#include "services/cli/credential_cache.h"

#include <fcntl.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "services/base/openssl_ptr.h"

namespace septa::cli {

namespace {

constexpr std::chrono::seconds kMinimumRenewalMargin{30};
constexpr int kCacheFormatVersion = 1;
constexpr std::size_t kMaxCacheFileBytes = 64 * 1024;
constexpr std::chrono::milliseconds kLockRetry{20};

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// A file name part: [A-Za-z0-9.-] kept, anything else '_', never starting with '.'.
std::string FileNamePart(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    out += std::isalnum(u) != 0 || c == '.' || c == '-' ? c : '_';
  }
  if (out.empty() || out.front() == '.') out.insert(out.begin(), '_');
  return out;
}

std::optional<TimePoint> CertificateTime(const ASN1_TIME* time) {
  std::tm tm{};
  if (time == nullptr || ASN1_TIME_to_tm(time, &tm) != 1) return std::nullopt;
  return TimePoint(std::chrono::seconds(timegm(&tm)));
}

// `mode` as ls shows it in octal: "0644".
std::string OctalMode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 0777));
  return text;
}

// The file's bytes if it is a regular file of this user that nobody else
// may read or write, at most kMaxCacheFileBytes; else why not (empty
// `why` with no bytes: there is no file).
std::optional<std::string> ReadPrivateFile(const std::filesystem::path& path, std::string& why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) why = errno == ELOOP ? "it is a symbolic link" : Errno("cannot open it");
    return std::nullopt;
  }
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) != 0) {
    why = Errno("cannot stat it");
  } else if (!S_ISREG(st.st_mode)) {
    why = "it is not a regular file";
  } else if (st.st_uid != ::geteuid()) {
    why = "another user owns it";
  } else if ((st.st_mode & 0077) != 0) {
    why = "others may read or write it (mode " + OctalMode(st.st_mode) + ", not 0600)";
  } else if (static_cast<std::size_t>(st.st_size) > kMaxCacheFileBytes) {
    why = "it is larger than 64 KiB";
  } else {
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        why = Errno("cannot read it");
        break;
      }
      if (n == 0) break;
      text.append(buffer, static_cast<std::size_t>(n));
      if (text.size() > kMaxCacheFileBytes) {
        why = "it is larger than 64 KiB";
        break;
      }
    }
  }
  ::close(fd);
  if (!why.empty()) return std::nullopt;
  return text;
}

// mkdir with mode 0700 of `path` and of each missing parent.
Status MakePrivateDirectory(const std::filesystem::path& path) {
  std::vector<std::filesystem::path> missing;
  std::error_code ec;
  for (std::filesystem::path p = path; !p.empty() && !std::filesystem::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0700) != 0 && errno != EEXIST) {
      return FailedPrecondition(Errno("cannot make the directory " + it->string()));
    }
  }
  return Status::Ok();
}

// A directory of ours that others may enter is made 0700 (a symbolic
// link to one of ours, as a moved cache directory may be, included).
Status Tighten(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return FailedPrecondition(Errno("cannot stat " + path.string()));
  if (!S_ISDIR(st.st_mode)) return FailedPrecondition(path.string() + " is not a directory");
  if (st.st_uid == ::geteuid() && (st.st_mode & 0077) != 0 && ::chmod(path.c_str(), 0700) != 0) {
    return FailedPrecondition(Errno("cannot make " + path.string() + " mode 0700"));
  }
  return Status::Ok();
}

bool WriteAll(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

Result<ClientCertificate> ReadClientCertificate(std::string certificate_pem, std::string private_key_pem) {
  base::BioPtr cert_bio = base::MemoryBio(certificate_pem);
  base::CertPtr cert(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return InvalidArgument("the client certificate is not a PEM certificate");
  base::BioPtr key_bio = base::MemoryBio(private_key_pem);
  base::KeyPtr key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (!key) return InvalidArgument("the client key is not a PEM private key");
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    return InvalidArgument("the client key is not the certificate's key");
  }
  const auto not_before = CertificateTime(X509_get0_notBefore(cert.get()));
  const auto not_after = CertificateTime(X509_get0_notAfter(cert.get()));
  if (!not_before || !not_after || *not_after <= *not_before) {
    return InvalidArgument("the client certificate's validity cannot be read");
  }
  ClientCertificate out;
  out.certificate_pem = std::move(certificate_pem);
  out.private_key_pem = std::move(private_key_pem);
  out.not_before = *not_before;
  out.not_after = *not_after;
  return out;
}

std::chrono::seconds RenewalMargin(const ClientCertificate& certificate) {
  const auto lifetime =
      std::chrono::duration_cast<std::chrono::seconds>(certificate.not_after - certificate.not_before);
  return std::max(kMinimumRenewalMargin, lifetime / 10);
}

bool NeedsRenewal(const ClientCertificate& certificate, TimePoint now) {
  return now >= certificate.not_after - RenewalMargin(certificate);
}

std::optional<std::filesystem::path> CredentialCacheDirectory(const std::optional<std::string>& xdg_cache_home,
                                                              std::string_view home) {
  std::filesystem::path base;
  if (xdg_cache_home && !xdg_cache_home->empty() && xdg_cache_home->front() == '/') {
    base = *xdg_cache_home;
  } else if (!home.empty()) {
    base = std::filesystem::path(home) / ".cache";
  } else {
    return std::nullopt;
  }
  return base / "septa" / "credentials";
}

std::filesystem::path CredentialCache::PathOf(const CredentialKey& key) const {
  return directory_ / (FileNamePart(key.tenant) + "_" + FileNamePart(key.vcluster) + "_" + FileNamePart(key.role) +
                       "@" + FileNamePart(key.server) + ".json");
}

CredentialCache::Loaded CredentialCache::Load(const CredentialKey& key) const {
  Loaded loaded;
  const auto text = ReadPrivateFile(PathOf(key), loaded.ignored);
  if (!text) return loaded;
  const nlohmann::json entry = nlohmann::json::parse(*text, nullptr, false);
  const auto string = [&](const char* name) -> std::string {
    const auto it = entry.is_object() ? entry.find(name) : entry.end();
    return it != entry.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  const auto version = entry.is_object() ? entry.find("version") : entry.end();
  if (version == entry.end() || !version->is_number_integer() || *version != kCacheFormatVersion) {
    loaded.ignored = "it is not a septactl credential cache file of version " + std::to_string(kCacheFormatVersion);
    return loaded;
  }
  const CredentialKey recorded{string("server"), string("tenant"), string("vcluster"), string("role")};
  if (!(recorded == key)) {
    loaded.ignored = "it holds the credential of another server, tenant, virtual cluster or role";
    return loaded;
  }
  auto certificate = ReadClientCertificate(string("certificate"), string("private_key"));
  if (!certificate.ok()) {
    loaded.ignored = certificate.status().message();
    return loaded;
  }
  if (string("expire_time") != FormatRfc3339(certificate->not_after)) {
    loaded.ignored = "its expire_time is not the certificate's notAfter";
    return loaded;
  }
  certificate->serial = string("serial");
  loaded.certificate = *std::move(certificate);
  return loaded;
}

Status CredentialCache::MakeDirectories() const {
  SEPTA_RETURN_IF_ERROR(MakePrivateDirectory(directory_));
  SEPTA_RETURN_IF_ERROR(Tighten(directory_.parent_path()));
  return Tighten(directory_);
}

Status CredentialCache::Store(const CredentialKey& key, const ClientCertificate& certificate) const {
  SEPTA_RETURN_IF_ERROR(MakeDirectories());
  const nlohmann::json entry = {
      {"version", kCacheFormatVersion},
      {"server", key.server},
      {"tenant", key.tenant},
      {"vcluster", key.vcluster},
      {"role", key.role},
      {"serial", certificate.serial},
      {"not_before", FormatRfc3339(certificate.not_before)},
      {"expire_time", FormatRfc3339(certificate.not_after)},
      {"certificate", certificate.certificate_pem},
      {"private_key", certificate.private_key_pem},
  };
  const std::filesystem::path path = PathOf(key);
  std::string temporary = (directory_ / ("." + path.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(temporary.data());  // mode 0600
  if (fd < 0) return FailedPrecondition(Errno("cannot make a file in " + directory_.string()));
  const bool written = ::fchmod(fd, 0600) == 0 && WriteAll(fd, entry.dump(2) + "\n") && ::fsync(fd) == 0;
  const std::string failure = written ? "" : Errno("cannot write " + temporary);
  if (::close(fd) != 0 || !written) {
    ::unlink(temporary.c_str());
    return FailedPrecondition(failure.empty() ? Errno("cannot write " + temporary) : failure);
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string why = Errno("cannot rename " + temporary + " to " + path.string());
    ::unlink(temporary.c_str());
    return FailedPrecondition(why);
  }
  return Status::Ok();
}

CredentialCache::Lock& CredentialCache::Lock::operator=(Lock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

CredentialCache::Lock::~Lock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

CredentialCache::Lock CredentialCache::Acquire(const CredentialKey& key, std::chrono::milliseconds wait) const {
  if (!MakeDirectories().ok()) return Lock();
  const std::filesystem::path path = PathOf(key).string() + ".lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Lock();
  Lock lock(fd);
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return lock;
    if (errno != EWOULDBLOCK && errno != EINTR) return Lock();
    if (std::chrono::steady_clock::now() >= deadline) return Lock();
    // Another run holds it while it asks septad (bounded by its call deadline).
    std::this_thread::sleep_for(kLockRetry);
  }
}

Result<Obtained> ObtainCertificate(const CredentialCache* cache, const CredentialKey& key, const Clock& clock,
                                   std::chrono::milliseconds lock_wait,
                                   const std::function<Result<ClientCertificate>()>& issue, std::string& notes) {
  if (cache == nullptr) {
    auto issued = issue();
    SEPTA_RETURN_IF_ERROR(issued);
    return Obtained{*std::move(issued), true};
  }
  const std::string path = cache->PathOf(key).string();
  const CredentialCache::Lock lock = cache->Acquire(key, lock_wait);
  if (!lock.held()) notes += "septactl: note: could not lock " + path + ".lock; going on without it\n";
  CredentialCache::Loaded loaded = cache->Load(key);
  if (!loaded.ignored.empty()) {
    notes += "septactl: note: ignoring the cached credential " + path + " (" + loaded.ignored +
             "); a new certificate replaces it\n";
  }
  if (loaded.certificate && !NeedsRenewal(*loaded.certificate, clock.Now())) {
    return Obtained{*std::move(loaded.certificate), false};
  }
  auto issued = issue();
  SEPTA_RETURN_IF_ERROR(issued);
  if (const Status stored = cache->Store(key, *issued); !stored.ok()) {
    notes += "septactl: note: the certificate was not cached (" + stored.message() +
             "): the next run asks septad for another\n";
  }
  return Obtained{*std::move(issued), true};
}

}  // namespace septa::cli
