// septa-vcp-admin: what the virtual-control-plane end-to-end test needs and
// septad does not offer yet (the provisioner ensures control planes; tenant
// credentials are the credentials issue), straight on the database:
//   createdb <testdb dir> <name>   a database on the test run's PostgreSQL; prints its URL
//   kubeconfig <database url> <listener https://host:port> <tenant>/<vcluster>
//                                  stores the tenant, virtual cluster and control plane (those
//                                  missing; the listener serves only a virtual cluster that
//                                  exists) and prints an admin kubeconfig
//   rows <database url> <tenant>/<vcluster>   prints how many objects are stored
// Tests only: never installed.
#include <iostream>
#include <pqxx/pqxx>

#include "services/base/file.h"
#include "services/base/secure_random.h"
#include "services/store/connection_url.h"
#include "services/store/database_admin.h"
#include "services/store/pg_virtual_object_store.h"
#include "services/vcp/simulated_control_planes.h"
#include "tests/support/test_database.h"

namespace {

using namespace septa;

int Fail(const Status& status) {
  std::cerr << "septa-vcp-admin: " << status.message() << "\n";
  return 1;
}

Result<core::VirtualClusterKey> ParseKey(const std::string& text) {
  auto key = core::ParseVirtualClusterKey(text);
  if (!key) return InvalidArgument("expected <tenant>/<vcluster>, got \"" + text + "\"");
  return *key;
}

int CreateDatabase(const std::string& testdb_dir, const std::string& name) {
  auto server_url = base::ReadFile(test::UrlFileOf(testdb_dir).string());
  if (!server_url.ok()) return Fail(server_url.status());
  std::string url = *server_url;
  while (!url.empty() && (url.back() == '\n' || url.back() == ' ')) url.pop_back();
  if (Status st = store::CreateDatabaseIfMissing(url, name); !st.ok()) return Fail(st);
  auto database_url = store::WithDatabase(url, name);
  if (!database_url.ok()) return Fail(database_url.status());
  std::cout << *database_url << "\n";
  return 0;
}

int Kubeconfig(const std::string& database_url, const std::string& listener, const std::string& key_text) {
  auto key = ParseKey(key_text);
  if (!key.ok()) return Fail(key.status());
  try {  // rows as a create writes them, never provisioned (the tests run septad without a provisioner)
    pqxx::connection c(database_url);
    pqxx::work tx(c);
    tx.exec_params(
        "INSERT INTO tenants (name, trust_tier, state, create_time, update_time, version)"
        " VALUES ($1, 'shared', 'active', now(), now(), 1) ON CONFLICT DO NOTHING",
        key->tenant);
    tx.exec_params(
        "INSERT INTO virtual_clusters (tenant, name, capacity_tier, capacity, queue_priority, queue_over_quota_weight,"
        " state, generation, version, create_time, update_time)"
        " VALUES ($1, $2, 'shared', '{}', 100, 1, 'PROVISIONING', 1, 1, now(), now()) ON CONFLICT DO NOTHING",
        key->tenant, key->vcluster);
    tx.commit();
  } catch (const std::exception& e) {
    return Fail(Status(Code::kUnavailable, std::string("writing the rows: ") + e.what()));
  }
  store::PgVirtualObjectStore store({.database_url = database_url});
  if (Status st = vcp::StoreControlPlane(store, *key); !st.ok()) return Fail(st);
  auto ca = vcp::ListenerCa(store);  // septad's, which it created at start
  if (!ca.ok()) return Fail(ca.status());
  base::SecureRandom random;
  std::string digest;
  auto kubeconfig = vcp::IssueAdminKubeconfig(
      store, random, *key, listener + "/vc/" + key->tenant + "/" + key->vcluster, ca->ca_certificate, digest);
  if (!kubeconfig.ok()) return Fail(kubeconfig.status());
  std::cout << *kubeconfig;
  return 0;
}

int Rows(const std::string& database_url, const std::string& key_text) {
  auto key = ParseKey(key_text);
  if (!key.ok()) return Fail(key.status());
  store::PgVirtualObjectStore store({.database_url = database_url});
  auto objects = store.LoadObjects(*key);
  if (!objects.ok()) return Fail(objects.status());
  std::cout << objects->size() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "createdb" && argc == 4) return CreateDatabase(argv[2], argv[3]);
  if (command == "kubeconfig" && argc == 5) return Kubeconfig(argv[2], argv[3], argv[4]);
  if (command == "rows" && argc == 4) return Rows(argv[2], argv[3]);
  std::cerr << "usage: septa-vcp-admin createdb <testdb dir> <name> | kubeconfig <database url> <listener> "
               "<tenant>/<vcluster> | rows <database url> <tenant>/<vcluster>\n";
  return 2;
}
