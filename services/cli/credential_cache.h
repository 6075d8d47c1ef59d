// The certificate cache of kubectl's exec plugin (`septactl vcluster
// credential`, docs/identity.md "Exec kubeconfigs"): a client certificate
// and its key per septad server, tenant, virtual cluster and role, in
// $XDG_CACHE_HOME/septa/credentials/ (default ~/.cache), so that a kubectl
// run reuses the last certificate instead of minting one (and an audit
// record) each time. Directories are 0700, files 0600, written whole and
// renamed into place; a run holds the entry's lock file while it decides
// and issues, so concurrent kubectl runs mint one certificate between them.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"

namespace septa::cli {

// What a cache entry is for: septad's gRPC address as septactl reached it,
// and what the certificate was asked for.
struct CredentialKey {
  std::string server{}, tenant{}, vcluster{}, role{};
  bool operator==(const CredentialKey&) const = default;
};

// A client certificate with its private key (PEM) and its validity as the
// certificate itself states it.
struct ClientCertificate {
  std::string certificate_pem{}, private_key_pem{};
  std::string serial{};  // lower-case hex, as septad lists it
  TimePoint not_before{}, not_after{};
};

// The certificate's validity and serial read from its PEM, after checking
// that `private_key_pem` is its key. INVALID_ARGUMENT saying what is wrong
// otherwise.
Result<ClientCertificate> ReadClientCertificate(std::string certificate_pem, std::string private_key_pem);

// How long before its notAfter a certificate is renewed: max(30 s, a tenth
// of its lifetime).
std::chrono::seconds RenewalMargin(const ClientCertificate& certificate);
// Whether a run at `now` asks septad for a new certificate rather than
// handing out `certificate`: from notAfter - RenewalMargin on.
bool NeedsRenewal(const ClientCertificate& certificate, TimePoint now);

// $XDG_CACHE_HOME/septa/credentials when $XDG_CACHE_HOME is an absolute
// path (the XDG rule), else $HOME/.cache/septa/credentials; nullopt when
// neither is set.
std::optional<std::filesystem::path> CredentialCacheDirectory(const std::optional<std::string>& xdg_cache_home,
                                                              std::string_view home);

class CredentialCache {
 public:
  explicit CredentialCache(std::filesystem::path directory) : directory_(std::move(directory)) {}

  const std::filesystem::path& directory() const { return directory_; }
  // <tenant>_<vcluster>_<role>@<server>.json, each part reduced to
  // [A-Za-z0-9.-] (others as '_'); the file records the exact key.
  std::filesystem::path PathOf(const CredentialKey& key) const;

  struct Loaded {
    std::optional<ClientCertificate> certificate{};
    // Set when a file was there but is not used (the next Store replaces
    // it): not a regular file of ours with mode 0600, unreadable JSON,
    // another key's, a certificate that is not the key's.
    std::string ignored{};
  };
  Loaded Load(const CredentialKey& key) const;

  // Writes the entry: its directories made 0700 (and septa/, credentials/
  // tightened to 0700 if they are ours and looser), a new 0600 file in the
  // same directory renamed over the old one, so a reader sees the old entry
  // or the new one, never a part.
  Status Store(const CredentialKey& key, const ClientCertificate& certificate) const;

  // An exclusive lock (flock) on the entry's "<file>.lock", held until the
  // object goes. Waits at most `wait` for another run to release it; on
  // timeout, or when the lock file cannot be made, holds nothing (writes
  // stay atomic without it, at worst a certificate is minted twice).
  class Lock {
   public:
    Lock() = default;
    explicit Lock(int fd) : fd_(fd) {}
    Lock(Lock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    Lock& operator=(Lock&& other) noexcept;
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;
    ~Lock();
    bool held() const { return fd_ >= 0; }

   private:
    int fd_ = -1;
  };
  Lock Acquire(const CredentialKey& key, std::chrono::milliseconds wait) const;

 private:
  Status MakeDirectories() const;

  std::filesystem::path directory_;
};

// A certificate for `key` as a run of the plugin hands it out: the cached
// one while NeedsRenewal says no, else one from `issue`, which is then
// stored. `cache` null: no cache (always issued). `notes` collects what
// the user should hear, one line each (an ignored or unwritable cache file).
struct Obtained {
  ClientCertificate certificate{};
  bool issued = false;
};
Result<Obtained> ObtainCertificate(const CredentialCache* cache, const CredentialKey& key, const Clock& clock,
                                   std::chrono::milliseconds lock_wait,
                                   const std::function<Result<ClientCertificate>()>& issue, std::string& notes);

}  // namespace septa::cli
