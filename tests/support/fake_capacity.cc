#include "tests/support/fake_capacity.h"

#include <algorithm>
#include <regex>
#include <set>

namespace septa::core {
namespace {

using gpu::InventoryNode;
using tenancy::Reservation;
using tenancy::VirtualCluster;

using Key = std::pair<std::string, std::string>;

std::string VirtualClusterName(const std::string& tenant, const std::string& name) {
  return "virtual cluster \"" + tenant + "/" + name + "\"";
}
std::string ReservationName(const std::string& tenant, const std::string& vcluster) {
  return "reservation of virtual cluster \"" + tenant + "/" + vcluster + "\"";
}

// The CHECK constraints of virtual_clusters, in PostgreSQL's order (by name).
Status CheckVirtualClusterRow(const VirtualCluster& v) {
  const std::pair<const char*, const std::optional<std::int64_t>&> limits[] = {
      {"api_limits.object_bytes", v.api_limits.object_bytes},
      {"api_limits.objects", v.api_limits.objects},
      {"api_limits.requests_in_flight", v.api_limits.requests_in_flight},
      {"api_limits.watches", v.api_limits.watches}};
  for (const auto& [field, limit] : limits) {
    if (limit && *limit < 0) return InvalidField(field, "must not be negative");
  }
  if (v.generation <= 0) return InvalidField("generation", "must be positive");
  if (!IsDnsLabel(v.name, 40)) {
    return InvalidField("name",
                        "must be a DNS-1123 label of 1-40 characters: lower-case letters, digits and '-', "
                        "starting and ending with a letter or digit");
  }
  if (v.queue.over_quota_weight < 0) return InvalidField("queue.over_quota_weight", "must not be negative");
  if (v.quota.cpu_milli < 0) return InvalidField("quota.cpu_milli", "must not be negative");
  if (v.quota.memory_mib < 0) return InvalidField("quota.memory_mib", "must not be negative");
  if (v.quota.pods < 0) return InvalidField("quota.pods", "must not be negative");
  if (v.version <= 0) return InvalidField("version", "must be positive");
  return Status::Ok();
}

// migrations/0016's unique index: no other row holds `v`'s host namespace.
template <typename Rows>
Status CheckHostNamespaceFree(const Rows& vclusters, const VirtualCluster& v) {
  if (v.host_namespace.empty()) return Status::Ok();
  for (const auto& [key, other] : vclusters) {
    if (other.host_namespace == v.host_namespace && (other.tenant != v.tenant || other.name != v.name)) {
      return Status(Code::kAlreadyExists, "host_namespace: is the host namespace of another virtual cluster",
                    {{"host_namespace", "is the host namespace of another virtual cluster"}});
    }
  }
  return Status::Ok();
}

VirtualCluster TruncatedTimes(VirtualCluster v) {
  v.create_time = Truncated(v.create_time);
  v.update_time = Truncated(v.update_time);
  for (auto& c : v.conditions) c.last_transition_time = Truncated(c.last_transition_time);
  return v;
}

// The CHECK constraints of inventory_nodes, inventory_gpus and
// inventory_mig_instances, in PostgreSQL's order; the instances' keys row by
// row after their checks.
Status CheckNodeRow(const InventoryNode& n) {
  static const std::regex kSubdomain("^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$");
  static const std::set<std::string> kMigConfigStates = {"", "pending", "rebooting", "success", "failed"};
  if (n.cpu_milli < 0) return InvalidField("cpu_milli", "must not be negative");
  if (n.memory_mib < 0) return InvalidField("memory_mib", "must not be negative");
  if (!kMigConfigStates.count(n.mig_config_state)) {
    return InvalidField("mig_config_state", "must be empty, pending, rebooting, success or failed");
  }
  if (n.name.size() > 253 || !std::regex_match(n.name, kSubdomain)) {
    return InvalidField("name",
                        "must be a DNS-1123 subdomain of at most 253 characters: lower-case letters, digits, '-' "
                        "and '.', starting and ending with a letter or digit");
  }
  return Status::Ok();
}
Status CheckGpuRows(const InventoryNode& n) {
  for (const auto& g : n.gpus) {
    if (g.index < 0) return InvalidField("gpus.index", "must not be negative");
    if (g.model.empty()) return InvalidField("gpus.model", "must not be empty");
  }
  for (const auto& g : n.gpus) {
    std::set<int> starts, gi_ids;
    for (const auto& m : g.mig_layout) {
      const auto gi_id = g.mig_gi_ids.find(m.start);
      if (gi_id != g.mig_gi_ids.end() && gi_id->second < 0) {
        return InvalidField("gpus.mig_gi_ids", "must not be negative");
      }
      if (m.profile < 0) return InvalidField("gpus.mig_layout.profile", "must not be negative");
      if (m.start < 0) return InvalidField("gpus.mig_layout.start", "must not be negative");
      if (!starts.insert(m.start).second) {
        return InvalidField("gpus.mig_layout", "two instances of one GPU start at the same slice");
      }
      if (gi_id != g.mig_gi_ids.end() && !gi_ids.insert(gi_id->second).second) {
        return InvalidField("gpus.mig_gi_ids", "two instances of one GPU have the same GPU-instance id");
      }
    }
  }
  return Status::Ok();
}

// PgInventory's own check: a GPU-instance id goes on its instance's row.
Status CheckGpuInstanceIdsNameInstances(const InventoryNode& n) {
  for (const auto& g : n.gpus) {
    for (const auto& id : g.mig_gi_ids) {
      const int start = id.first;  // a named copy: clang 14's lambdas cannot capture structured bindings
      if (std::none_of(g.mig_layout.begin(), g.mig_layout.end(), [&](const auto& m) { return m.start == start; })) {
        return InvalidField("gpus.mig_gi_ids", "no MIG instance of GPU " + std::to_string(g.index) +
                                                   " starts at slice " + std::to_string(start));
      }
    }
  }
  return Status::Ok();
}

// What the hold rows of migrations/0003_capacity.sql say: per node, held for
// its GPUs or exclusively; per GPU, its mode, holders and sum of shares.
struct Holds {
  struct Hold {
    std::string mode;
    int holders = 0;
    int milli_gpu = 0;
  };
  std::map<std::string, Hold> nodes;
  std::map<std::pair<std::string, int>, Hold> gpus;
};

const InventoryNode* FindNode(const FakeStore::State& s, const std::string& name) {
  const auto it = s.inventory.find(name);
  return it == s.inventory.end() ? nullptr : &it->second;
}

// Takes the holds of one reservation's rows as the triggers of
// migrations/0003_capacity.sql do, refusing where the database's
// constraints would, in the order in which the database checks them.
class Booking {
 public:
  explicit Booking(const FakeStore::State& s) : s_(s) {}

  const Holds& holds() const { return holds_; }

  Status Book(const Reservation& r) {
    const std::string tier(gpu::TierName(r.tier));
    // PgReservations inserts the kinds in this order.
    for (const auto& node : r.nodes) SEPTA_RETURN_IF_ERROR(TakeNode(node, "exclusive"));
    for (const auto& node : r.nodes) {
      SEPTA_RETURN_IF_ERROR(CheckTier(tier, "exclusive", "nodes", "only an exclusive reservation holds whole nodes"));
      if (holds_.nodes[node].mode != "exclusive") return Aborted("the node holds other reservations");
    }
    for (const auto& g : r.gpus) SEPTA_RETURN_IF_ERROR(TakeGpu(g.node, g.gpu, "whole"));
    for (const auto& g : r.gpus) {
      SEPTA_RETURN_IF_ERROR(CheckTier(tier, "dedicated", "gpus", "only a dedicated reservation holds whole GPUs"));
      if (holds_.gpus[{g.node, g.gpu}].mode != "whole") return Aborted("the GPU is held by another reservation");
    }
    SEPTA_RETURN_IF_ERROR(BookMig(r, tier));
    return BookShares(r, tier);
  }

 private:
  Status TakeNode(const std::string& node, const std::string& mode) {
    if (!FindNode(s_, node)) return NotFound("no such node in the inventory");
    Holds::Hold& hold = holds_.nodes[node];
    if (hold.holders++ == 0) hold.mode = mode;
    if (hold.mode == "exclusive" && hold.holders > 1) return Aborted("the node is reserved exclusively");
    return Status::Ok();
  }
  Status TakeGpu(const std::string& node, int gpu, const std::string& mode) {
    SEPTA_RETURN_IF_ERROR(TakeNode(node, "gpus"));
    const auto& gpus = FindNode(s_, node)->gpus;
    if (std::none_of(gpus.begin(), gpus.end(), [&](const gpu::InventoryGpu& g) { return g.index == gpu; })) {
      return NotFound("no such GPU in the inventory");
    }
    Holds::Hold& hold = holds_.gpus[{node, gpu}];
    if (hold.holders++ == 0) hold.mode = mode;
    if (hold.mode == "whole" && hold.holders > 1) return Aborted("the GPU is reserved whole by another reservation");
    return Status::Ok();
  }
  static Status CheckTier(const std::string& tier, const std::string& wanted, const std::string& field,
                          const std::string& description) {
    return tier == wanted ? Status::Ok() : InvalidField(field, description);
  }

  Status BookMig(const Reservation& r, const std::string& tier) {
    for (const auto& m : r.mig) {
      SEPTA_RETURN_IF_ERROR(TakeGpu(m.node, m.gpu, "mig"));
      if (m.profile.empty()) return InvalidField("mig.profile", "must not be empty");
      if (m.start < 0 || m.slices < 1 || m.start + m.slices > 8) {
        return InvalidField("mig", "slices must lie within the GPU's 8 memory slices");
      }
      auto& taken = mig_[{m.node, m.gpu}];
      if (taken & SliceMask(m)) return Aborted("the MIG slices are taken on that GPU");
      taken |= SliceMask(m);
    }
    for (const auto& m : r.mig) {
      SEPTA_RETURN_IF_ERROR(CheckTier(tier, "isolated", "mig", "only an isolated reservation holds MIG instances"));
      if (holds_.gpus[{m.node, m.gpu}].mode != "mig") {
        return Aborted("the GPU holds shares or a whole-GPU reservation, never MIG instances beside them");
      }
    }
    return Status::Ok();
  }
  Status BookShares(const Reservation& r, const std::string& tier) {
    std::set<std::pair<std::string, int>> gpus;
    for (const auto& s : r.shares) {
      SEPTA_RETURN_IF_ERROR(TakeGpu(s.node, s.gpu, "shared"));
      if (s.gpu_memory_mib < 0) return InvalidField("shares.gpu_memory_mib", "must not be negative");
      if (s.milli_gpu < 1 || s.milli_gpu > 1000) return InvalidField("shares.milli_gpu", "must be between 1 and 1000");
      if (!gpus.insert({s.node, s.gpu}).second) return InvalidField("shares", "a GPU appears twice");
    }
    for (const auto& s : r.shares) {
      SEPTA_RETURN_IF_ERROR(CheckTier(tier, "shared", "shares", "only a shared reservation holds GPU shares"));
      Holds::Hold& hold = holds_.gpus[{s.node, s.gpu}];
      if (hold.mode != "shared") {
        return Aborted("the GPU holds MIG instances or a whole-GPU reservation, never shares beside them");
      }
      hold.milli_gpu += s.milli_gpu;
      if (hold.milli_gpu > 1000) return Aborted("the GPU's shares would exceed 1000 milli-GPU");
    }
    return Status::Ok();
  }

  static unsigned SliceMask(const tenancy::ReservedMig& m) { return ((1u << m.slices) - 1u) << m.start; }

  const FakeStore::State& s_;
  Holds holds_;
  // The memory slices taken per GPU (bit i: slice i), for the exclusion constraint.
  std::map<std::pair<std::string, int>, unsigned> mig_;
};

// The holds and MIG slices of every stored reservation (each was booked
// when inserted, so none is refused).
Result<Booking> Booked(const FakeStore::State& s) {
  Booking booking(s);
  for (const auto& [key, r] : s.reservations) SEPTA_RETURN_IF_ERROR(booking.Book(r));
  return booking;
}

Reservation InKeyOrder(Reservation r) {
  std::sort(r.shares.begin(), r.shares.end(),
            [](const auto& a, const auto& b) { return std::tie(a.node, a.gpu) < std::tie(b.node, b.gpu); });
  std::sort(r.mig.begin(), r.mig.end(), [](const auto& a, const auto& b) {
    return std::tie(a.node, a.gpu, a.start) < std::tie(b.node, b.gpu, b.start);
  });
  std::sort(r.gpus.begin(), r.gpus.end(),
            [](const auto& a, const auto& b) { return std::tie(a.node, a.gpu) < std::tie(b.node, b.gpu); });
  std::sort(r.nodes.begin(), r.nodes.end());
  return r;
}

}  // namespace

Result<VirtualCluster> FakeVirtualClusters::Get(const std::string& tenant, const std::string& name) {
  const auto it = w_.s.vclusters.find({tenant, name});
  if (it == w_.s.vclusters.end()) return NotFound(VirtualClusterName(tenant, name) + " not found");
  return it->second;
}

Result<std::vector<VirtualCluster>> FakeVirtualClusters::List(const VirtualClusterQuery& query) {
  SEPTA_RETURN_IF_ERROR(CheckLimit(query.limit));
  std::vector<VirtualCluster> vclusters;
  for (auto it = w_.s.vclusters.upper_bound({query.after_tenant, query.after_name});
       it != w_.s.vclusters.end() && static_cast<int>(vclusters.size()) < query.limit; ++it) {
    const VirtualCluster& v = it->second;
    if (!query.tenant.empty() && v.tenant != query.tenant) continue;
    if (query.state && v.state != *query.state) continue;
    vclusters.push_back(v);
  }
  return vclusters;
}

Status FakeVirtualClusters::Insert(const VirtualCluster& v) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  if (!w_.s.tenants.count(v.tenant)) return NotFound("tenant \"" + v.tenant + "\" not found");
  SEPTA_RETURN_IF_ERROR(CheckVirtualClusterRow(v));
  if (w_.s.vclusters.count({v.tenant, v.name})) return AlreadyExists("a virtual cluster with this name already exists");
  SEPTA_RETURN_IF_ERROR(CheckHostNamespaceFree(w_.s.vclusters, v));
  w_.s.vclusters.emplace(Key{v.tenant, v.name}, TruncatedTimes(v));
  return Status::Ok();
}

Status FakeVirtualClusters::Update(const VirtualCluster& v, std::int64_t expected_version) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  const auto it = w_.s.vclusters.find({v.tenant, v.name});
  if (it == w_.s.vclusters.end()) return NotFound(VirtualClusterName(v.tenant, v.name) + " not found");
  if (it->second.version != expected_version) {
    return Aborted(VirtualClusterName(v.tenant, v.name) + " is at version " + std::to_string(it->second.version) +
                   ", not " + std::to_string(expected_version));
  }
  SEPTA_RETURN_IF_ERROR(CheckVirtualClusterRow(v));
  SEPTA_RETURN_IF_ERROR(CheckHostNamespaceFree(w_.s.vclusters, v));
  const TimePoint created = it->second.create_time;  // immutable, as in PgStore
  it->second = TruncatedTimes(v);
  it->second.create_time = created;
  return Status::Ok();
}

Status FakeVirtualClusters::Delete(const std::string& tenant, const std::string& name, std::int64_t expected_version) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  const auto it = w_.s.vclusters.find({tenant, name});
  if (it == w_.s.vclusters.end()) return NotFound(VirtualClusterName(tenant, name) + " not found");
  if (it->second.version != expected_version) {
    return Aborted(VirtualClusterName(tenant, name) + " is at version " + std::to_string(it->second.version) +
                   ", not " + std::to_string(expected_version));
  }
  if (w_.s.reservations.count({tenant, name})) {
    return FailedPrecondition("a reservation still holds capacity for the virtual cluster");
  }
  w_.s.vclusters.erase(it);
  std::erase_if(w_.s.credentials,
                [&](const auto& c) { return c.second.tenant == tenant && c.second.vcluster == name; });
  return Status::Ok();
}

// The observation time is kept by PgStore for operators; the record has no field for it.
Status FakeInventory::PutNode(const InventoryNode& node, TimePoint /*observed*/) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  std::set<int> indexes;
  for (const auto& g : node.gpus) {
    if (!indexes.insert(g.index).second) {
      return InvalidField("gpus", "GPU index " + std::to_string(g.index) + " appears twice");
    }
  }
  SEPTA_RETURN_IF_ERROR(CheckGpuInstanceIdsNameInstances(node));
  SEPTA_RETURN_IF_ERROR(CheckNodeRow(node));
  auto booked = Booked(w_.s);
  SEPTA_RETURN_IF_ERROR(booked);
  for (const auto& [gpu, hold] : booked->holds().gpus) {
    if (gpu.first == node.name && !indexes.count(gpu.second)) {
      return FailedPrecondition("capacity is reserved on a GPU that left the node");
    }
  }
  SEPTA_RETURN_IF_ERROR(CheckGpuRows(node));
  InventoryNode row = node;
  std::sort(row.gpus.begin(), row.gpus.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  for (auto& g : row.gpus) {
    std::sort(g.mig_layout.begin(), g.mig_layout.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  }
  std::erase_if(w_.s.layout_targets,
                [&](const auto& t) { return t.first.first == node.name && !indexes.count(t.first.second); });
  w_.s.inventory[row.name] = std::move(row);
  ++w_.s.capacity_epoch;
  return Status::Ok();
}

Status FakeInventory::DeleteNode(const std::string& name) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  auto booked = Booked(w_.s);
  SEPTA_RETURN_IF_ERROR(booked);
  if (booked->holds().nodes.count(name)) {
    return FailedPrecondition("capacity is reserved on the node; mark it Gone instead of deleting it");
  }
  if (!w_.s.inventory.erase(name)) return NotFound("node \"" + name + "\" is not in the inventory");
  std::erase_if(w_.s.layout_targets, [&](const auto& t) { return t.first.first == name; });
  ++w_.s.capacity_epoch;
  return Status::Ok();
}

Result<InventoryNode> FakeInventory::GetNode(const std::string& name) {
  const InventoryNode* node = FindNode(w_.s, name);
  if (!node) return NotFound("node \"" + name + "\" is not in the inventory");
  return *node;
}

Result<std::vector<InventoryNode>> FakeInventory::ListNodes() {
  std::vector<InventoryNode> nodes;
  for (const auto& [name, node] : w_.s.inventory) nodes.push_back(node);
  return nodes;
}

Status FakeInventory::PutLayoutTarget(const tenancy::MigLayoutTarget& target) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  static const std::regex kLabelValue("^[A-Za-z0-9]([-_.A-Za-z0-9]*[A-Za-z0-9])?$");
  if (!std::regex_match(target.mig_config, kLabelValue) || target.mig_config.size() > 63) {
    return InvalidField("mig_config", "must be a label value");
  }
  const InventoryNode* node = FindNode(w_.s, target.node);
  if (!node ||
      std::none_of(node->gpus.begin(), node->gpus.end(), [&](const auto& g) { return g.index == target.gpu; })) {
    return NotFound("GPU " + std::to_string(target.gpu) + " of node \"" + target.node + "\" is not in the inventory");
  }
  tenancy::MigLayoutTarget row = target;
  row.requested_at = Truncated(row.requested_at);
  w_.s.layout_targets[{target.node, target.gpu}] = std::move(row);
  ++w_.s.capacity_epoch;
  return Status::Ok();
}

Result<std::vector<tenancy::MigLayoutTarget>> FakeInventory::ListLayoutTargets() {
  std::vector<tenancy::MigLayoutTarget> targets;
  for (const auto& [key, target] : w_.s.layout_targets) targets.push_back(target);
  return targets;
}

Status FakeInventory::DeleteLayoutTargets(const std::string& node) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  if (std::erase_if(w_.s.layout_targets, [&](const auto& t) { return t.first.first == node; }) > 0) {
    ++w_.s.capacity_epoch;
  }
  return Status::Ok();
}

Status FakeReservations::Insert(const Reservation& r) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  if (w_.s.reservations.count({r.tenant, r.vcluster})) {
    return AlreadyExists("the virtual cluster already holds a reservation");
  }
  if (!w_.s.vclusters.count({r.tenant, r.vcluster})) return NotFound("no such virtual cluster");
  auto booking = Booked(w_.s);
  SEPTA_RETURN_IF_ERROR(booking);
  SEPTA_RETURN_IF_ERROR(booking->Book(r));
  w_.s.reservations.emplace(Key{r.tenant, r.vcluster}, InKeyOrder(r));
  ++w_.s.capacity_epoch;
  return Status::Ok();
}

Status FakeReservations::Delete(const std::string& tenant, const std::string& vcluster) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  w_.s.reservations.erase({tenant, vcluster});
  ++w_.s.capacity_epoch;
  return Status::Ok();
}

Status FakeReservations::MarkReleasing(const std::string& tenant, const std::string& vcluster) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  const auto it = w_.s.reservations.find({tenant, vcluster});
  if (it == w_.s.reservations.end()) return NotFound(ReservationName(tenant, vcluster) + " not found");
  it->second.releasing = true;
  ++w_.s.capacity_epoch;
  return Status::Ok();
}

Result<Reservation> FakeReservations::Get(const std::string& tenant, const std::string& vcluster) {
  const auto it = w_.s.reservations.find({tenant, vcluster});
  if (it == w_.s.reservations.end()) return NotFound(ReservationName(tenant, vcluster) + " not found");
  return it->second;
}

Result<std::vector<Reservation>> FakeReservations::List() {
  std::vector<Reservation> reservations;
  for (const auto& [key, r] : w_.s.reservations) reservations.push_back(r);
  return reservations;
}

Result<std::vector<Reservation>> FakeReservations::ListOnNode(const std::string& node) {
  std::vector<Reservation> reservations;
  for (const auto& [key, r] : w_.s.reservations) {
    if (tenancy::ReservedNodeNames(r).contains(node)) reservations.push_back(r);
  }
  return reservations;
}

Result<std::int64_t> FakeReservations::Epoch() { return w_.s.capacity_epoch; }

}  // namespace septa::core
