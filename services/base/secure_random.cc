#include "services/base/secure_random.h"

#include <openssl/err.h>
#include <openssl/rand.h>

#include <string>

namespace septa::base {

Status SecureRandom::Fill(std::span<std::uint8_t> out) {
  if (out.empty()) return Status::Ok();
  if (RAND_bytes(out.data(), static_cast<int>(out.size())) == 1) return Status::Ok();
  char reason[256] = "unknown reason";
  if (const unsigned long e = ERR_get_error(); e != 0) ERR_error_string_n(e, reason, sizeof reason);
  ERR_clear_error();
  return Unavailable(std::string("no secure randomness available (RAND_bytes: ") + reason + ")");
}

}  // namespace septa::base
