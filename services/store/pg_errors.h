// Translation of libpqxx / PostgreSQL errors into Status at the store
// boundary. Internal to services/store.
#pragma once

#include <exception>

#include "common/status.h"

namespace septa::store {

struct TranslatedError {
  Status status;
  bool retry = false;              // serialization failure or deadlock: run the transaction again
  bool connection_broken = false;  // don't reuse the connection
};

// Call from inside a catch block with the caught exception.
TranslatedError TranslateDatabaseError(const std::exception& error);

}  // namespace septa::store
