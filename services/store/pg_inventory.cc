#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "services/store/pg_capacity.h"
#include "services/store/pg_capacity_values.h"
#include "services/store/pg_values.h"

namespace septa::store {
namespace {

using gpu::InventoryNode;
using nlohmann::json;

// A node with its GPUs (ordered by index) and their MIG instances (by start
// slice, each [profile, start, gi_id or null]) as one JSON array, so that one
// statement reads a whole node.
constexpr char kNodeColumns[] =
    "n.name, n.health, n.cpu_milli, n.memory_mib, n.labels::text, n.taints::text, n.mig_config, "
    "n.mig_config_state, (SELECT coalesce(jsonb_agg(jsonb_build_object('index', g.index, 'model', g.model, "
    "'uuid', g.uuid, 'mig_enabled', g.mig_enabled, 'mig_layout', (SELECT coalesce(jsonb_agg(jsonb_build_array("
    "m.profile, m.start, m.gi_id) ORDER BY m.start), '[]') FROM inventory_mig_instances m WHERE m.node = g.node AND "
    "m.gpu = g.index)) ORDER BY g.index), '[]') FROM inventory_gpus g WHERE g.node = n.name)::text";

InventoryNode NodeOf(const pqxx::row& r) {
  InventoryNode node;
  node.name = r[0].as<std::string>();
  node.health = HealthOf(r[1].as<std::string>());
  node.cpu_milli = r[2].as<int>();
  node.memory_mib = r[3].as<int>();
  node.labels = LabelsOf(r[4].as<std::string>());
  node.taints = TaintsOf(r[5].as<std::string>());
  node.mig_config = r[6].as<std::string>();
  node.mig_config_state = r[7].as<std::string>();
  for (const auto& g : json::parse(r[8].as<std::string>())) {
    gpu::InventoryGpu gpu;
    gpu.index = g.at("index").get<int>();
    gpu.model = g.at("model").get<std::string>();
    gpu.uuid = g.at("uuid").get<std::string>();
    gpu.mig_enabled = g.at("mig_enabled").get<bool>();
    for (const auto& m : g.at("mig_layout")) {
      gpu.mig_layout.push_back({m.at(0).get<int>(), m.at(1).get<int>()});
      if (!m.at(2).is_null()) gpu.mig_gi_ids[m.at(1).get<int>()] = m.at(2).get<int>();
    }
    node.gpus.push_back(std::move(gpu));
  }
  return node;
}

// The statements below take GPUs and MIG instances as JSON arrays of rows.
std::string GpusJson(const InventoryNode& node) {
  json gpus = json::array();
  for (const auto& g : node.gpus) {
    gpus.push_back({{"index", g.index}, {"model", g.model}, {"uuid", g.uuid}, {"mig_enabled", g.mig_enabled}});
  }
  return gpus.dump();
}
std::string MigInstancesJson(const InventoryNode& node) {
  json instances = json::array();
  for (const auto& g : node.gpus) {
    for (const auto& m : g.mig_layout) {
      const auto gi_id = g.mig_gi_ids.find(m.start);
      instances.push_back({{"gpu", g.index},
                           {"profile", m.profile},
                           {"start", m.start},
                           {"gi_id", gi_id == g.mig_gi_ids.end() ? json(nullptr) : json(gi_id->second)}});
    }
  }
  return instances.dump();
}

// The upsert of GPUs by index could not take one index twice.
Status CheckGpuIndexesUnique(const InventoryNode& node) {
  std::set<int> seen;
  for (const auto& g : node.gpus) {
    if (!seen.insert(g.index).second) {
      return InvalidField("gpus", "GPU index " + std::to_string(g.index) + " appears twice");
    }
  }
  return Status::Ok();
}

// A GPU-instance id is stored on its instance's row: one for a slice where
// no instance starts would have nowhere to go.
Status CheckGpuInstanceIdsNameInstances(const InventoryNode& node) {
  for (const auto& g : node.gpus) {
    for (const auto& id : g.mig_gi_ids) {
      const int start = id.first;  // a named copy: clang 14's lambdas cannot capture structured bindings
      if (std::ranges::none_of(g.mig_layout, [&](const gpu::MigInstance& m) { return m.start == start; })) {
        return InvalidField("gpus.mig_gi_ids", "no MIG instance of GPU " + std::to_string(g.index) +
                                                   " starts at slice " + std::to_string(start));
      }
    }
  }
  return Status::Ok();
}

}  // namespace

void PgInventory::Prepare(pqxx::connection& c) {
  const std::string node = kNodeColumns;
  c.prepare("inventory_node_get", "SELECT " + node + " FROM inventory_nodes n WHERE n.name = $1");
  c.prepare("inventory_node_list", "SELECT " + node + " FROM inventory_nodes n ORDER BY n.name");
  c.prepare("inventory_node_put",
            "INSERT INTO inventory_nodes (name, health, cpu_milli, memory_mib, labels, taints, mig_config,"
            " mig_config_state, observe_time) VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8, septa_ts($9))"
            " ON CONFLICT (name) DO UPDATE SET health = EXCLUDED.health, cpu_milli = EXCLUDED.cpu_milli,"
            " memory_mib = EXCLUDED.memory_mib, labels = EXCLUDED.labels, taints = EXCLUDED.taints,"
            " mig_config = EXCLUDED.mig_config, mig_config_state = EXCLUDED.mig_config_state,"
            " observe_time = EXCLUDED.observe_time");
  // GPUs are updated in place rather than replaced: a reserved GPU's hold
  // refers to it, and only a GPU that left the node is deleted (refused
  // while reserved).
  c.prepare("inventory_gpus_remove_missing",
            "DELETE FROM inventory_gpus WHERE node = $1 AND index NOT IN"
            " (SELECT (g ->> 'index')::integer FROM jsonb_array_elements($2::jsonb) AS g)");
  c.prepare("inventory_gpus_put",
            "INSERT INTO inventory_gpus (node, index, model, uuid, mig_enabled)"
            " SELECT $1, g.index, g.model, g.uuid, g.mig_enabled FROM jsonb_to_recordset($2::jsonb)"
            " AS g (index integer, model text, uuid text, mig_enabled boolean)"
            " ON CONFLICT (node, index) DO UPDATE SET model = EXCLUDED.model, uuid = EXCLUDED.uuid,"
            " mig_enabled = EXCLUDED.mig_enabled");
  c.prepare("inventory_mig_clear", "DELETE FROM inventory_mig_instances WHERE node = $1");
  c.prepare("inventory_mig_put",
            "INSERT INTO inventory_mig_instances (node, gpu, profile, start, gi_id)"
            " SELECT $1, m.gpu, m.profile, m.start, m.gi_id"
            " FROM jsonb_to_recordset($2::jsonb) AS m (gpu integer, profile integer, start integer, gi_id integer)");
  c.prepare("inventory_node_delete", "DELETE FROM inventory_nodes WHERE name = $1");
  c.prepare("mig_layout_target_put",
            "INSERT INTO mig_layout_targets (node, gpu, layout, mig_config, requested_at)"
            " SELECT $1, $2, $3::jsonb, $4, septa_ts($5) WHERE EXISTS"
            " (SELECT 1 FROM inventory_gpus WHERE node = $1 AND index = $2)"
            " ON CONFLICT (node, gpu) DO UPDATE SET layout = EXCLUDED.layout, mig_config = EXCLUDED.mig_config,"
            " requested_at = EXCLUDED.requested_at");
  c.prepare("mig_layout_target_list",
            "SELECT node, gpu, layout::text, mig_config, septa_micros(requested_at) FROM mig_layout_targets"
            " ORDER BY node, gpu");
  c.prepare("mig_layout_target_delete", "DELETE FROM mig_layout_targets WHERE node = $1");
}

Status PgInventory::PutNode(const InventoryNode& n, TimePoint observed) {
  SEPTA_RETURN_IF_ERROR(CheckGpuIndexesUnique(n));
  SEPTA_RETURN_IF_ERROR(CheckGpuInstanceIdsNameInstances(n));
  const std::string gpus = GpusJson(n), instances = MigInstancesJson(n);
  return ToStatus(work_.Write([&](pqxx::transaction_base& w) {
    pqxx::result r = w.exec_prepared("inventory_node_put", n.name, std::string(gpu::NodeHealthName(n.health)),
                                     n.cpu_milli, n.memory_mib, LabelsJson(n.labels), TaintsJson(n.taints),
                                     n.mig_config, n.mig_config_state, Micros(observed));
    w.exec_prepared("inventory_gpus_remove_missing", n.name, gpus);
    w.exec_prepared("inventory_gpus_put", n.name, gpus);
    w.exec_prepared("inventory_mig_clear", n.name);
    w.exec_prepared("inventory_mig_put", n.name, instances);
    return r;
  }));
}

Status PgInventory::DeleteNode(const std::string& name) {
  auto deleted = work_.Write([&](pqxx::transaction_base& w) { return w.exec_prepared("inventory_node_delete", name); });
  if (!deleted.ok()) return deleted.status();
  return *deleted == 1 ? Status::Ok() : NotFound("node \"" + name + "\" is not in the inventory");
}

Result<InventoryNode> PgInventory::GetNode(const std::string& name) {
  return work_.Read<InventoryNode>([&](pqxx::transaction_base& t) -> Result<InventoryNode> {
    const auto rows = t.exec_prepared("inventory_node_get", name);
    if (rows.empty()) return NotFound("node \"" + name + "\" is not in the inventory");
    return NodeOf(rows[0]);
  });
}

Result<std::vector<InventoryNode>> PgInventory::ListNodes() {
  return work_.Read<std::vector<InventoryNode>>([&](pqxx::transaction_base& t) {
    std::vector<InventoryNode> nodes;
    for (const auto& row : t.exec_prepared("inventory_node_list")) nodes.push_back(NodeOf(row));
    return nodes;
  });
}

Status PgInventory::PutLayoutTarget(const tenancy::MigLayoutTarget& t) {
  json layout = json::array();
  for (const gpu::MigInstance& m : t.layout) layout.push_back({m.profile, m.start});
  auto put = work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("mig_layout_target_put", t.node, t.gpu, layout.dump(), t.mig_config, Micros(t.requested_at));
  });
  if (!put.ok()) return put.status();
  if (*put == 0) {
    return NotFound("GPU " + std::to_string(t.gpu) + " of node \"" + t.node + "\" is not in the inventory");
  }
  return Status::Ok();
}

Result<std::vector<tenancy::MigLayoutTarget>> PgInventory::ListLayoutTargets() {
  return work_.Read<std::vector<tenancy::MigLayoutTarget>>([&](pqxx::transaction_base& t) {
    std::vector<tenancy::MigLayoutTarget> targets;
    for (const auto& r : t.exec_prepared("mig_layout_target_list")) {
      tenancy::MigLayoutTarget target;
      target.node = r[0].as<std::string>();
      target.gpu = r[1].as<int>();
      for (const auto& m : json::parse(r[2].as<std::string>()))
        target.layout.push_back({m.at(0).get<int>(), m.at(1).get<int>()});
      target.mig_config = r[3].as<std::string>();
      target.requested_at = FromMicros(r[4].as<std::int64_t>());
      targets.push_back(std::move(target));
    }
    return targets;
  });
}

Status PgInventory::DeleteLayoutTargets(const std::string& node) {
  auto deleted =
      work_.Write([&](pqxx::transaction_base& w) { return w.exec_prepared("mig_layout_target_delete", node); });
  return deleted.ok() ? Status::Ok() : deleted.status();
}

}  // namespace septa::store
