#include "services/apiv1/convert.h"

#include <google/protobuf/util/time_util.h>

#include "services/apiv1/json.h"
#include "services/core/validation.h"

namespace septa::apiv1 {

using google::protobuf::util::TimeUtil;

google::protobuf::Timestamp ToTimestamp(TimePoint t) {
  return TimeUtil::NanosecondsToTimestamp(
      std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

namespace {

v1::Tenant::State ToProto(core::TenantState s) {
  return s == core::TenantState::kSuspended ? v1::Tenant::SUSPENDED : v1::Tenant::ACTIVE;
}

Result<core::TenantState> FromProto(v1::Tenant::State s) {
  switch (s) {
    case v1::Tenant::STATE_UNSPECIFIED:
    case v1::Tenant::ACTIVE: return core::TenantState::kActive;
    case v1::Tenant::SUSPENDED: return core::TenantState::kSuspended;
    default: return InvalidField("state", "must be ACTIVE or SUSPENDED");
  }
}

v1::TrustTier::GpuSharing ToProto(gpu::Tier s) {
  switch (s) {
    case gpu::Tier::kShared: return v1::TrustTier::FRACTIONAL;
    case gpu::Tier::kIsolated: return v1::TrustTier::MIG;
    case gpu::Tier::kDedicated: return v1::TrustTier::WHOLE_GPU;
    case gpu::Tier::kExclusive: return v1::TrustTier::WHOLE_NODE;
  }
  return v1::TrustTier::GPU_SHARING_UNSPECIFIED;
}

v1::Condition ToProto(const tenancy::Condition& c) {
  v1::Condition out;
  out.set_type(c.type);
  out.set_status(std::string(tenancy::ConditionStatusName(c.status)));
  out.set_reason(c.reason);
  out.set_message(c.message);
  *out.mutable_last_transition_time() = ToTimestamp(c.last_transition_time);
  out.set_observed_generation(c.observed_generation);
  return out;
}

v1::Capacity ToProto(const tenancy::Capacity& c) {
  v1::Capacity out;
  switch (c.tier) {
    case gpu::Tier::kShared:
      out.mutable_shared()->set_milli_gpu(c.milli_gpu);
      out.mutable_shared()->set_gpu_memory_mib(static_cast<std::int32_t>(c.gpu_memory_mib));
      break;
    case gpu::Tier::kIsolated:
      for (const auto& m : c.mig) {
        v1::Capacity::Mig* mig = out.add_mig();
        mig->set_profile(m.profile);
        mig->set_count(m.count);
        mig->set_model(m.model);
      }
      break;
    case gpu::Tier::kDedicated:
      out.mutable_gpus()->set_model(c.model);
      out.mutable_gpus()->set_count(c.count);
      break;
    case gpu::Tier::kExclusive:
      out.mutable_nodes()->set_model(c.model);
      out.mutable_nodes()->set_count(c.count);
      break;
  }
  return out;
}

v1::Reservation ToProto(const tenancy::Reservation& r) {
  v1::Reservation out;
  for (const auto& s : r.shares) {
    v1::Reservation::Share* share = out.add_shares();
    share->set_node(s.node);
    share->set_gpu(s.gpu);
    share->set_milli_gpu(s.milli_gpu);
    share->set_gpu_memory_mib(static_cast<std::int32_t>(s.gpu_memory_mib));
  }
  for (const auto& m : r.mig) {
    v1::Reservation::MigInstance* mig = out.add_mig();
    mig->set_node(m.node);
    mig->set_gpu(m.gpu);
    mig->set_profile(m.profile);
    mig->set_start(m.start);
    mig->set_slices(m.slices);
  }
  for (const auto& g : r.gpus) {
    v1::Reservation::WholeGpu* gpu = out.add_gpus();
    gpu->set_node(g.node);
    gpu->set_gpu(g.gpu);
  }
  for (const auto& n : r.nodes) out.add_nodes(n);
  out.set_releasing(r.releasing);
  return out;
}

// The one capacity kind that is set, as the tier that holds it.
Result<tenancy::Capacity> CapacityFromProto(const v1::Capacity& in) {
  std::vector<std::string_view> set;
  if (in.has_shared()) set.push_back("shared");
  if (in.mig_size() > 0) set.push_back("mig");
  if (in.has_gpus()) set.push_back("gpus");
  if (in.has_nodes()) set.push_back("nodes");
  if (set.size() != 1) {
    std::string which;
    for (std::string_view kind : set) which += (which.empty() ? "" : ", ") + std::string(kind);
    return InvalidField("capacity", set.empty() ? "must set exactly one of shared, mig, gpus, nodes"
                                                : "must set exactly one of shared, mig, gpus, nodes, not " + which);
  }
  // A kind that is present with a zero amount is a count out of range, not
  // an absent capacity (proto3 cannot tell 0 from unset; the kind can).
  if (in.has_shared() && in.shared().milli_gpu() == 0) {
    return InvalidField("capacity.shared.milli_gpu", "must be at least 1");
  }
  if (in.has_gpus() && in.gpus().count() == 0) return InvalidField("capacity.gpus.count", "must be at least 1");
  if (in.has_nodes() && in.nodes().count() == 0) return InvalidField("capacity.nodes.count", "must be at least 1");
  tenancy::Capacity out;
  if (in.has_shared()) {
    out.tier = gpu::Tier::kShared;
    out.milli_gpu = in.shared().milli_gpu();
    out.gpu_memory_mib = in.shared().gpu_memory_mib();
  } else if (in.mig_size() > 0) {
    out.tier = gpu::Tier::kIsolated;
    for (const auto& m : in.mig()) out.mig.push_back({m.profile(), m.count(), m.model()});
  } else if (in.has_gpus()) {
    out.tier = gpu::Tier::kDedicated;
    out.model = in.gpus().model();
    out.count = in.gpus().count();
  } else {
    out.tier = gpu::Tier::kExclusive;
    out.model = in.nodes().model();
    out.count = in.nodes().count();
  }
  return out;
}

void SetHolder(const core::Holder& h, v1::Holder& out) {
  out.set_tenant(h.tenant);
  out.set_vcluster(h.vcluster);
  out.set_releasing(h.releasing);
}

v1::InventoryNode::Health ToProto(gpu::NodeHealth h) {
  switch (h) {
    case gpu::NodeHealth::kReady: return v1::InventoryNode::READY;
    case gpu::NodeHealth::kNotReady: return v1::InventoryNode::NOT_READY;
    case gpu::NodeHealth::kGone: return v1::InventoryNode::GONE;
  }
  return v1::InventoryNode::HEALTH_UNSPECIFIED;
}

v1::InventoryGpu ToProto(const core::HeldGpu& g) {
  v1::InventoryGpu out;
  out.set_index(g.gpu.index);
  out.set_model(g.gpu.model);
  out.set_uuid(g.gpu.uuid);
  out.set_mig_enabled(g.gpu.mig_enabled);
  for (const auto& m : g.instances) {
    v1::InventoryGpu::MigInstance* instance = out.add_mig_instances();
    instance->set_profile(m.profile);
    instance->set_start(m.start);
    instance->set_slices(m.slices);
    if (m.holder) SetHolder(*m.holder, *instance->mutable_holder());
  }
  if (g.holder) SetHolder(*g.holder, *out.mutable_holder());
  for (const auto& s : g.shares) {
    v1::InventoryGpu::Share* share = out.add_shares();
    SetHolder(s.holder, *share->mutable_holder());
    share->set_milli_gpu(s.milli_gpu);
    share->set_gpu_memory_mib(static_cast<std::int32_t>(s.gpu_memory_mib));
  }
  return out;
}

}  // namespace

v1::ApiLimits ToProto(const tenancy::ApiLimits& limits) {
  v1::ApiLimits out;
  // Within ValidateApiLimits' bounds: the 32-bit members below 2^31.
  if (limits.objects) out.set_objects(static_cast<std::int32_t>(*limits.objects));
  if (limits.object_bytes) out.set_object_bytes(*limits.object_bytes);
  if (limits.watches) out.set_watches(static_cast<std::int32_t>(*limits.watches));
  if (limits.requests_in_flight) out.set_requests_in_flight(static_cast<std::int32_t>(*limits.requests_in_flight));
  return out;
}

tenancy::ApiLimits FromProto(const v1::ApiLimits& in) {
  tenancy::ApiLimits out;
  if (in.has_objects()) out.objects = in.objects();
  if (in.has_object_bytes()) out.object_bytes = in.object_bytes();
  if (in.has_watches()) out.watches = in.watches();
  if (in.has_requests_in_flight()) out.requests_in_flight = in.requests_in_flight();
  return out;
}

v1::VirtualCluster::State ToProto(tenancy::VirtualClusterState s) {
  switch (s) {
    case tenancy::VirtualClusterState::kProvisioning: return v1::VirtualCluster::PROVISIONING;
    case tenancy::VirtualClusterState::kReady: return v1::VirtualCluster::READY;
    case tenancy::VirtualClusterState::kSleeping: return v1::VirtualCluster::SLEEPING;
    case tenancy::VirtualClusterState::kDeleting: return v1::VirtualCluster::DELETING;
    case tenancy::VirtualClusterState::kFailed: return v1::VirtualCluster::FAILED;
  }
  return v1::VirtualCluster::STATE_UNSPECIFIED;
}

v1::VirtualCluster ToProto(const core::VirtualClusterView& view) {
  const tenancy::VirtualCluster& v = view.vcluster;
  v1::VirtualCluster out;
  out.set_name(v.name);
  out.set_tenant(v.tenant);
  out.set_display_name(v.display_name);
  *out.mutable_capacity() = ToProto(v.capacity);
  out.mutable_quota()->set_cpu_milli(static_cast<std::int32_t>(v.quota.cpu_milli));
  out.mutable_quota()->set_memory_mib(static_cast<std::int32_t>(v.quota.memory_mib));
  out.mutable_quota()->set_pods(static_cast<std::int32_t>(v.quota.pods));
  out.mutable_queue()->set_priority(v.queue.priority);
  out.mutable_queue()->set_over_quota_weight(v.queue.over_quota_weight);
  out.set_state(ToProto(v.state));
  for (const auto& c : v.conditions) *out.add_conditions() = ToProto(c);
  if (view.reservation) *out.mutable_reservation() = ToProto(*view.reservation);
  out.set_host_namespace(v.host_namespace);
  out.set_endpoint(v.endpoint);
  out.set_generation(v.generation);
  *out.mutable_create_time() = ToTimestamp(v.create_time);
  *out.mutable_update_time() = ToTimestamp(v.update_time);
  out.set_etag(core::EtagOf(v.version));
  if (v.api_limits != tenancy::ApiLimits{}) *out.mutable_api_limits() = ToProto(v.api_limits);
  return out;
}

Result<tenancy::VirtualCluster> VirtualClusterFromProto(const v1::VirtualCluster& in, bool require_capacity) {
  tenancy::VirtualCluster v;
  v.tenant = in.tenant();
  v.name = in.name();
  v.display_name = in.display_name();
  if (require_capacity || in.has_capacity()) {
    auto capacity = CapacityFromProto(in.capacity());
    SEPTA_RETURN_IF_ERROR(capacity);
    v.capacity = *std::move(capacity);
  }
  v.quota = {in.quota().cpu_milli(), in.quota().memory_mib(), in.quota().pods()};
  if (in.has_queue()) {
    if (in.queue().priority() != 0) v.queue.priority = in.queue().priority();
    if (in.queue().over_quota_weight() != 0) v.queue.over_quota_weight = in.queue().over_quota_weight();
  }
  v.api_limits = FromProto(in.api_limits());
  return v;
}

std::vector<std::string> MaskPaths(const google::protobuf::Descriptor& message, const std::vector<std::string>& sent) {
  std::vector<std::string> paths;
  for (const std::string& path : sent) {
    const std::size_t dot = path.find('.');
    const std::string head = ProtoFieldName(message, path.substr(0, dot));
    if (dot == std::string::npos) {
      paths.push_back(head);
      continue;
    }
    const google::protobuf::FieldDescriptor* field = message.FindFieldByName(head);
    const std::string tail = path.substr(dot + 1);
    paths.push_back(
        head + "." +
        (field != nullptr && field->message_type() != nullptr ? ProtoFieldName(*field->message_type(), tail) : tail));
  }
  return paths;
}

v1::InventoryNode ToProto(const core::HeldNode& n) {
  v1::InventoryNode out;
  out.set_name(n.node.name);
  out.set_health(ToProto(n.node.health));
  out.set_cpu_milli(n.node.cpu_milli);
  out.set_memory_mib(n.node.memory_mib);
  out.mutable_labels()->insert(n.node.labels.begin(), n.node.labels.end());
  for (const auto& t : n.node.taints) {
    v1::Taint* taint = out.add_taints();
    taint->set_key(t.key);
    taint->set_value(t.value);
    taint->set_effect(t.effect);
  }
  out.set_mig_config(n.node.mig_config);
  out.set_mig_config_state(n.node.mig_config_state);
  for (const auto& g : n.gpus) *out.add_gpus() = ToProto(g);
  if (n.holder) SetHolder(*n.holder, *out.mutable_holder());
  out.set_layout_settled(n.layout_settled);
  return out;
}

v1::ListNodesResponse ToProto(const core::InventoryPage& page) {
  v1::ListNodesResponse out;
  for (const auto& n : page.nodes) *out.add_nodes() = ToProto(n);
  out.set_next_page_token(page.next_page_token);
  return out;
}

namespace {

// The quota's members by .proto name, for conversions and update masks.
struct QuotaMember {
  const char* name;
  std::optional<std::int64_t> tenancy::TenantQuota::*core;
  bool (v1::TenantQuota::*has)() const;
  std::int32_t (v1::TenantQuota::*get)() const;
  void (v1::TenantQuota::*set)(std::int32_t);
};
const QuotaMember kQuotaMembers[] = {
    {"gpu_milli", &tenancy::TenantQuota::gpu_milli, &v1::TenantQuota::has_gpu_milli, &v1::TenantQuota::gpu_milli,
     &v1::TenantQuota::set_gpu_milli},
    {"cpu_milli", &tenancy::TenantQuota::cpu_milli, &v1::TenantQuota::has_cpu_milli, &v1::TenantQuota::cpu_milli,
     &v1::TenantQuota::set_cpu_milli},
    {"memory_mib", &tenancy::TenantQuota::memory_mib, &v1::TenantQuota::has_memory_mib, &v1::TenantQuota::memory_mib,
     &v1::TenantQuota::set_memory_mib},
    {"pods", &tenancy::TenantQuota::pods, &v1::TenantQuota::has_pods, &v1::TenantQuota::pods,
     &v1::TenantQuota::set_pods},
    {"vclusters", &tenancy::TenantQuota::vclusters, &v1::TenantQuota::has_vclusters, &v1::TenantQuota::vclusters,
     &v1::TenantQuota::set_vclusters},
};

tenancy::TenantQuota FromProto(const v1::TenantQuota& in) {
  tenancy::TenantQuota out;
  for (const QuotaMember& m : kQuotaMembers) {
    if ((in.*m.has)()) out.*m.core = (in.*m.get)();
  }
  return out;
}

}  // namespace

v1::TenantQuota ToProto(const tenancy::TenantQuota& quota) {
  v1::TenantQuota out;
  for (const QuotaMember& m : kQuotaMembers) {
    // Stored limits are within ValidateTenantQuota's bounds, all below 2^31.
    if (quota.*m.core) (out.*m.set)(static_cast<std::int32_t>(*(quota.*m.core)));
  }
  return out;
}

v1::TenantQuotaUsage ToProto(const tenancy::TenantUsage& usage) {
  v1::TenantQuotaUsage out;
  out.set_gpu_milli(usage.gpu_milli);
  out.set_cpu_milli(usage.cpu_milli);
  out.set_memory_mib(usage.memory_mib);
  out.set_pods(usage.pods);
  out.set_vclusters(usage.vclusters);
  return out;
}

v1::TenantQuotaStatus ToProto(const core::TenantQuotaView& view) {
  v1::TenantQuotaStatus out;
  out.set_tenant(view.tenant);
  *out.mutable_limits() = ToProto(view.quota);
  *out.mutable_usage() = ToProto(view.usage);
  return out;
}

v1::Tenant ToProto(const core::Tenant& t, const std::optional<tenancy::TenantUsage>& usage) {
  v1::Tenant out;
  if (t.quota != tenancy::TenantQuota{}) *out.mutable_quota() = ToProto(t.quota);
  if (usage) *out.mutable_quota_usage() = ToProto(*usage);
  out.set_name(t.name);
  out.set_display_name(t.display_name);
  out.set_trust_tier(t.trust_tier);
  out.mutable_labels()->insert(t.labels.begin(), t.labels.end());
  out.set_state(ToProto(t.state));
  *out.mutable_create_time() = ToTimestamp(t.create_time);
  *out.mutable_update_time() = ToTimestamp(t.update_time);
  out.set_etag(core::EtagOf(t.version));
  return out;
}

v1::TrustTier ToProto(const core::TrustTier& t) {
  v1::TrustTier out;
  out.set_name(t.name);
  out.set_display_name(t.display_name);
  out.set_description(t.description);
  out.set_gpu_sharing(ToProto(t.gpu_sharing));
  out.set_co_tenancy(t.co_tenancy);
  out.set_runtime_class(t.runtime_class);
  out.mutable_credential_ttl_max()->set_seconds(t.credential_ttl_max_seconds);
  *out.mutable_create_time() = ToTimestamp(t.create_time);
  *out.mutable_update_time() = ToTimestamp(t.update_time);
  *out.mutable_api_limits() = ToProto(t.api_limits);
  out.set_etag(core::EtagOf(t.version));
  return out;
}

Result<core::TrustTier> TrustTierFromProto(const v1::TrustTier& in, bool require_gpu_sharing) {
  core::TrustTier t;
  t.name = in.name();
  t.display_name = in.display_name();
  t.description = in.description();
  switch (in.gpu_sharing()) {
    case v1::TrustTier::FRACTIONAL: t.gpu_sharing = gpu::Tier::kShared; break;
    case v1::TrustTier::MIG: t.gpu_sharing = gpu::Tier::kIsolated; break;
    case v1::TrustTier::WHOLE_GPU: t.gpu_sharing = gpu::Tier::kDedicated; break;
    case v1::TrustTier::WHOLE_NODE: t.gpu_sharing = gpu::Tier::kExclusive; break;
    default:
      if (require_gpu_sharing || in.gpu_sharing() != v1::TrustTier::GPU_SHARING_UNSPECIFIED) {
        return InvalidField("gpu_sharing", "must be FRACTIONAL, MIG, WHOLE_GPU or WHOLE_NODE");
      }
  }
  t.co_tenancy = in.co_tenancy();
  t.runtime_class = in.runtime_class();
  if (in.credential_ttl_max().nanos() != 0) return InvalidField("credential_ttl_max", "must be whole seconds");
  t.credential_ttl_max_seconds = in.credential_ttl_max().seconds();
  t.api_limits = FromProto(in.api_limits());
  return t;
}

std::vector<std::string> TrustTierFieldsSet(const v1::TrustTier& t) {
  std::vector<std::string> paths;
  if (!t.display_name().empty()) paths.push_back("display_name");
  if (!t.description().empty()) paths.push_back("description");
  if (t.gpu_sharing() != v1::TrustTier::GPU_SHARING_UNSPECIFIED) paths.push_back("gpu_sharing");
  if (!t.co_tenancy().empty()) paths.push_back("co_tenancy");
  if (!t.runtime_class().empty()) paths.push_back("runtime_class");
  if (t.has_credential_ttl_max()) paths.push_back("credential_ttl_max");
  if (t.has_api_limits()) paths.push_back("api_limits");
  return paths;
}

v1::ApiToken ToProto(const core::ApiToken& t) {
  v1::ApiToken out;
  out.set_id(t.id);
  out.set_principal(t.principal);
  out.set_role(std::string(core::RoleName(t.role)));
  out.set_description(t.description);
  *out.mutable_create_time() = ToTimestamp(t.create_time);
  if (t.expire_time) *out.mutable_expire_time() = ToTimestamp(*t.expire_time);
  if (t.revoke_time) *out.mutable_revoke_time() = ToTimestamp(*t.revoke_time);
  for (const std::string& set : t.apply_sets) out.add_apply_sets(set);
  return out;
}

Result<core::Tenant> TenantDraftFromProto(const v1::Tenant& in) {
  core::Tenant t;
  t.name = in.name();
  t.display_name = in.display_name();
  t.trust_tier = in.trust_tier();
  t.labels.insert(in.labels().begin(), in.labels().end());
  auto state = FromProto(in.state());
  SEPTA_RETURN_IF_ERROR(state);
  t.state = *state;
  t.quota = FromProto(in.quota());
  return t;
}

Result<core::TenantUpdate> TenantUpdateFromProto(const v1::Tenant& in, const std::vector<std::string>& mask_paths) {
  core::TenantUpdate update;
  for (const std::string& sent : mask_paths) {
    const std::string path = ProtoFieldName(*v1::Tenant::descriptor(), sent);
    if (path == "display_name") {
      update.display_name = in.display_name();
    } else if (path == "labels") {
      update.labels = std::map<std::string, std::string>(in.labels().begin(), in.labels().end());
    } else if (path == "trust_tier") {
      if (in.trust_tier().empty()) return InvalidField("trust_tier", "must not be empty");
      update.trust_tier = in.trust_tier();
    } else if (path == "state") {
      auto state = FromProto(in.state());
      SEPTA_RETURN_IF_ERROR(state);
      update.state = *state;
    } else if (path == "quota") {
      for (const QuotaMember& m : kQuotaMembers) update.quota_members.push_back(m.core);
    } else if (path.starts_with("quota.")) {
      const std::string member = ProtoFieldName(*v1::TenantQuota::descriptor(), path.substr(6));
      const QuotaMember* found = nullptr;
      for (const QuotaMember& m : kQuotaMembers) {
        if (member == m.name) found = &m;
      }
      if (found == nullptr) {
        return InvalidField("update_mask",
                            "unknown field \"" + core::EscapeControlCharacters(sent) +
                                "\"; quota fields are gpu_milli, cpu_milli, memory_mib, pods, vclusters");
      }
      update.quota_members.push_back(found->core);
    } else if (path == "name") {
      return InvalidField("name", "is immutable");
    } else if (path == "etag" || path == "create_time" || path == "update_time" || path == "quota_usage") {
      continue;  // output-only or precondition fields are not updated
    } else {
      return InvalidField("update_mask", "unknown field \"" + core::EscapeControlCharacters(sent) +
                                             "\"; updatable fields are display_name, labels, trust_tier, state, quota");
    }
  }
  update.quota = FromProto(in.quota());
  return update;
}

core::TokenRequest TokenRequestFromProto(const v1::CreateTokenRequest& r) {
  return core::TokenRequest{.principal = r.principal(),
                            .role = r.role(),
                            .ttl = r.ttl(),
                            .description = r.description(),
                            .apply_sets = {r.apply_sets().begin(), r.apply_sets().end()}};
}

v1::Credential ToProto(const core::VclusterCredential& c) {
  v1::Credential out;
  out.set_vcluster(c.vcluster);
  out.set_serial(c.serial);
  out.set_common_name(c.common_name);
  for (const auto& g : c.groups) out.add_groups(g);
  out.set_role(c.role);
  out.set_issued_by(c.issued_by);
  *out.mutable_issue_time() = ToTimestamp(c.issue_time);
  *out.mutable_expire_time() = ToTimestamp(c.expire_time);
  if (c.revoke_time) *out.mutable_revoke_time() = ToTimestamp(*c.revoke_time);
  return out;
}

v1::IssueKubeconfigResponse ToProto(const core::IssuedKubeconfig& issued) {
  v1::IssueKubeconfigResponse out;
  out.set_kubeconfig(issued.kubeconfig);
  *out.mutable_expire_time() = ToTimestamp(issued.credential.expire_time);
  out.set_serial(issued.credential.serial);
  out.set_ttl_capped(issued.ttl_capped);
  out.set_role(issued.credential.role);
  return out;
}

v1::ListCredentialsResponse ToProto(const core::CredentialPage& page) {
  v1::ListCredentialsResponse out;
  for (const auto& c : page.credentials) *out.add_credentials() = ToProto(c);
  out.set_next_page_token(page.next_page_token);
  return out;
}

v1::FreeCapacity ToProto(const core::FreeCapacity& free) {
  v1::FreeCapacity out;
  out.set_gpu_sharing(ToProto(free.tier));
  auto counts = [](const std::vector<core::FreeCount>& from, auto* to) {
    for (const core::FreeCount& c : from) {
      v1::FreeCapacity::Count* count = to->Add();
      count->set_model(c.model);
      count->set_profile(c.profile);
      count->set_count(c.count);
    }
  };
  counts(free.mig, out.mutable_mig());
  counts(free.gpus, out.mutable_gpus());
  counts(free.nodes, out.mutable_nodes());
  for (const core::FreeShares& s : free.shared) {
    v1::FreeCapacity::Shares* shares = out.add_shared();
    shares->set_model(s.model);
    shares->set_gpus(s.gpus);
    shares->set_milli_gpu(s.milli_gpu);
    shares->set_largest_milli_gpu(s.largest_milli_gpu);
    shares->set_gpu_memory_mib(s.gpu_memory_mib);
    shares->set_largest_gpu_memory_mib(static_cast<std::int32_t>(s.largest_gpu_memory_mib));
  }
  return out;
}

v1::ListVirtualClusterPodsResponse ToProto(const core::VirtualPodPage& page) {
  v1::ListVirtualClusterPodsResponse out;
  for (const core::VirtualPodStatus& p : page.pods) {
    v1::VirtualPod* pod = out.add_pods();
    pod->set_namespace_(p.ns);
    pod->set_name(p.name);
    pod->set_phase(p.phase);
    pod->set_reason(p.reason);
    pod->set_message(p.message);
    // As the tenant's API stored them: a time that does not parse is left unset.
    if (google::protobuf::Timestamp at; TimeUtil::FromString(p.create_time, &at)) *pod->mutable_create_time() = at;
    if (google::protobuf::Timestamp at; TimeUtil::FromString(p.since, &at)) *pod->mutable_since() = at;
  }
  out.set_next_page_token(page.next_page_token);
  return out;
}

}  // namespace septa::apiv1
