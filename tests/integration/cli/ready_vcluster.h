// A virtual cluster made READY for septactl's tests against an in-process
// septad without a provisioner: its simulated control plane started and
// its row moved to READY at that endpoint, as the provisioner would.
#pragma once

#include <string>

#include "common/status.h"
#include "services/app/septad_app.h"
#include "services/store/migration.h"
#include "services/store/pg_store.h"
#include "services/vcp/simulated_control_planes.h"

namespace septa::test {

// The endpoint the virtual cluster serves at.
inline Result<std::string> MakeVclusterReady(app::SeptadApp& app, const std::string& database_url,
                                             const std::string& tenant, const std::string& name) {
  auto serving = app.control_planes().Ensure(tenant, name);
  SEPTA_RETURN_IF_ERROR(serving);
  auto migrations = store::EmbeddedMigrations();
  SEPTA_RETURN_IF_ERROR(migrations);
  store::PgStore store(store::PgStoreOptions{.database_url = database_url, .pool_size = 1, .migrations = *migrations});
  SEPTA_RETURN_IF_ERROR(store.Transact(core::TxMode::kReadWrite, [&](core::Tx& tx) -> Status {
    auto vc = tx.VirtualClusters().Get(tenant, name);
    SEPTA_RETURN_IF_ERROR(vc);
    tenancy::VirtualCluster next = *vc;
    next.state = tenancy::VirtualClusterState::kReady;
    next.endpoint = serving->endpoint;
    next.version = vc->version + 1;
    return tx.VirtualClusters().Update(next, vc->version);
  }));
  return serving->endpoint;
}

}  // namespace septa::test
