// The repositories of GPU capacity on PostgreSQL (migrations/0003_capacity.sql):
// virtual clusters, the GPU inventory and reservations. Like the other
// repositories (pg_repositories.h), each does its statements through the
// transaction's PgWork and prepares them on every new connection.
#pragma once

#include <pqxx/pqxx>

#include "services/core/store.h"
#include "services/store/pg_work.h"

namespace septa::store {

class PgVirtualClusters final : public core::VirtualClusterRepository {
 public:
  explicit PgVirtualClusters(PgWork& work) : work_(work) {}
  static void Prepare(pqxx::connection& c);
  Result<tenancy::VirtualCluster> Get(const std::string& tenant, const std::string& name) override;
  Result<std::vector<tenancy::VirtualCluster>> List(const core::VirtualClusterQuery& query) override;
  Status Insert(const tenancy::VirtualCluster& vcluster) override;
  Status Update(const tenancy::VirtualCluster& vcluster, std::int64_t expected_version) override;
  Status Delete(const std::string& tenant, const std::string& name, std::int64_t expected_version) override;

 private:
  // After an UPDATE/DELETE guarded by version matched nothing: why.
  Status VersionMismatch(const std::string& tenant, const std::string& name, std::int64_t expected_version);
  PgWork& work_;
};

// GPUs come back ordered by index and MIG instances by start slice.
class PgInventory final : public core::InventoryRepository {
 public:
  explicit PgInventory(PgWork& work) : work_(work) {}
  static void Prepare(pqxx::connection& c);
  Status PutNode(const gpu::InventoryNode& node, TimePoint observed) override;
  Status DeleteNode(const std::string& name) override;
  Result<gpu::InventoryNode> GetNode(const std::string& name) override;
  Result<std::vector<gpu::InventoryNode>> ListNodes() override;
  Status PutLayoutTarget(const tenancy::MigLayoutTarget& target) override;
  Result<std::vector<tenancy::MigLayoutTarget>> ListLayoutTargets() override;
  Status DeleteLayoutTargets(const std::string& node) override;

 private:
  PgWork& work_;
};

// A reservation's rows come back in key order: shares and whole GPUs by
// (node, gpu), MIG instances by (node, gpu, start), nodes by name.
class PgReservations final : public core::ReservationRepository {
 public:
  explicit PgReservations(PgWork& work) : work_(work) {}
  static void Prepare(pqxx::connection& c);
  Status Insert(const tenancy::Reservation& reservation) override;
  Status Delete(const std::string& tenant, const std::string& vcluster) override;
  Status MarkReleasing(const std::string& tenant, const std::string& vcluster) override;
  Result<tenancy::Reservation> Get(const std::string& tenant, const std::string& vcluster) override;
  Result<std::vector<tenancy::Reservation>> List() override;
  Result<std::vector<tenancy::Reservation>> ListOnNode(const std::string& node) override;
  Result<std::int64_t> Epoch() override;

 private:
  PgWork& work_;
};

}  // namespace septa::store
