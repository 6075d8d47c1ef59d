// Creating and dropping whole databases: the embedded server creates septa's
// database, the test harness one database per test, the host control planes
// one database and login role per virtual cluster for kine.
#pragma once

#include <string>

#include "common/status.h"

namespace septa::store {

// Connects to `server_url` (any database of the server) and creates
// `database` unless it exists.
Status CreateDatabaseIfMissing(const std::string& server_url, const std::string& database);

// Drops `database`, disconnecting its sessions first; OK if it does not exist.
Status DropDatabase(const std::string& server_url, const std::string& database);

// Creates login role `role` with `password` unless it exists (and sets the
// password when `reset_password`: the caller has just made a new one), then
// database `database` owned by it unless that exists, which no other role may
// connect to. Writes nothing when both exist and the password stays.
// INVALID_ARGUMENT for a name that is not a lower-case identifier.
Status EnsureOwnedDatabase(const std::string& server_url, const std::string& database, const std::string& role,
                           const std::string& password, bool reset_password);

// Drops `database` (disconnecting its sessions) and then `role`; OK for
// either missing.
Status DropOwnedDatabase(const std::string& server_url, const std::string& database, const std::string& role);

}  // namespace septa::store
