#include "tenancy/capacity_placement.h"

#include <algorithm>
#include <map>

#include "tenancy/virtual_cluster_ref.h"

namespace septa::tenancy {
namespace {

using gpu::Placement;
using gpu::PlacementRequest;
using gpu::Tier;

// A shared budget is cut into fractions no smaller than this when a larger
// one finds no GPU.
constexpr int kSmallestShareMilli = 50;

PlacementRequest BaseRequest(const std::string& tenant, Tier tier, const std::string& model,
                             const std::vector<gpu::Taint>& tolerations) {
  PlacementRequest r;
  r.tenant = tenant;
  r.tier = tier;
  r.tolerations = tolerations;
  if (!model.empty()) r.models = {model};
  return r;
}

// Collects what was placed so a shortfall can give it all back.
class Placing {
 public:
  Placing(gpu::PlacementEngine& engine, const std::string& tenant, const std::string& vcluster, Tier tier)
      : engine_(engine) {
    placed_.reservation.tenant = tenant;
    placed_.reservation.vcluster = vcluster;
    placed_.reservation.tier = tier;
  }
  ~Placing() {
    if (!kept_) ReleaseAllocations(engine_, placed_.allocations);
  }

  Result<Placement> Place(const PlacementRequest& r) {
    auto p = engine_.Place(r);
    if (p.ok()) placed_.allocations.push_back(p->allocation_id);
    return p;
  }
  Reservation& reservation() { return placed_.reservation; }
  PlacedReservation Keep() {
    kept_ = true;
    return std::move(placed_);
  }

 private:
  gpu::PlacementEngine& engine_;
  PlacedReservation placed_;
  bool kept_ = false;
};

std::string OnModel(const std::string& model) { return model.empty() ? "" : " on " + model; }

Status Shortfall(const std::string& field, const std::string& description) {
  return Status(Code::kResourceExhausted, "not enough free GPU capacity: " + field + ": " + description,
                {{field, description}});
}

Status PlaceShared(Placing& placing, const std::string& tenant, const Capacity& c,
                   const std::vector<gpu::Taint>& tolerations) {
  int left = c.milli_gpu;
  std::int64_t memory_left = c.gpu_memory_mib;
  int chunk = std::min(left, gpu::kMilliPerGpu);
  while (left > 0) {
    chunk = std::min(chunk, left);
    PlacementRequest r = BaseRequest(tenant, Tier::kShared, "", tolerations);
    r.milli_gpu = chunk;
    auto p = placing.Place(r);
    if (!p.ok()) {
      if (chunk / 2 >= kSmallestShareMilli) {
        chunk /= 2;
        continue;
      }
      return Shortfall("capacity.shared.milli_gpu", std::to_string(c.milli_gpu) + " milli-GPU requested, " +
                                                        std::to_string(c.milli_gpu - left) +
                                                        " found on time-shared GPUs");
    }
    const std::int64_t memory = chunk == left ? memory_left : c.gpu_memory_mib * chunk / c.milli_gpu;
    placing.reservation().shares.push_back({p->node_name, p->gpus[0], chunk, memory});
    left -= chunk;
    memory_left -= memory;
  }
  return Status::Ok();
}

Status PlaceMig(gpu::PlacementEngine& engine, Placing& placing, const std::string& tenant, const Capacity& c,
                const std::vector<gpu::Taint>& tolerations) {
  for (std::size_t i = 0; i < c.mig.size(); ++i) {
    const MigCapacity& want = c.mig[i];
    for (int n = 0; n < want.count; ++n) {
      PlacementRequest r = BaseRequest(tenant, Tier::kIsolated, want.model, tolerations);
      r.mig_profile = want.profile;
      auto p = placing.Place(r);
      if (!p.ok()) {
        return Shortfall("capacity.mig[" + std::to_string(i) + "]", std::to_string(want.count) + " × " + want.profile +
                                                                        " requested, " + std::to_string(n) + " free" +
                                                                        OnModel(want.model));
      }
      const gpu::Allocation& a = engine.allocations().at(p->allocation_id);
      placing.reservation().mig.push_back({p->node_name, p->gpus[0], a.mig_profile, a.mig_start, a.mig_slices});
    }
  }
  return Status::Ok();
}

Status PlaceWholeGpus(Placing& placing, const std::string& tenant, const Capacity& c,
                      const std::vector<gpu::Taint>& tolerations) {
  int left = c.count;
  int chunk = std::min(left, gpu::kMaxGpusPerNode);
  while (left > 0) {
    chunk = std::min(chunk, left);
    PlacementRequest r = BaseRequest(tenant, Tier::kDedicated, c.model, tolerations);
    r.gpu_count = chunk;
    auto p = placing.Place(r);
    if (!p.ok()) {
      if (--chunk > 0) continue;
      return Shortfall("capacity.gpus.count", std::to_string(c.count) + " whole GPUs requested, " +
                                                  std::to_string(c.count - left) + " free" + OnModel(c.model));
    }
    for (int g : p->gpus) placing.reservation().gpus.push_back({p->node_name, g});
    left -= chunk;
  }
  return Status::Ok();
}

Status PlaceNodes(Placing& placing, const std::string& tenant, const Capacity& c,
                  const std::vector<gpu::Taint>& tolerations) {
  for (int n = 0; n < c.count; ++n) {
    PlacementRequest r = BaseRequest(tenant, Tier::kExclusive, c.model, tolerations);
    r.gpu_count = 1;  // a GPU node
    auto p = placing.Place(r);
    if (!p.ok()) {
      return Shortfall("capacity.nodes.count", std::to_string(c.count) + " whole nodes requested, " +
                                                   std::to_string(n) + " free" + OnModel(c.model));
    }
    placing.reservation().nodes.push_back(p->node_name);
  }
  return Status::Ok();
}

}  // namespace

Result<PlacedReservation> PlaceCapacity(gpu::PlacementEngine& engine, const std::string& tenant,
                                        const std::string& vcluster, const Capacity& capacity,
                                        const std::vector<gpu::Taint>& tolerations) {
  Placing placing(engine, tenant, vcluster, capacity.tier);
  Status placed;
  switch (capacity.tier) {
    case Tier::kShared: placed = PlaceShared(placing, tenant, capacity, tolerations); break;
    case Tier::kIsolated: placed = PlaceMig(engine, placing, tenant, capacity, tolerations); break;
    case Tier::kDedicated: placed = PlaceWholeGpus(placing, tenant, capacity, tolerations); break;
    case Tier::kExclusive: placed = PlaceNodes(placing, tenant, capacity, tolerations); break;
  }
  SEPTA_RETURN_IF_ERROR(placed);
  return placing.Keep();
}

Result<std::vector<std::uint64_t>> HoldReservation(gpu::PlacementEngine& engine, const Reservation& r) {
  std::vector<gpu::RecordedPlacement> records;
  for (const ReservedShare& s : r.shares)
    records.push_back({r.tenant, Tier::kShared, s.node, {s.gpu}, s.milli_gpu, "", -1});
  for (const ReservedMig& m : r.mig) {
    records.push_back({r.tenant, Tier::kIsolated, m.node, {m.gpu}, 0, m.profile, m.start});
  }
  std::map<std::string, std::vector<int>> gpus_by_node;  // whole GPUs were placed per node
  for (const ReservedGpu& g : r.gpus) gpus_by_node[g.node].push_back(g.gpu);
  for (auto& [node, gpus] : gpus_by_node) {
    records.push_back({r.tenant, Tier::kDedicated, node, std::move(gpus), gpu::kMilliPerGpu, "", -1});
  }
  for (const std::string& node : r.nodes) records.push_back({r.tenant, Tier::kExclusive, node, {}, 0, "", -1});
  std::vector<std::uint64_t> held;
  for (const gpu::RecordedPlacement& record : records) {
    auto p = engine.Hold(record);
    if (!p.ok()) {
      ReleaseAllocations(engine, held);
      return Status(p.status().code(), "reservation of " + tenancy::VirtualClusterText(r.tenant, r.vcluster) + ": " +
                                           p.status().message());
    }
    held.push_back(p->allocation_id);
  }
  return held;
}

void ReleaseAllocations(gpu::PlacementEngine& engine, const std::vector<std::uint64_t>& allocations) {
  for (std::uint64_t id : allocations) {
    // NotFound only: an id given back twice holds nothing any more.
    (void)engine.Release(id);
  }
}

}  // namespace septa::tenancy
