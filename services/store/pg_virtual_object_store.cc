#include "services/store/pg_virtual_object_store.h"

#include "services/store/connection_pool.h"
#include "services/store/pg_errors.h"

namespace septa::store {
namespace {

void PrepareVirtualObjectStatements(pqxx::connection& c) {
  c.prepare("vcp_create",
            "INSERT INTO virtual_control_planes (tenant, vcluster, ca_certificate, ca_private_key) "
            "VALUES ($1, $2, $3, $4) ON CONFLICT (tenant, vcluster) DO NOTHING RETURNING 1");
  c.prepare("vcp_get",
            "SELECT ca_certificate, ca_private_key, resource_version FROM virtual_control_planes "
            "WHERE tenant = $1 AND vcluster = $2");
  c.prepare("vcp_list", "SELECT tenant, vcluster FROM virtual_control_planes ORDER BY tenant, vcluster");
  c.prepare("vcp_remove", "DELETE FROM virtual_control_planes WHERE tenant = $1 AND vcluster = $2");
  c.prepare("vcp_load",
            "SELECT type_key, namespace, name, resource_version, body FROM virtual_objects "
            "WHERE tenant = $1 AND vcluster = $2");
  c.prepare("vcp_version", "SELECT resource_version FROM virtual_control_planes WHERE tenant = $1 AND vcluster = $2");
  // The compare-and-set every write begins with: it locks the control
  // plane's row, so concurrent writers of one virtual cluster (on any
  // replica) serialize on it, and the later one finds the version moved.
  // 0 rows: moved, or the control plane is gone.
  c.prepare("vcp_set_rv",
            "UPDATE virtual_control_planes SET resource_version = $4 "
            "WHERE tenant = $1 AND vcluster = $2 AND resource_version = $3 RETURNING 1");
  c.prepare("vcp_put",
            "INSERT INTO virtual_objects (tenant, vcluster, type_key, namespace, name, resource_version, body) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (tenant, vcluster, type_key, namespace, name) "
            "DO UPDATE SET resource_version = EXCLUDED.resource_version, body = EXCLUDED.body");
  c.prepare("vcp_delete",
            "DELETE FROM virtual_objects WHERE tenant = $1 AND vcluster = $2 AND type_key = $3 AND namespace = $4 "
            "AND name = $5");
  c.prepare("vcp_add_token",
            "INSERT INTO virtual_control_plane_tokens (tenant, vcluster, token_sha256) VALUES ($1, $2, $3) "
            "ON CONFLICT DO NOTHING");
  c.prepare("vcp_tokens",
            "SELECT token_sha256 FROM virtual_control_plane_tokens WHERE tenant = $1 AND vcluster = $2 "
            "ORDER BY token_sha256");
  c.prepare("vcp_listener_create",
            "INSERT INTO virtual_control_plane_listener (ca_certificate, ca_private_key) VALUES ($1, $2) "
            "ON CONFLICT DO NOTHING");
  c.prepare("vcp_listener_get", "SELECT ca_certificate, ca_private_key FROM virtual_control_plane_listener");
  c.prepare("vcp_listener_replace_key",
            "UPDATE virtual_control_plane_listener SET ca_private_key = $2 WHERE ca_private_key = $1 RETURNING 1");
  // The primary keys (tenant, vcluster, serial) and (name) are their indexes: two probes, one statement.
  c.prepare("vcp_credential_status",
            "SELECT c.revoke_time IS NOT NULL, t.state = 'suspended' FROM vcluster_credentials c "
            "JOIN tenants t ON t.name = c.tenant WHERE c.tenant = $1 AND c.vcluster = $2 AND c.serial = $3");
  c.prepare("vcp_tenant_suspended", "SELECT state = 'suspended' FROM tenants WHERE name = $1");
  c.prepare("vcp_credential_ttl_max",
            "SELECT t.credential_ttl_max_seconds FROM tenants n JOIN trust_tiers t ON t.name = n.trust_tier "
            "WHERE n.name = $1");
  c.prepare("vcp_replace_ca_key",
            "UPDATE virtual_control_planes SET ca_private_key = $4 "
            "WHERE tenant = $1 AND vcluster = $2 AND ca_private_key = $3 RETURNING 1");
}

// Runs `work` in one transaction, once more on a fresh connection when the
// first is broken (every statement here is safe to repeat).
template <typename T, typename F>
Result<T> InTransaction(ConnectionPool& pool, F&& work) {
  return OnPooledConnection<T>(pool, [&](pqxx::connection& c) -> Result<T> {
    pqxx::work tx(c);
    Result<T> result = work(tx);
    if (result.ok()) tx.commit();
    return result;
  });
}

Status ControlPlaneGone(const core::VirtualClusterKey& key) {
  return NotFound("virtual control plane " + key.ToString() + " does not exist");
}

// Moves the control plane's resource version from `expected` to `next`
// (vcp_set_rv); kAborted when it is at another, kNotFound when it is gone.
// A commit whose acknowledgement was lost is retried by InTransaction and
// then found moved: the writer answers 409 and reloads, finding its write.
Status SetVersion(pqxx::work& tx, const core::VirtualClusterKey& key, std::uint64_t expected, std::uint64_t next) {
  if (!tx.exec_prepared("vcp_set_rv", key.tenant, key.vcluster, expected, next).empty()) return Status::Ok();
  auto rows = tx.exec_prepared("vcp_version", key.tenant, key.vcluster);
  if (rows.empty()) return ControlPlaneGone(key);
  return Aborted("virtual control plane " + key.ToString() + " is at resource version " + rows[0][0].as<std::string>() +
                 ", not " + std::to_string(expected));
}

core::StoredControlPlane ControlPlaneOf(const pqxx::row& row) {
  return {row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::uint64_t>()};
}

}  // namespace

PgVirtualObjectStore::PgVirtualObjectStore(PgVirtualObjectStoreOptions options) {
  pool_ = ConnectionPool::WithStatementTimeout(options.database_url, options.pool_size, options.acquire_timeout,
                                               options.statement_timeout, PrepareVirtualObjectStatements);
}

PgVirtualObjectStore::~PgVirtualObjectStore() = default;

Result<std::pair<core::StoredControlPlane, bool>> PgVirtualObjectStore::CreateControlPlane(
    const core::VirtualClusterKey& key, const core::StoredControlPlane& created) {
  using Out = std::pair<core::StoredControlPlane, bool>;
  return InTransaction<Out>(*pool_, [&](pqxx::work& tx) -> Result<Out> {
    bool inserted =
        !tx.exec_prepared("vcp_create", key.tenant, key.vcluster, created.ca_certificate, created.ca_private_key)
             .empty();
    auto rows = tx.exec_prepared("vcp_get", key.tenant, key.vcluster);
    if (rows.empty()) return ControlPlaneGone(key);  // removed between the two statements
    return Out{ControlPlaneOf(rows[0]), inserted};
  });
}

Result<std::optional<core::StoredControlPlane>> PgVirtualObjectStore::GetControlPlane(
    const core::VirtualClusterKey& key) {
  using Out = std::optional<core::StoredControlPlane>;
  return InTransaction<Out>(*pool_, [&](pqxx::work& tx) -> Result<Out> {
    auto rows = tx.exec_prepared("vcp_get", key.tenant, key.vcluster);
    if (rows.empty()) return Out();
    return Out(ControlPlaneOf(rows[0]));
  });
}

Result<std::vector<core::VirtualClusterKey>> PgVirtualObjectStore::ListControlPlanes() {
  using Out = std::vector<core::VirtualClusterKey>;
  return InTransaction<Out>(*pool_, [&](pqxx::work& tx) -> Result<Out> {
    Out out;
    for (const auto& row : tx.exec_prepared("vcp_list"))
      out.push_back({row[0].as<std::string>(), row[1].as<std::string>()});
    return out;
  });
}

Status PgVirtualObjectStore::RemoveControlPlane(const core::VirtualClusterKey& key) {
  return InTransaction<bool>(*pool_,
                             [&](pqxx::work& tx) -> Result<bool> {
                               tx.exec_prepared("vcp_remove", key.tenant, key.vcluster);  // objects and tokens cascade
                               return true;
                             })
      .status();
}

Result<std::vector<core::VirtualObject>> PgVirtualObjectStore::LoadObjects(const core::VirtualClusterKey& key) {
  using Out = std::vector<core::VirtualObject>;
  return InTransaction<Out>(*pool_, [&](pqxx::work& tx) -> Result<Out> {
    Out out;
    for (const auto& row : tx.exec_prepared("vcp_load", key.tenant, key.vcluster)) {
      out.push_back({row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::string>(),
                     row[3].as<std::uint64_t>(), row[4].as<std::string>()});
    }
    return out;
  });
}

Result<std::optional<std::uint64_t>> PgVirtualObjectStore::ResourceVersion(const core::VirtualClusterKey& key) {
  using Out = std::optional<std::uint64_t>;
  return InTransaction<Out>(*pool_, [&](pqxx::work& tx) -> Result<Out> {
    auto rows = tx.exec_prepared("vcp_version", key.tenant, key.vcluster);
    if (rows.empty()) return Out();
    return Out(rows[0][0].as<std::uint64_t>());
  });
}

Status PgVirtualObjectStore::PutObject(const core::VirtualClusterKey& key, const core::VirtualObject& object,
                                       std::uint64_t expected) {
  return InTransaction<bool>(*pool_,
                             [&](pqxx::work& tx) -> Result<bool> {
                               SEPTA_RETURN_IF_ERROR(SetVersion(tx, key, expected, object.resource_version));
                               tx.exec_prepared("vcp_put", key.tenant, key.vcluster, object.type_key, object.ns,
                                                object.name, object.resource_version, object.body);
                               return true;
                             })
      .status();
}

Status PgVirtualObjectStore::DeleteObject(const core::VirtualClusterKey& key, const std::string& type_key,
                                          const std::string& ns, const std::string& name,
                                          std::uint64_t resource_version, std::uint64_t expected) {
  return InTransaction<bool>(*pool_,
                             [&](pqxx::work& tx) -> Result<bool> {
                               SEPTA_RETURN_IF_ERROR(SetVersion(tx, key, expected, resource_version));
                               tx.exec_prepared("vcp_delete", key.tenant, key.vcluster, type_key, ns, name);
                               return true;
                             })
      .status();
}

Status PgVirtualObjectStore::AddTokenDigest(const core::VirtualClusterKey& key, const std::string& sha256_hex) {
  return InTransaction<bool>(*pool_,
                             [&](pqxx::work& tx) -> Result<bool> {
                               if (tx.exec_prepared("vcp_get", key.tenant, key.vcluster).empty())
                                 return ControlPlaneGone(key);
                               tx.exec_prepared("vcp_add_token", key.tenant, key.vcluster, sha256_hex);
                               return true;
                             })
      .status();
}

Result<std::vector<std::string>> PgVirtualObjectStore::TokenDigests(const core::VirtualClusterKey& key) {
  using Out = std::vector<std::string>;
  return InTransaction<Out>(*pool_, [&](pqxx::work& tx) -> Result<Out> {
    Out out;
    for (const auto& row : tx.exec_prepared("vcp_tokens", key.tenant, key.vcluster))
      out.push_back(row[0].as<std::string>());
    return out;
  });
}

Result<core::CredentialStatus> PgVirtualObjectStore::GetCredentialStatus(const core::VirtualClusterKey& key,
                                                                         const std::string& serial) {
  using Out = core::CredentialStatus;
  return InTransaction<Out>(*pool_, [&](pqxx::work& tx) -> Result<Out> {
    auto rows = tx.exec_prepared("vcp_credential_status", key.tenant, key.vcluster, serial);
    if (rows.empty()) return Out::kUnrecorded;
    if (rows[0][0].as<bool>()) return Out::kRevoked;
    return rows[0][1].as<bool>() ? Out::kSuspended : Out::kActive;
  });
}

Result<bool> PgVirtualObjectStore::TenantSuspended(const std::string& tenant) {
  return InTransaction<bool>(*pool_, [&](pqxx::work& tx) -> Result<bool> {
    auto rows = tx.exec_prepared("vcp_tenant_suspended", tenant);
    return !rows.empty() && rows[0][0].as<bool>();
  });
}

Result<std::int64_t> PgVirtualObjectStore::CredentialTtlMax(const core::VirtualClusterKey& key) {
  return InTransaction<std::int64_t>(*pool_, [&](pqxx::work& tx) -> Result<std::int64_t> {
    auto rows = tx.exec_prepared("vcp_credential_ttl_max", key.tenant);
    if (rows.empty()) return NotFound("tenant " + key.tenant + " does not exist");
    return rows[0][0].as<std::int64_t>();
  });
}

Result<core::VirtualObjectStore::ListenerCertificate> PgVirtualObjectStore::ListenerCa(
    const ListenerCertificate& created) {
  return InTransaction<ListenerCertificate>(*pool_, [&](pqxx::work& tx) -> Result<ListenerCertificate> {
    tx.exec_prepared("vcp_listener_create", created.ca_certificate, created.ca_private_key);
    auto rows = tx.exec_prepared("vcp_listener_get");
    return ListenerCertificate{rows[0][0].as<std::string>(), rows[0][1].as<std::string>()};
  });
}

Status PgVirtualObjectStore::ReplaceCaPrivateKey(const core::VirtualClusterKey& key, const std::string& expected,
                                                 const std::string& replacement) {
  return InTransaction<bool>(
             *pool_,
             [&](pqxx::work& tx) -> Result<bool> {
               if (!tx.exec_prepared("vcp_replace_ca_key", key.tenant, key.vcluster, expected, replacement).empty())
                 return true;
               if (tx.exec_prepared("vcp_version", key.tenant, key.vcluster).empty()) return ControlPlaneGone(key);
               return Aborted("the CA key of virtual control plane " + key.ToString() + " was replaced meanwhile");
             })
      .status();
}

Result<std::optional<core::VirtualObjectStore::ListenerCertificate>> PgVirtualObjectStore::StoredListenerCa() {
  using Out = std::optional<ListenerCertificate>;
  return InTransaction<Out>(*pool_, [&](pqxx::work& tx) -> Result<Out> {
    auto rows = tx.exec_prepared("vcp_listener_get");
    if (rows.empty()) return Out();
    return Out(ListenerCertificate{rows[0][0].as<std::string>(), rows[0][1].as<std::string>()});
  });
}

Status PgVirtualObjectStore::ReplaceListenerCaPrivateKey(const std::string& expected, const std::string& replacement) {
  return InTransaction<bool>(*pool_,
                             [&](pqxx::work& tx) -> Result<bool> {
                               if (!tx.exec_prepared("vcp_listener_replace_key", expected, replacement).empty())
                                 return true;
                               if (tx.exec_prepared("vcp_listener_get").empty())
                                 return NotFound("the virtual control planes' listener has no CA");
                               return Aborted("the listener CA key was replaced meanwhile");
                             })
      .status();
}

}  // namespace septa::store
