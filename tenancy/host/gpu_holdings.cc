#include "tenancy/host/gpu_holdings.h"

#include <charconv>

namespace septa::tenancy::host {

namespace {

const gpu::InventoryNode* FindNode(const std::vector<gpu::InventoryNode>& nodes, std::string_view name) {
  for (const gpu::InventoryNode& n : nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

// The "N" of "Ng.<memory>": the GPU units KAI counts for one instance.
Result<int> ComputeSlices(std::string_view profile) {
  int n = 0;
  const auto [end, ec] = std::from_chars(profile.data(), profile.data() + profile.size(), n);
  if (ec != std::errc() || n < 1 || end == profile.data() + profile.size() || *end != 'g') {
    return InvalidArgument("reservation: MIG profile \"" + std::string(profile) + "\" does not start with \"<N>g\"");
  }
  return n;
}

class Counter {
 public:
  Counter(const std::vector<gpu::InventoryNode>& nodes, bool need_products)
      : nodes_(nodes), need_products_(need_products) {}

  Status Add(std::string_view node_name, const std::string& resource, std::int64_t count,
             std::int64_t kai_milli_units) {
    out_.resources[resource] += count;
    out_.kai_milli_units += kai_milli_units;
    if (!need_products_) return Status::Ok();
    const gpu::InventoryNode* node = FindNode(nodes_, node_name);
    if (node == nullptr)
      return NotFound("reservation: node \"" + std::string(node_name) + "\" is not in the inventory");
    auto label = node->labels.find(kGpuProductLabel);
    if (label == node->labels.end() || label->second.empty()) {
      return FailedPrecondition("node \"" + node->name + "\" has no " + kGpuProductLabel + " label");
    }
    out_.by_product[label->second][resource] += count;
    return Status::Ok();
  }

  GpuHoldings& holdings() { return out_; }

 private:
  const std::vector<gpu::InventoryNode>& nodes_;
  bool need_products_;
  GpuHoldings out_;
};

}  // namespace

std::string MigResourceName(std::string_view profile) {
  std::string name = "nvidia.com/mig-" + std::string(profile);
  for (char& c : name) {
    if (c == '+') c = '.';
  }
  return name;
}

Result<GpuHoldings> HoldingsOf(const Reservation& reservation, const std::vector<gpu::InventoryNode>& nodes,
                               bool need_products) {
  Counter counter(nodes, need_products);
  switch (reservation.tier) {
    case gpu::Tier::kShared:
      counter.holdings().resources[kGpuResource] = 0;
      for (const ReservedShare& share : reservation.shares) counter.holdings().kai_milli_units += share.milli_gpu;
      break;
    case gpu::Tier::kIsolated:
      counter.holdings().resources[kGpuResource] = 0;
      for (const ReservedMig& mig : reservation.mig) {
        auto slices = ComputeSlices(mig.profile);
        SEPTA_RETURN_IF_ERROR(slices);
        SEPTA_RETURN_IF_ERROR(counter.Add(mig.node, MigResourceName(mig.profile), 1, 1000LL * *slices));
      }
      break;
    case gpu::Tier::kDedicated:
      counter.holdings().resources[kGpuResource] = 0;
      for (const ReservedGpu& g : reservation.gpus) SEPTA_RETURN_IF_ERROR(counter.Add(g.node, kGpuResource, 1, 1000));
      break;
    case gpu::Tier::kExclusive:
      counter.holdings().resources[kGpuResource] = 0;
      for (const std::string& name : reservation.nodes) {
        const gpu::InventoryNode* node = FindNode(nodes, name);
        if (node == nullptr) return NotFound("reservation: node \"" + name + "\" is not in the inventory");
        const auto gpus = static_cast<std::int64_t>(node->gpus.size());
        if (gpus > 0) SEPTA_RETURN_IF_ERROR(counter.Add(name, kGpuResource, gpus, 1000 * gpus));
      }
      break;
  }
  return std::move(counter.holdings());
}

}  // namespace septa::tenancy::host
