// A key-encryption key for the vault tests: 32 bytes of `fill`.
#pragma once

#include <string>

#include "services/vault/key_encryption.h"

namespace septa::vault::testing {

inline KeyEncryptionKey Kek(char fill) { return *KekFromSecret(std::string(32, fill)); }

}  // namespace septa::vault::testing
