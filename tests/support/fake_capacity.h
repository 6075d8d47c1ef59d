// FakeStore's repositories of GPU capacity: virtual clusters, the GPU
// inventory and reservations, refusing what migrations/0003_capacity.sql
// refuses with the codes PgStore gives (the contract suite runs on both).
// Reservation rows and inventory GPUs come back in PgStore's key order.
#pragma once

#include "tests/support/fake_work.h"

namespace septa::core {

class FakeVirtualClusters final : public VirtualClusterRepository {
 public:
  explicit FakeVirtualClusters(FakeWork& w) : w_(w) {}
  Result<tenancy::VirtualCluster> Get(const std::string& tenant, const std::string& name) override;
  Result<std::vector<tenancy::VirtualCluster>> List(const VirtualClusterQuery& query) override;
  Status Insert(const tenancy::VirtualCluster& vcluster) override;
  Status Update(const tenancy::VirtualCluster& vcluster, std::int64_t expected_version) override;
  Status Delete(const std::string& tenant, const std::string& name, std::int64_t expected_version) override;

 private:
  FakeWork& w_;
};

class FakeInventory final : public InventoryRepository {
 public:
  explicit FakeInventory(FakeWork& w) : w_(w) {}
  Status PutNode(const gpu::InventoryNode& node, TimePoint observed) override;
  Status DeleteNode(const std::string& name) override;
  Result<gpu::InventoryNode> GetNode(const std::string& name) override;
  Result<std::vector<gpu::InventoryNode>> ListNodes() override;
  Status PutLayoutTarget(const tenancy::MigLayoutTarget& target) override;
  Result<std::vector<tenancy::MigLayoutTarget>> ListLayoutTargets() override;
  Status DeleteLayoutTargets(const std::string& node) override;

 private:
  FakeWork& w_;
};

class FakeReservations final : public ReservationRepository {
 public:
  explicit FakeReservations(FakeWork& w) : w_(w) {}
  Status Insert(const tenancy::Reservation& reservation) override;
  Status Delete(const std::string& tenant, const std::string& vcluster) override;
  Status MarkReleasing(const std::string& tenant, const std::string& vcluster) override;
  Result<tenancy::Reservation> Get(const std::string& tenant, const std::string& vcluster) override;
  Result<std::vector<tenancy::Reservation>> List() override;
  Result<std::vector<tenancy::Reservation>> ListOnNode(const std::string& node) override;
  Result<std::int64_t> Epoch() override;

 private:
  FakeWork& w_;
};

}  // namespace septa::core
