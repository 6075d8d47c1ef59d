#include "services/store/database_admin.h"

#include <pqxx/pqxx>

#include "services/store/connection_url.h"

namespace septa::store {
namespace {

constexpr char kDuplicateDatabase[] = "42P04";
constexpr char kDuplicateRole[] = "42710";

// Names are spliced into DDL (quoted too): only what the caller derives from
// a hash is accepted.
bool IsIdentifier(const std::string& name) {
  if (name.empty() || name.size() > 63 || !(name[0] >= 'a' && name[0] <= 'z')) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

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

Status EnsureOwnedDatabase(const std::string& server_url, const std::string& database, const std::string& role,
                           const std::string& password, bool reset_password) {
  if (!IsIdentifier(database)) return InvalidField("database", "must be a lower-case identifier");
  if (!IsIdentifier(role)) return InvalidField("role", "must be a lower-case identifier");
  if (password.empty()) return InvalidField("password", "is required");
  try {
    pqxx::connection connection(server_url);
    pqxx::nontransaction session(connection);
    const std::string quoted_role = session.quote_name(role);
    // Utility statements take no parameters: quote() escapes the literal.
    const std::string with_password = " LOGIN PASSWORD " + session.quote(password);
    if (session.exec_params("SELECT 1 FROM pg_roles WHERE rolname = $1", role).empty()) {
      try {
        session.exec("CREATE ROLE " + quoted_role + with_password);
      } catch (const pqxx::sql_error& e) {
        if (e.sqlstate() != kDuplicateRole) throw;  // created concurrently: set the password below
        reset_password = true;
      }
    } else if (reset_password) {
      session.exec("ALTER ROLE " + quoted_role + with_password);
    }
    const std::string quoted = session.quote_name(database);
    if (session.exec_params("SELECT 1 FROM pg_database WHERE datname = $1", database).empty()) {
      try {
        session.exec("CREATE DATABASE " + quoted + " OWNER " + quoted_role);
      } catch (const pqxx::sql_error& e) {
        if (e.sqlstate() != kDuplicateDatabase) throw;
      }
    }
    // A NULL ACL is the default one, which lets every role connect; checked
    // apart from the create, so a crash between the two is repaired.
    if (session.exec_params1("SELECT datacl IS NULL FROM pg_database WHERE datname = $1", database)[0].as<bool>()) {
      session.exec("REVOKE ALL ON DATABASE " + quoted + " FROM PUBLIC");
    }
    session.commit();
    return Status::Ok();
  } catch (const std::exception& e) {
    return Failed("create", database, e);
  }
}

Status DropOwnedDatabase(const std::string& server_url, const std::string& database, const std::string& role) {
  if (!IsIdentifier(database)) return InvalidField("database", "must be a lower-case identifier");
  if (!IsIdentifier(role)) return InvalidField("role", "must be a lower-case identifier");
  SEPTA_RETURN_IF_ERROR(DropDatabase(server_url, database));
  try {
    pqxx::connection connection(server_url);
    pqxx::nontransaction session(connection);
    session.exec("DROP ROLE IF EXISTS " + session.quote_name(role));
    session.commit();
    return Status::Ok();
  } catch (const std::exception& e) {
    return Failed("drop the role of", database, e);
  }
}

}  // namespace septa::store
