// Creating and dropping whole databases: the embedded server creates septa's
// database, the test harness one database per test.
#pragma once

#include <string>

#include "common/status.h"

namespace septa::store {

// Connects to `server_url` (any database of the server) and creates
// `database` unless it exists.
Status CreateDatabaseIfMissing(const std::string& server_url, const std::string& database);

// Drops `database`, disconnecting its sessions first; OK if it does not exist.
Status DropDatabase(const std::string& server_url, const std::string& database);

}  // namespace septa::store
