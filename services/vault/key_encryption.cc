#include "services/vault/key_encryption.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "common/text.h"
#include "services/base/base64.h"
#include "services/base/file.h"
#include "services/core/crypto.h"

namespace septa::vault {
namespace {

constexpr std::string_view kPrefix = "kek1:";
constexpr std::size_t kKeyBytes = 32;
constexpr std::size_t kNonceBytes = 12;
constexpr std::size_t kTagBytes = 16;

struct CipherCtxFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, CipherCtxFree>;

const unsigned char* Bytes(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }
unsigned char* Bytes(std::string& s) { return reinterpret_cast<unsigned char*>(s.data()); }

// Writes a new KEK to `path`: into a 0600 temporary file first, then
// link(2)ed into place, which fails when the path exists, so two septads
// starting at once never see a half-written key or write two.
Status CreateKekFile(std::string_view field, const std::filesystem::path& path, const std::string& secret) {
  const std::string tmp = path.string() + ".new." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return InvalidField(std::string(field), "cannot create " + tmp + ": " + std::strerror(errno));
  const std::string line = base::Base64Encode(secret) + "\n";
  const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
  ::close(fd);
  const int linked = written ? ::link(tmp.c_str(), path.c_str()) : -1;
  const int error = errno;
  ::unlink(tmp.c_str());
  if (!written) return InvalidField(std::string(field), "cannot write " + tmp + ": " + std::strerror(error));
  if (linked != 0 && error != EEXIST) {  // EEXIST: another septad made it first; read theirs
    return InvalidField(std::string(field), "cannot create " + path.string() + ": " + std::strerror(error));
  }
  return Status::Ok();
}

}  // namespace

Result<KeyEncryptionKey> KekFromSecret(std::string secret) {
  if (secret.size() != kKeyBytes) {
    return InvalidArgument("a key-encryption key has " + std::to_string(kKeyBytes) + " bytes, not " +
                           std::to_string(secret.size()));
  }
  return KeyEncryptionKey{core::Sha256Hex(secret).substr(0, 16), std::move(secret)};
}

Result<KeyEncryptionKey> LoadKek(std::string_view field, const std::filesystem::path& path, RandomSource& random,
                                 bool create) {
  const std::string name(field);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT || !create) {
      return InvalidField(name, "cannot read " + path.string() + ": " + std::strerror(errno));
    }
    std::string secret(kKeyBytes, '\0');
    SEPTA_RETURN_IF_ERROR(random.Fill(std::span(reinterpret_cast<std::uint8_t*>(secret.data()), secret.size())));
    SEPTA_RETURN_IF_ERROR(CreateKekFile(field, path, secret));
    if (::stat(path.c_str(), &st) != 0) {
      return InvalidField(name, "cannot read " + path.string() + ": " + std::strerror(errno));
    }
  }
  // Group read is the kubelet's doing for a Secret volume under fsGroup
  // (0440, group = the pod's fsGroup, which the process runs in): allowed
  // for the process's own group only; other bits and group write never.
  const bool own_group_reads_only = (st.st_mode & 070) == 040 && st.st_gid == ::getegid();
  if ((st.st_mode & 007) != 0 || ((st.st_mode & 070) != 0 && !own_group_reads_only)) {
    return FieldError(
        Code::kFailedPrecondition, name,
        path.string() + " is readable by others than its owner (and its own group, read-only); chmod 0600 it");
  }
  auto text = base::ReadFile(path);
  if (!text.ok()) return InvalidField(name, text.status().message());
  DropTrailingLineBreaks(*text);
  auto secret = base::Base64Decode(*text);
  if (!secret) return InvalidField(name, path.string() + " does not hold one line of base64");
  auto kek = KekFromSecret(*std::move(secret));
  if (!kek.ok()) return InvalidField(name, path.string() + ": " + kek.status().message());
  return kek;
}

bool IsWrapped(std::string_view stored) { return stored.starts_with(kPrefix); }

Result<std::string> KeyRing::Wrap(std::string_view plaintext, std::string_view aad, RandomSource& random) const {
  std::string sealed(kNonceBytes + plaintext.size() + kTagBytes, '\0');
  SEPTA_RETURN_IF_ERROR(random.Fill(std::span(reinterpret_cast<std::uint8_t*>(sealed.data()), kNonceBytes)));
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  int n = 0;
  bool ok = ctx && EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) == 1 &&
            EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, Bytes(current_.secret), Bytes(sealed)) == 1 &&
            EVP_EncryptUpdate(ctx.get(), nullptr, &n, Bytes(aad), static_cast<int>(aad.size())) == 1 &&
            EVP_EncryptUpdate(ctx.get(), Bytes(sealed) + kNonceBytes, &n, Bytes(plaintext),
                              static_cast<int>(plaintext.size())) == 1 &&
            EVP_EncryptFinal_ex(ctx.get(), Bytes(sealed) + kNonceBytes + n, &n) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes,
                                Bytes(sealed) + kNonceBytes + plaintext.size()) == 1;
  if (!ok) return Internal("AES-256-GCM encryption failed");
  return std::string(kPrefix) + current_.id + ":" + base::Base64Encode(sealed);
}

Result<std::string> KeyRing::Unwrap(std::string_view wrapped, std::string_view aad) const {
  if (!IsWrapped(wrapped)) return InvalidArgument("not a wrapped key");
  std::string_view rest = wrapped.substr(kPrefix.size());
  const std::size_t colon = rest.find(':');
  if (colon == std::string_view::npos) return Status(Code::kDataLoss, "a wrapped key names no key-encryption key");
  const std::string_view id = rest.substr(0, colon);
  const KeyEncryptionKey* kek = id == current_.id                  ? &current_
                                : previous_ && id == previous_->id ? &*previous_
                                                                   : nullptr;
  if (kek == nullptr) {
    return FailedPrecondition(
        "a CA key is wrapped under key-encryption key " + std::string(id) +
        ", which is neither kek_file's nor kek_previous_file's (replicas on one database share one kek_file)");
  }
  auto sealed = base::Base64Decode(rest.substr(colon + 1));
  if (!sealed || sealed->size() < kNonceBytes + kTagBytes) {
    return Status(Code::kDataLoss, "a wrapped key under key-encryption key " + std::string(id) + " is malformed");
  }
  const std::size_t length = sealed->size() - kNonceBytes - kTagBytes;
  std::string plain(length, '\0');
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  int n = 0;
  bool ok =
      ctx && EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) == 1 &&
      EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, Bytes(kek->secret), Bytes(*sealed)) == 1 &&
      EVP_DecryptUpdate(ctx.get(), nullptr, &n, Bytes(aad), static_cast<int>(aad.size())) == 1 &&
      EVP_DecryptUpdate(ctx.get(), Bytes(plain), &n, Bytes(*sealed) + kNonceBytes, static_cast<int>(length)) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes, Bytes(*sealed) + kNonceBytes + length) == 1 &&
      EVP_DecryptFinal_ex(ctx.get(), Bytes(plain) + n, &n) == 1;
  if (!ok) {
    return Status(Code::kDataLoss, "a wrapped key under key-encryption key " + std::string(id) +
                                       " does not authenticate: tampered with, or moved from another row");
  }
  return plain;
}

bool KeyRing::IsCurrent(std::string_view stored) const {
  return stored.starts_with(std::string(kPrefix) + current_.id + ":");
}

}  // namespace septa::vault
