// Encryption at rest of CA private keys: AES-256-GCM under a key-encryption
// key (KEK) that lives in a file, never in the database. A wrapped key is
// text, "kek1:<kek id>:<base64(nonce | ciphertext | tag)>", so it fits the
// column the clear PEM was in; the additional authenticated data names the
// row (the virtual cluster), so a wrapped key copied to another row does not
// decrypt there.
//
// Rotation: the KeyRing holds the current KEK and optionally the previous
// one; it unwraps under either (by the id in the text) and wraps under the
// current one. RewrapStoredKeys (sealed_object_store.h) moves every stored
// key to the current KEK.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"

namespace septa::vault {

struct KeyEncryptionKey {
  std::string id;      // 16 hex digits of SHA-256 of the key: names it in wrapped text
  std::string secret;  // 32 bytes
};

// The KEK in `path`: one line of base64 holding 32 bytes. The file must be
// readable by its owner only (FAILED_PRECONDITION naming the path otherwise).
// When it does not exist and `create` is set, a new KEK from `random` is
// written there with mode 0600 (exclusively: two starting septads cannot
// write two keys); errors name `field`.
Result<KeyEncryptionKey> LoadKek(std::string_view field, const std::filesystem::path& path, RandomSource& random,
                                 bool create);

// The KEK of a secret (tests and LoadKek).
Result<KeyEncryptionKey> KekFromSecret(std::string secret);

// True when `stored` is a wrapped key rather than a clear PEM.
bool IsWrapped(std::string_view stored);

class KeyRing {
 public:
  KeyRing(KeyEncryptionKey current, std::optional<KeyEncryptionKey> previous)
      : current_(std::move(current)), previous_(std::move(previous)) {}

  // `plaintext` wrapped under the current KEK, bound to `aad`.
  Result<std::string> Wrap(std::string_view plaintext, std::string_view aad, RandomSource& random) const;
  // The plaintext of a wrapped key. FAILED_PRECONDITION when its KEK is
  // neither the current nor the previous one; DATA_LOSS when it does not
  // authenticate (tampered, or `aad` is not the one it was wrapped with).
  Result<std::string> Unwrap(std::string_view wrapped, std::string_view aad) const;
  // True when `stored` is wrapped under the current KEK.
  bool IsCurrent(std::string_view stored) const;

  const KeyEncryptionKey& current() const { return current_; }

 private:
  KeyEncryptionKey current_;
  std::optional<KeyEncryptionKey> previous_;
};

}  // namespace septa::vault
