#include "services/reconcile/provisioner_controller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "services/core/virtual_cluster_write.h"
#include "services/core/virtual_object_store.h"
#include "services/kube/resources.h"
#include "services/reconcile/host_kinds.h"
#include "services/reconcile/host_workloads.h"
#include "services/reconcile/virtual_cluster_keys.h"
#include "tenancy/host/manifest.h"
#include "tenancy/host/names.h"

namespace septa::reconcile {

namespace {

using nlohmann::json;
using tenancy::ConditionStatus;
using tenancy::TrustTier;
using tenancy::VirtualCluster;
using tenancy::VirtualClusterState;

using kube::kNamespaces;
using kube::kNodes;
constexpr const char* kPrincipal = "system:provisioner";

// The conditions the provisioner owns, and which of them an object's kind counts towards.
enum Part { kNamespacePart, kQuotaPart, kQueuePart, kPartCount };
constexpr const char* kPartCondition[kPartCount] = {tenancy::kNamespaceReady, tenancy::kQuotaReady,
                                                    tenancy::kQueueReady};
constexpr const char* kPartReady[kPartCount] = {"NamespaceApplied", "QuotaApplied", "QueuesApplied"};
using tenancy::kCapacityReady;
using tenancy::kControlPlaneReady;
using tenancy::kDrifted;
using tenancy::kSleeping;

Part PartOf(const std::string& kind) {
  if (kind == "ResourceQuota" || kind == "LimitRange") return kQuotaPart;
  if (kind == "Queue" || kind == "ResourceFlavor" || kind == "ClusterQueue" || kind == "LocalQueue" ||
      kind == "WorkloadPriorityClass")
    return kQueuePart;
  return kNamespacePart;
}

// Whether `tenant` is suspended, read again in a writing transaction.
Result<bool> TenantSuspended(core::Tx& tx, const std::string& tenant) {
  auto owner = tx.Tenants().Get(tenant);
  SEPTA_RETURN_IF_ERROR(owner);
  return owner->state == core::TenantState::kSuspended;
}

kube::ListOptions Selector(std::string label_selector) {
  kube::ListOptions options;
  options.label_selector = std::move(label_selector);
  return options;
}

bool IsCrdGroup(const std::string& group) { return group == "scheduling.run.ai" || group == "kueue.x-k8s.io"; }

std::string Text(const json& object, const char* field) {
  auto md = object.find("metadata");
  if (md == object.end() || !md->is_object()) return "";
  auto it = md->find(field);
  return it != md->end() && it->is_string() ? it->get<std::string>() : "";
}

bool Terminating(const json& object) {
  auto md = object.find("metadata");
  return md != object.end() && md->is_object() && md->contains("deletionTimestamp");
}

// A host error as a condition's reason.
std::string ReasonOf(const Status& status) {
  if (status.code() == Code::kFailedPrecondition) return "HostKindMissing";
  std::string reason(kube::KubeReason(status));
  if (!reason.empty()) return "Host" + reason;
  switch (status.code()) {
    case Code::kUnavailable: return "HostUnavailable";
    case Code::kDeadlineExceeded: return "HostTimeout";
    default: return "HostError";
  }
}

// What one part of the provisioning came to.
struct PartResult {
  Status error = Status::Ok();
  std::string waiting;  // why it cannot be ready yet, without an error
  std::vector<std::string> written;
};

// The merge patch that puts `patch` on `node`; null when it is there already.
json PinPatch(const json& node, const tenancy::host::NodePatch& patch) {
  json labels = json::object();
  const json current_labels = node["metadata"].value("labels", json::object());
  for (const auto& [key, value] : patch.labels) {
    if (current_labels.value(key, "") != value) labels[key] = value;
  }
  json taints = node.contains("spec") ? node["spec"].value("taints", json::array()) : json::array();
  bool taints_changed = false;
  for (const auto& taint : patch.taints) {
    bool present = std::ranges::any_of(taints, [&](const json& t) {
      return t.value("key", "") == taint.key && t.value("value", "") == taint.value &&
             t.value("effect", "") == taint.effect;
    });
    if (!present) {
      taints.push_back({{"key", taint.key}, {"value", taint.value}, {"effect", taint.effect}});
      taints_changed = true;
    }
  }
  if (labels.empty() && !taints_changed) return nullptr;
  json out = {{"metadata", {{"resourceVersion", Text(node, "resourceVersion")}}}};
  if (!labels.empty()) out["metadata"]["labels"] = labels;
  if (taints_changed) out["spec"] = {{"taints", taints}};
  return out;
}

// The merge patch that takes the pins of `host_namespace` (of `tenant`) off `node`; null when none is there.
json UnpinPatch(const json& node, const std::string& host_namespace, const std::string& tenant) {
  const json current_labels = node["metadata"].value("labels", json::object());
  json labels = json::object();
  const std::string reserved = tenancy::host::ReservedNodeLabel(host_namespace);
  if (current_labels.contains(reserved)) labels[reserved] = nullptr;
  if (current_labels.value(tenancy::host::kExclusiveTenantKey, "") == tenant) {
    labels[tenancy::host::kExclusiveTenantKey] = nullptr;
  }
  json taints = node.contains("spec") ? node["spec"].value("taints", json::array()) : json::array();
  const auto before = taints.size();
  json kept = json::array();
  for (const auto& t : taints) {
    if (t.value("key", "") == tenancy::host::kExclusiveTenantKey && t.value("value", "") == tenant) continue;
    kept.push_back(t);
  }
  if (labels.empty() && kept.size() == before) return nullptr;
  json out = {{"metadata", {{"resourceVersion", Text(node, "resourceVersion")}}}};
  if (!labels.empty()) out["metadata"]["labels"] = labels;
  if (kept.size() != before) out["spec"] = {{"taints", kept}};
  return out;
}

bool IsTrue(const std::vector<tenancy::Condition>& conditions, std::string_view type) {
  const tenancy::Condition* c = tenancy::FindCondition(conditions, type);
  return c && c->status == ConditionStatus::kTrue;
}

}  // namespace

struct ProvisionerController::Desired {
  VirtualCluster vcluster;
  TrustTier tier;
  // Its tenant is suspended: the virtual cluster is kept asleep, whatever
  // its own state, which resuming the tenant finds as it was.
  bool tenant_suspended = false;
  std::optional<tenancy::Reservation> reservation;
  std::vector<gpu::InventoryNode> nodes;
  bool asleep() const { return vcluster.state == VirtualClusterState::kSleeping || tenant_suspended; }
};

struct ProvisionerController::Applied {
  std::string host_namespace;
  std::string endpoint;
  std::vector<tenancy::Condition> conditions;
  bool on_host = false;  // this pass may write to the host: the row says so from now on
};

ProvisionerController::ProvisionerController(ProvisionerControllerOptions options, core::Store& store,
                                             kube::Client& host, core::ControlPlanes* control_planes,
                                             const Clock& clock, prometheus::Registry& metrics)
    : options_(std::move(options)),
      store_(store),
      host_(host),
      control_planes_(control_planes),
      clock_(clock),
      controller_({.name = "provisioner",
                   .workers = options_.workers,
                   .list_keys = [this] { return ListKeys(); },
                   .shards = options_.shards},
                  *this, clock, metrics) {
  // The informers' first lists are not triggers: the start's Resync lists
  // every key from their caches once they are loaded (reconciled once each,
  // not once for the host objects and again for the listing).
  auto enqueue = [this](const json& object) {
    if (!informers_listed_.load()) return;
    if (auto key = VClusterKeyOf(object)) controller_.Enqueue(*key);
  };
  kube::InformerHandlers handlers{.on_add = enqueue,
                                  .on_update =
                                      [enqueue](const json& before, const json& after) {
                                        if (ChangedBeyondStatus(before, after)) enqueue(after);
                                      },
                                  .on_delete = enqueue};
  const std::string managed = std::string(tenancy::host::kManagedByLabel) + "=" + tenancy::host::kManagedByValue;
  for (const HostKind& kind : ManagedHostKinds(options_.render.scheduler)) {
    informers_.emplace_back(kind.resource, std::make_unique<kube::Informer>(host, kind.resource, "", Selector(managed),
                                                                            handlers, options_.resync_interval));
  }
}

ProvisionerController::~ProvisionerController() { Stop(); }

Status ProvisionerController::Start(std::chrono::milliseconds timeout) {
  for (auto& [resource, informer] : informers_) informer->Start();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  kube::ListOptions one;
  one.limit = 1;
  for (auto& [resource, informer] : informers_) {
    // A scheduler's kinds may be installed later: the informers of kinds the
    // host does not serve yet retry without holding the start. Those it
    // serves are waited for, or their first list would queue every virtual
    // cluster again after the workers had reconciled it.
    if (IsCrdGroup(resource.group) && !host_.List(resource, "", one).ok()) continue;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (!informer->WaitForSync(std::max(left, std::chrono::milliseconds(0)))) {
      return DeadlineExceeded("provisioner: the host's " + resource.resource + " could not be listed within " +
                              std::to_string(timeout.count()) + " ms");
    }
  }
  informers_listed_ = true;
  controller_.Start();
  resyncs_ = std::jthread([this](std::stop_token stop) { RunResyncs(stop); });
  return Status::Ok();
}

void ProvisionerController::Stop() {
  if (resyncs_.joinable()) {
    resyncs_.request_stop();
    resyncs_.join();
  }
  for (auto& [resource, informer] : informers_) informer->Stop();
  controller_.Stop();
}

void ProvisionerController::RunResyncs(std::stop_token stop) {
  while (clock_.SleepUntil(clock_.Now() + options_.resync_interval, stop)) controller_.Resync();
}

Result<std::vector<tenancy::VirtualClusterRef>> ProvisionerController::ListKeys() {
  auto stored = StoredVirtualClusterKeys(store_);
  SEPTA_RETURN_IF_ERROR(stored);
  std::set<tenancy::VirtualClusterRef> keys = std::move(*stored);
  for (const auto& [resource, informer] : informers_) {
    for (const auto& object : informer->List()) {
      if (auto key = VClusterKeyOf(object)) keys.insert(*std::move(key));
    }
  }
  if (control_planes_) {
    if (auto planes = control_planes_->List(); planes.ok()) {
      for (const auto& [tenant, vcluster] : *planes) keys.insert({tenant, vcluster});
    } else {
      spdlog::warn("provisioner: control planes could not be listed: {}", planes.status().message());
    }
  }
  return std::vector<tenancy::VirtualClusterRef>(keys.begin(), keys.end());
}

std::optional<json> ProvisionerController::Cached(const kube::Resource& resource, const std::string& ns,
                                                  const std::string& name) const {
  for (const auto& [r, informer] : informers_) {
    if (r.group == resource.group && r.resource == resource.resource) return informer->Get(ns, name);
  }
  return std::nullopt;
}

Outcome ProvisionerController::Reconcile(const tenancy::VirtualClusterRef& key) {
  const std::string &tenant = key.tenant, &name = key.vcluster;
  Desired desired;
  bool exists = true;
  Status st = store_.Transact(core::TxMode::kReadOnly, [&](core::Tx& tx) -> Status {
    auto vc = tx.VirtualClusters().Get(tenant, name);
    if (IsNotFound(vc)) {
      exists = false;
      return Status::Ok();
    }
    SEPTA_RETURN_IF_ERROR(vc);
    exists = true;
    desired.vcluster = *std::move(vc);
    if (desired.vcluster.state == VirtualClusterState::kDeleting) return Status::Ok();
    auto owner = tx.Tenants().Get(tenant);
    SEPTA_RETURN_IF_ERROR(owner);
    desired.tenant_suspended = owner->state == core::TenantState::kSuspended;
    auto tier = tx.TrustTiers().Get(owner->trust_tier);
    SEPTA_RETURN_IF_ERROR(tier);
    desired.tier = *std::move(tier);
    auto reservation = tx.Reservations().Get(tenant, name);
    if (reservation.ok()) {
      desired.reservation = *std::move(reservation);
    } else if (reservation.status().code() != Code::kNotFound) {
      return reservation.status();
    }
    if (!desired.reservation) return Status::Ok();
    // Only the reserved nodes (rendering says which one is missing): the
    // whole inventory on every reconcile was a fifth of a converged pass's
    // CPU with 27 nodes, and grows with the cluster.
    for (const std::string& node_name : tenancy::ReservedNodeNames(*desired.reservation)) {
      auto node = tx.Inventory().GetNode(node_name);
      if (IsNotFound(node)) continue;
      SEPTA_RETURN_IF_ERROR(node);
      desired.nodes.push_back(*std::move(node));
    }
    return Status::Ok();
  });
  if (!st.ok()) return Outcome::Error(st);
  if (!exists) return Teardown(tenant, name, "", false);
  if (desired.vcluster.state == VirtualClusterState::kDeleting) {
    return Teardown(tenant, name, desired.vcluster.host_namespace, true);
  }
  return Provision(desired);
}

Result<bool> ProvisionerController::ApplyObject(const json& object, bool& wrote) {
  const std::string kind = object.value("kind", "");
  auto resource = ResourceOfKind(object.value("apiVersion", ""), kind);
  if (!resource) return Internal("provisioner: no resource for kind " + kind);
  const std::string ns = Text(object, "namespace"), name = Text(object, "name");
  const std::string& manager = options_.render.field_manager;
  if (auto cached = Cached(*resource, ns, name); cached && UpToDate(*cached, object, manager)) return false;
  // The cache may lag behind a write of ours: only what the host shows now counts as drift.
  auto live = host_.Get(*resource, ns, name);
  if (live.ok() && UpToDate(*live, object, manager)) return false;
  if (!live.ok() && live.status().code() != Code::kNotFound) return live.status();
  auto applied = host_.Apply(*resource, ns, object, manager, true);
  if (!applied.ok()) {
    if (IsNotFound(applied) && IsCrdGroup(resource->group)) {
      return Status(Code::kFailedPrecondition, "the host cluster does not serve " + resource->resource + "." +
                                                   resource->group + "/" + resource->version +
                                                   " (is the scheduler's CRD installed?)");
    }
    return applied.status();
  }
  if (!Covers(*applied, object)) return Internal("provisioner: the host did not keep " + kind + " " + name);
  wrote = true;
  return true;
}

Status ProvisionerController::PatchNodes(const tenancy::host::HostObjects& rendered, bool& wrote) {
  std::set<std::string> pinned;
  for (const auto& patch : rendered.node_patches) {
    pinned.insert(patch.node);
    auto node = host_.Get(kNodes, "", patch.node);
    SEPTA_RETURN_IF_ERROR(node);
    json body = PinPatch(*node, patch);
    if (body.is_null()) continue;
    SEPTA_RETURN_IF_ERROR(host_
                              .Patch(kNodes, "", patch.node, kube::PatchType::kMerge, body.dump(),
                                     kube::PatchOptions{.dry_run = false,
                                                        .field_manager = options_.render.field_manager,
                                                        .force = false,
                                                        .subresource = ""})
                              .status());
    wrote = true;
  }
  // Nodes the virtual cluster held before a resize.
  auto held = host_.ListAll(kNodes, "", Selector(tenancy::host::ReservedNodeLabel(rendered.host_namespace)));
  SEPTA_RETURN_IF_ERROR(held);
  for (const auto& item : held->items) {
    const json node = item.ToJson();
    if (pinned.contains(Text(node, "name"))) continue;
    const std::string tenant = node["metadata"]["labels"].value(tenancy::host::kExclusiveTenantKey, "");
    json body = UnpinPatch(node, rendered.host_namespace, tenant);
    if (body.is_null()) continue;
    SEPTA_RETURN_IF_ERROR(host_.Patch(kNodes, "", Text(node, "name"), kube::PatchType::kMerge, body.dump()).status());
    wrote = true;
  }
  return Status::Ok();
}

Outcome ProvisionerController::Provision(const Desired& desired) {
  const VirtualCluster& vc = desired.vcluster;
  const std::int64_t generation = vc.generation;
  const TimePoint now = clock_.Now();
  // The stored name, given at create. A row of an older septad that was
  // never provisioned has none yet: it gets one now, recorded below.
  Applied applied{.host_namespace = vc.host_namespace.empty() ? tenancy::host::HostNamespaceName(vc.tenant, vc.name)
                                                              : vc.host_namespace,
                  .endpoint = vc.endpoint,
                  .conditions = {}};
  auto condition = [&](const char* type, bool ok, std::string reason, std::string message) {
    applied.conditions.push_back({type, ok ? ConditionStatus::kTrue : ConditionStatus::kFalse, std::move(reason),
                                  std::move(message), now, generation});
  };

  const bool asleep = desired.asleep();
  if (!desired.reservation && !asleep && options_.ledger) return Reserve(desired);
  // Asleep with its reservation released: Septa's objects stay, holding no GPU.
  tenancy::Reservation none;
  none.tenant = vc.tenant;
  none.vcluster = vc.name;
  none.tier = desired.tier.gpu_sharing;
  const tenancy::Reservation* reservation = desired.reservation ? &*desired.reservation : asleep ? &none : nullptr;
  // A suspended tenant's virtual cluster is rendered as a sleeping one (its
  // namespace admits no new pod: render.h kSleepingPods); its row keeps its state.
  VirtualCluster as_rendered = vc;
  as_rendered.host_namespace = applied.host_namespace;
  if (desired.tenant_suspended) as_rendered.state = VirtualClusterState::kSleeping;
  Result<tenancy::host::HostObjects> rendered =
      reservation
          ? tenancy::host::RenderHostObjects(desired.tier, as_rendered, *reservation, desired.nodes, options_.render)
          : Result<tenancy::host::HostObjects>(FailedPrecondition("no capacity is reserved for the virtual cluster"));
  if (!rendered.ok()) {
    for (const char* type : kPartCondition) condition(type, false, "RenderFailed", rendered.status().message());
    if (Status w = WriteStatus(desired, applied); !w.ok()) return Outcome::Error(w);
    return Outcome::Error(rendered.status());
  }
  // Recorded before anything exists on the host, so that a delete racing
  // this first apply knows that there may be something to remove.
  if (vc.host_namespace != applied.host_namespace || !vc.on_host) {
    Applied recorded{
        .host_namespace = applied.host_namespace, .endpoint = vc.endpoint, .conditions = {}, .on_host = true};
    if (Status w = WriteStatus(desired, recorded); !w.ok()) {
      if (w.code() != Code::kAlreadyExists) return Outcome::Error(w);
      // Only a row of an older septad, named now: another holds the name.
      Applied taken{.host_namespace = "", .endpoint = vc.endpoint, .conditions = {}};
      condition(kPartCondition[kNamespacePart], false, "HostNamespaceTaken",
                "the host namespace " + applied.host_namespace + " is another virtual cluster's");
      taken.conditions = applied.conditions;
      if (Status again = WriteStatus(desired, taken); !again.ok()) return Outcome::Error(again);
      return Outcome::Error(w);
    }
    return Outcome::RequeueAfter(std::chrono::nanoseconds(0));
  }
  applied.on_host = true;

  PartResult parts[kPartCount];
  std::optional<json> ns = Cached(kNamespaces, "", applied.host_namespace);
  const bool terminating = ns && Terminating(*ns);
  for (const json& object : rendered->objects) {
    PartResult& part = parts[PartOf(object.value("kind", ""))];
    if (terminating) {
      part.waiting = "the host namespace " + applied.host_namespace + " is still being deleted";
      continue;
    }
    if (!part.error.ok()) continue;
    bool wrote = false;
    auto result = ApplyObject(object, wrote);
    if (!result.ok()) {
      part.error = result.status();
    } else if (wrote) {
      part.written.push_back(object.value("kind", "") + " " + Text(object, "name"));
    }
  }
  if (!terminating && parts[kNamespacePart].error.ok()) {
    bool wrote = false;
    parts[kNamespacePart].error = PatchNodes(*rendered, wrote);
    if (wrote) parts[kNamespacePart].written.push_back("node patches");
  }

  Status first_error = Status::Ok();
  bool waiting = false;
  std::vector<std::string> written;
  for (int p = 0; p < kPartCount; ++p) {
    const PartResult& part = parts[p];
    written.insert(written.end(), part.written.begin(), part.written.end());
    if (!part.error.ok()) {
      first_error.Update(part.error);
      condition(kPartCondition[p], false, ReasonOf(part.error), part.error.message());
    } else if (!part.waiting.empty()) {
      waiting = true;
      condition(kPartCondition[p], false, "NamespaceTerminating", part.waiting);
    } else if (p == kQueuePart && options_.render.scheduler == tenancy::host::Scheduler::kDefault) {
      condition(kPartCondition[p], true, "NotConfigured", "scheduler is default: no queues");
    } else {
      condition(kPartCondition[p], true, kPartReady[p], "applied to the host cluster");
    }
  }

  if (!control_planes_) {
    condition(kControlPlaneReady, false, "NoControlPlane", "this septad serves no virtual control planes yet");
  } else if (auto plane = control_planes_->Ensure(vc.tenant, vc.name); !plane.ok()) {
    first_error.Update(plane.status());
    condition(kControlPlaneReady, false, "ControlPlaneError", plane.status().message());
  } else if (!plane->serving) {
    waiting = true;
    condition(kControlPlaneReady, false, "Starting", plane->message);
  } else {
    applied.endpoint = plane->endpoint;
    condition(kControlPlaneReady, true, "Serving", "the Kubernetes API is served at " + plane->endpoint);
  }

  bool release = false;
  if (asleep || tenancy::FindCondition(vc.conditions, kSleeping)) {
    Status error = Status::Ok();
    applied.conditions.push_back(SleepCondition(desired, terminating ? "" : applied.host_namespace, waiting, error));
    first_error.Update(error);
    release = asleep && applied.conditions.back().status == ConditionStatus::kTrue && desired.reservation &&
              options_.sleep_reservation == SleepReservation::kRelease;
  }

  // Objects written again at a generation that had converged: someone else changed or deleted them.
  const bool converged =
      vc.state == VirtualClusterState::kReady && std::ranges::all_of(kPartCondition, [&](const char* type) {
        const tenancy::Condition* c = tenancy::FindCondition(vc.conditions, type);
        return c && c->status == ConditionStatus::kTrue && c->observed_generation == generation;
      });
  if (converged && !written.empty()) {
    std::string message = "restored on the host:";
    for (const auto& w : written) message += " " + w + ",";
    message.pop_back();
    condition(kDrifted, true, "HostObjectRestored", message);
    spdlog::warn("provisioner: {}/{}: {}", vc.tenant, vc.name, message);
  } else if (written.empty() && IsTrue(vc.conditions, kDrifted) &&
             std::ranges::all_of(parts, [](const PartResult& p) { return p.error.ok() && p.waiting.empty(); })) {
    // Level-based: the host shows every object as rendered again. Never
    // written where Drifted is absent or False, so a converged pass writes nothing.
    condition(kDrifted, false, "NoDrift", "the host shows every object as rendered");
  }

  if (Status w = WriteStatus(desired, applied); !w.ok()) return Outcome::Error(w);
  if (!first_error.ok()) return Outcome::Error(first_error);
  if (release) {
    if (Status r = ReleaseWhileAsleep(desired); !r.ok()) return Outcome::Error(r);
    return Outcome::RequeueAfter(std::chrono::nanoseconds(0));  // rendered again without it
  }
  if (waiting) return Outcome::RequeueAfter(options_.poll_interval);
  return Outcome::Done();
}

tenancy::Condition ProvisionerController::SleepCondition(const Desired& desired, const std::string& host_namespace,
                                                         bool& waiting, Status& error) {
  const VirtualCluster& vc = desired.vcluster;
  tenancy::Condition c{kSleeping, ConditionStatus::kFalse, "", "", clock_.Now(), vc.generation};
  if (!desired.asleep()) {
    c.reason = "Awake";
    c.message = "the virtual cluster is awake";
    return c;
  }
  if (host_namespace.empty()) {  // the namespace is going: so is everything in it
    waiting = true;
    c.reason = "StoppingWorkloads";
    c.message = "waiting for the host namespace to be deleted";
    return c;
  }
  // The fence first: counted before the host refuses new pods, a pod
  // created right after the count would run on a released reservation.
  auto fenced = NewPodsRefused(host_, host_namespace);
  if (!fenced.ok()) {
    error = fenced.status();
    c.reason = ReasonOf(fenced.status());
    c.message = "the host namespace's quota could not be read: " + fenced.status().message();
    return c;
  }
  if (!*fenced) {
    waiting = true;
    c.reason = "ClosingNamespace";
    c.message =
        "waiting for the host to enforce the sleeping quota (pods: " + std::string(tenancy::host::kSleepingPods) + ")";
    return c;
  }
  auto left = DeleteHostWorkloads(host_, host_namespace);
  if (!left.ok()) {
    error = left.status();
    c.reason = ReasonOf(left.status());
    c.message = "host workloads could not be deleted: " + left.status().message();
  } else if (*left > 0) {
    waiting = true;
    c.reason = "StoppingWorkloads";
    c.message = std::to_string(*left) + " host workload object(s) being deleted";
  } else if (desired.tenant_suspended) {
    c.status = ConditionStatus::kTrue;
    c.reason = "TenantSuspended";
    c.message = "the tenant is suspended: no workload runs on the host; every object of the virtual cluster is kept";
  } else {
    c.status = ConditionStatus::kTrue;
    c.reason = "WorkloadsStopped";
    c.message = "no workload runs on the host; every object of the virtual cluster is kept";
  }
  return c;
}

Status ProvisionerController::ReleaseWhileAsleep(const Desired& desired) {
  const VirtualCluster& vc = desired.vcluster;
  bool released = false;
  Status st = store_.Transact(core::TxMode::kReadWrite, [&](core::Tx& tx) -> Status {
    released = false;
    auto current = tx.VirtualClusters().Get(vc.tenant, vc.name);
    if (IsNotFound(current)) return Status::Ok();
    SEPTA_RETURN_IF_ERROR(current);
    // Woken, resumed or changed since it was read: its own trigger reconciles it again.
    auto suspended = TenantSuspended(tx, vc.tenant);
    SEPTA_RETURN_IF_ERROR(suspended);
    if (current->generation != vc.generation || (current->state != VirtualClusterState::kSleeping && !*suspended)) {
      return Status::Ok();
    }
    SEPTA_RETURN_IF_ERROR(tx.Reservations().Delete(vc.tenant, vc.name));
    VirtualCluster next = *current;
    const TimePoint now = clock_.Now();
    tenancy::SetCondition(next.conditions,
                          {kCapacityReady, ConditionStatus::kFalse, "ReleasedWhileSleeping",
                           *suspended ? "the reservation is released while the tenant is suspended (sleep_reservation: "
                                        "release); it is placed again once the tenant is ACTIVE and the virtual "
                                        "cluster awake"
                                      : "the reservation is released while the virtual cluster sleeps "
                                        "(sleep_reservation: release); it is placed again on wake",
                           now, vc.generation},
                          now);
    released = true;
    const core::VirtualClusterChange release{
        .principal = kPrincipal, .action = "vcluster.sleep_release", .request_id = ""};
    return core::WriteVirtualCluster(tx, *current, next, now, &release);
  });
  if (st.ok() && released) spdlog::info("provisioner: {}/{} asleep; reservation released", vc.tenant, vc.name);
  return st;
}

Outcome ProvisionerController::Reserve(const Desired& desired) {
  const VirtualCluster& vc = desired.vcluster;
  Status st = options_.ledger->Transact(
      store_, core::TxMode::kReadWrite, [&](core::Tx& tx, core::CapacityLedger::Session& session) -> Status {
        auto current = tx.VirtualClusters().Get(vc.tenant, vc.name);
        if (IsNotFound(current)) return Status::Ok();
        SEPTA_RETURN_IF_ERROR(current);
        auto suspended = TenantSuspended(tx, vc.tenant);
        SEPTA_RETURN_IF_ERROR(suspended);
        if (current->generation != vc.generation || current->state == VirtualClusterState::kSleeping ||
            current->state == VirtualClusterState::kDeleting || *suspended) {
          return Status::Ok();
        }
        if (auto held = tx.Reservations().Get(vc.tenant, vc.name); held.ok()) return Status::Ok();
        const TimePoint now = clock_.Now();
        SEPTA_RETURN_IF_ERROR(session.Engine(tx));
        auto placed = session.Place(tx, vc.tenant, vc.name, current->capacity, now);
        SEPTA_RETURN_IF_ERROR(placed);
        SEPTA_RETURN_IF_ERROR(tx.Reservations().Insert(placed->reservation));
        VirtualCluster next = *current;
        tenancy::SetCondition(next.conditions, tenancy::CapacityReadyCondition(placed->relayout, next.generation), now);
        const core::VirtualClusterChange reserve{
            .principal = kPrincipal, .action = "vcluster.wake_reserve", .request_id = ""};
        return core::WriteVirtualCluster(tx, *current, next, now, &reserve);
      });
  if (st.ok()) {
    return Outcome::RequeueAfter(std::chrono::nanoseconds(0));  // provisioned with it next
  }
  // Nothing was written: say why, and try again after a backoff.
  Applied applied{.host_namespace = vc.host_namespace, .endpoint = vc.endpoint, .conditions = {}};
  applied.conditions.push_back({kCapacityReady, ConditionStatus::kFalse,
                                st.code() == Code::kResourceExhausted ? "InsufficientCapacity" : "ReservationFailed",
                                "the capacity could not be reserved again on wake: " + st.message(), clock_.Now(),
                                vc.generation});
  if (Status w = WriteStatus(desired, applied); !w.ok()) return Outcome::Error(w);
  return Outcome::Error(st);
}

Status ProvisionerController::WriteStatus(const Desired& desired, const Applied& applied) {
  return store_.Transact(core::TxMode::kReadWrite, [&](core::Tx& tx) -> Status {
    auto current = tx.VirtualClusters().Get(desired.vcluster.tenant, desired.vcluster.name);
    if (IsNotFound(current)) return Status::Ok();
    SEPTA_RETURN_IF_ERROR(current);
    // Changed since it was read: the change's own trigger reconciles it again.
    if (current->generation != desired.vcluster.generation || current->state == VirtualClusterState::kDeleting) {
      return Status::Ok();
    }
    VirtualCluster next = *current;
    const TimePoint now = clock_.Now();
    next.host_namespace = applied.host_namespace;
    next.on_host = current->on_host || applied.on_host;
    next.endpoint = applied.endpoint;
    for (const auto& c : applied.conditions) tenancy::SetCondition(next.conditions, c, now);
    const bool capacity = IsTrue(next.conditions, kCapacityReady);
    const bool ready = capacity && IsTrue(next.conditions, kControlPlaneReady) &&
                       std::ranges::all_of(kPartCondition, [&](const char* t) { return IsTrue(next.conditions, t); });
    if (ready && (next.state == VirtualClusterState::kProvisioning || next.state == VirtualClusterState::kFailed)) {
      next.state = VirtualClusterState::kReady;
    }
    if (next.host_namespace == current->host_namespace && next.on_host == current->on_host &&
        next.endpoint == current->endpoint && next.conditions == current->conditions && next.state == current->state) {
      return Status::Ok();
    }
    return core::WriteVirtualCluster(tx, *current, next, now, nullptr);  // a status write
  });
}

Result<bool> ProvisionerController::RemoveHostObjects(const std::string& tenant, const std::string& vcluster,
                                                      const std::string& host_namespace) {
  const tenancy::VirtualClusterRef key{tenant, vcluster};
  // The stored name; without a row, the namespaces labelled for the key
  // (whatever name they were given) and the name a row would get now (for
  // node pins left after their namespace went).
  std::set<std::string> namespaces;
  if (!host_namespace.empty()) {
    namespaces.insert(host_namespace);
  } else {
    auto labelled = host_.ListAll(kNamespaces, "", Selector(VClusterSelector(tenant, vcluster)));
    SEPTA_RETURN_IF_ERROR(labelled);
    for (const auto& item : labelled->items) namespaces.insert(Text(item.ToJson(), "name"));
    namespaces.insert(tenancy::host::HostNamespaceName(tenant, vcluster));
  }
  bool gone = true;
  for (const std::string& name : namespaces) {
    auto ns = host_.Get(kNamespaces, "", name);
    if (!ns.ok()) {
      if (ns.status().code() != Code::kNotFound) return ns.status();
      continue;
    }
    // Only a namespace that says it is this virtual cluster's.
    if (VClusterKeyOf(*ns) != key) continue;
    gone = false;
    if (!Terminating(*ns)) {
      Status deleted = host_.Delete(kNamespaces, "", name);
      if (!deleted.ok() && deleted.code() != Code::kNotFound) return deleted;
    }
  }
  // Cluster-wide objects of every scheduler mode, so that a changed `scheduler` leaves none behind.
  std::set<std::string> seen;
  for (auto scheduler : {tenancy::host::Scheduler::kKai, tenancy::host::Scheduler::kKueue}) {
    for (const HostKind& kind : ManagedHostKinds(scheduler)) {
      if (kind.resource.namespaced || kind.kind == "Namespace" || !seen.insert(kind.kind).second) continue;
      auto listed = host_.ListAll(kind.resource, "", Selector(VClusterSelector(tenant, vcluster)));
      if (!listed.ok()) {
        if (IsNotFound(listed)) continue;  // the host does not serve the kind
        return listed.status();
      }
      for (const auto& object : listed->items) {
        gone = false;
        Status deleted = host_.Delete(kind.resource, "", Text(object.ToJson(), "name"));
        if (!deleted.ok() && deleted.code() != Code::kNotFound) return deleted;
      }
    }
  }
  for (const std::string& name : namespaces) {
    auto pinned = host_.ListAll(kNodes, "", Selector(tenancy::host::ReservedNodeLabel(name)));
    SEPTA_RETURN_IF_ERROR(pinned);
    for (const auto& item : pinned->items) {
      const json node = item.ToJson();
      json body = UnpinPatch(node, name, tenant);
      if (body.is_null()) continue;
      SEPTA_RETURN_IF_ERROR(host_.Patch(kNodes, "", Text(node, "name"), kube::PatchType::kMerge, body.dump()).status());
    }
  }
  if (control_planes_) SEPTA_RETURN_IF_ERROR(control_planes_->Remove(tenant, vcluster));
  return gone;
}

Outcome ProvisionerController::Teardown(const std::string& tenant, const std::string& vcluster,
                                        const std::string& host_namespace, bool release) {
  auto gone = RemoveHostObjects(tenant, vcluster, host_namespace);
  if (!gone.ok()) return Outcome::Error(gone.status());
  if (!*gone) return Outcome::RequeueAfter(options_.poll_interval);
  if (!release) return Outcome::Done();
  bool deleted = false;
  Status st = store_.Transact(core::TxMode::kReadWrite, [&](core::Tx& tx) -> Status {
    deleted = false;
    auto current = tx.VirtualClusters().Get(tenant, vcluster);
    if (IsNotFound(current)) return Status::Ok();
    SEPTA_RETURN_IF_ERROR(current);
    if (current->state != VirtualClusterState::kDeleting) return Status::Ok();
    SEPTA_RETURN_IF_ERROR(tx.Reservations().Delete(tenant, vcluster));
    SEPTA_RETURN_IF_ERROR(tx.VirtualClusters().Delete(tenant, vcluster, current->version));
    deleted = true;
    return tx.Audit().Append({0, clock_.Now(), kPrincipal, "vcluster.release",
                              tenancy::VirtualClusterResource(tenant, vcluster), core::EtagOf(current->version), "",
                              ""});
  });
  if (!st.ok()) return Outcome::Error(st);
  if (deleted) spdlog::info("provisioner: {}/{} removed from the host; reservation released", tenant, vcluster);
  return Outcome::Done();
}

}  // namespace septa::reconcile
