#include "services/syncer/virtual_node_sync.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "services/kube/resources.h"
#include "tenancy/sync/virtual_nodes.h"

namespace septa::syncer {

using nlohmann::json;
using reconcile::Outcome;
namespace tsync = tenancy::sync;

namespace {

// The main object first, then its status (a subresource), each on the
// version just read: a change made meanwhile is a 409 and the pass runs again.
Status UpdateVirtualNode(kube::Client& client, const json& existing, const json& desired) {
  json next = existing;
  next["metadata"]["labels"] = desired["metadata"]["labels"];
  if (desired["metadata"].contains("annotations")) {
    next["metadata"]["annotations"] = desired["metadata"]["annotations"];
  } else {
    next["metadata"].erase("annotations");
  }
  next["spec"] = desired["spec"];
  auto updated = client.Update(kube::kNodes, "", next);
  SEPTA_RETURN_IF_ERROR(updated);
  json with_status = *std::move(updated);
  with_status["status"] = desired["status"];
  kube::WriteOptions status;
  status.subresource = "status";
  return client.Update(kube::kNodes, "", with_status, status).status();
}

// The inventory's record of each node in `names`: the view's (the
// reserved ones), the others read from the store; absent when it has none.
Result<std::map<std::string, gpu::InventoryNode>> InventoryNodes(const SyncedCluster& synced,
                                                                 const std::set<std::string>& names,
                                                                 core::Store& store) {
  std::map<std::string, gpu::InventoryNode> out;
  std::vector<std::string> unreserved;
  for (const std::string& name : names) {
    auto it = std::ranges::find(synced.view.nodes, name, &gpu::InventoryNode::name);
    if (it != synced.view.nodes.end()) {
      out[name] = *it;
    } else {
      unreserved.push_back(name);
    }
  }
  if (unreserved.empty()) return out;
  Status read = store.Transact(core::TxMode::kReadOnly, [&](core::Tx& tx) -> Status {
    for (const std::string& name : unreserved) {
      auto node = tx.Inventory().GetNode(name);
      if (node.ok()) {
        out[name] = *std::move(node);
      } else if (node.status().code() != Code::kNotFound) {
        return node.status();
      }
    }
    return Status::Ok();
  });
  if (!read.ok()) return read;
  return out;
}

}  // namespace

Outcome SyncVirtualNodes(WatchedCluster& cluster, core::Store& store) {
  const SyncedCluster synced = cluster.synced();
  const std::set<std::string> in_use = tsync::NodesInUse(cluster.pods().List());
  auto inventory = InventoryNodes(synced, in_use, store);
  if (!inventory.ok()) return Outcome::Error(inventory.status());
  auto desired_node = [&](const std::string& name) {
    auto it = inventory->find(name);
    return tsync::VirtualNode(synced.view.reservation, name, it == inventory->end() ? nullptr : &it->second);
  };
  kube::Client& client = cluster.client();
  kube::ListOptions ours;
  ours.label_selector = std::string(tsync::kVirtualNodeLabel) + "=true";
  auto listed = client.ListAll(kube::kNodes, "", ours);
  if (!listed.ok()) return Outcome::Error(listed.status());

  std::set<std::string> existing;
  for (const auto& item : listed->items) {
    const json node = item.ToJson();
    const json& metadata = node["metadata"];
    const std::string name = metadata.value("name", "");
    existing.insert(name);
    if (!in_use.contains(name)) {
      kube::DeleteOptions options;
      options.precondition_uid = metadata.value("uid", "");
      Status deleted = client.Delete(kube::kNodes, "", name, options);
      if (!deleted.ok() && deleted.code() != Code::kNotFound) return Outcome::Error(deleted);
      continue;
    }
    const json desired = desired_node(name);
    if (tsync::VirtualNodeUpToDate(node, desired)) continue;
    if (Status updated = UpdateVirtualNode(client, node, desired); !updated.ok()) return Outcome::Error(updated);
  }
  for (const std::string& name : in_use) {
    if (existing.contains(name)) continue;
    auto created = client.Create(kube::kNodes, "", desired_node(name));
    if (created.ok()) continue;
    if (created.status().code() != Code::kAlreadyExists) return Outcome::Error(created.status());
    spdlog::warn("syncer: {}/{}: node {} exists without {}: left alone", cluster.tenant(), cluster.vcluster(), name,
                 tsync::kVirtualNodeLabel);
  }
  return Outcome::Done();
}

}  // namespace septa::syncer
