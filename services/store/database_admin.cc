#include "services/store/database_admin.h"

#include <pqxx/pqxx>

#include "services/store/connection_url.h"

namespace septa::store {
namespace {

constexpr char kDuplicateDatabase[] = "42P04";

Status Failed(const std::string& what, const std::string& database, const std::exception& e) {
  return Unavailable("cannot " + what + " database \"" + database + "\": " + e.what());
}

}  // namespace

Status CreateDatabaseIfMissing(const std::string& server_url, const std::string& database) {
  try {
    pqxx::connection connection(server_url);
    pqxx::nontransaction session(connection);
    if (session.exec_params("SELECT 1 FROM pg_database WHERE datname = $1", database).empty()) {
      // CREATE DATABASE takes no parameters; quote_name escapes the identifier.
      session.exec("CREATE DATABASE " + session.quote_name(database));
    }
    session.commit();
    return Status::Ok();
  } catch (const pqxx::sql_error& e) {
    if (e.sqlstate() == kDuplicateDatabase) return Status::Ok();  // created concurrently
    return Failed("create", database, e);
  } catch (const std::exception& e) {
    return Failed("create", database, e);
  }
}

Status DropDatabase(const std::string& server_url, const std::string& database) {
  try {
    pqxx::connection connection(server_url);
    pqxx::nontransaction session(connection);
    session.exec("DROP DATABASE IF EXISTS " + session.quote_name(database) + " WITH (FORCE)");
    session.commit();
    return Status::Ok();
  } catch (const std::exception& e) {
    return Failed("drop", database, e);
  }
}

}  // namespace septa::store
