#include "services/cli/views.h"

#include <google/protobuf/util/time_util.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <vector>

#include "common/duration.h"
#include "common/text.h"
#include "tenancy/capacity.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::cli {

namespace {

// "team=ml,tier=gold" in key order.
std::string FormatLabels(const google::protobuf::Map<std::string, std::string>& labels) {
  const std::map<std::string, std::string> sorted(labels.begin(), labels.end());
  std::string text;
  for (const auto& [key, value] : sorted) text += (text.empty() ? "" : ",") + key + "=" + value;
  return text.empty() ? "-" : text;
}

std::string OrDash(const std::string& text) { return text.empty() ? "-" : text; }

// "1h", "15m", "1h30m", as the API accepts lifetimes.
std::string FormatDuration(const google::protobuf::Duration& duration) {
  return septa::FormatDuration(std::chrono::seconds(duration.seconds()));
}

// "acme/train", "acme/train (releasing)".
std::string FormatHolder(const v1::Holder& h) {
  return tenancy::VirtualClusterText(h.tenant(), h.vcluster()) + (h.releasing() ? " (releasing)" : "");
}

std::string Joined(const std::vector<std::string>& parts) {
  std::string text;
  for (const auto& p : parts) text += (text.empty() ? "" : " ") + p;
  return text.empty() ? "-" : text;
}

// "3g.40gb@4 1g.10gb@0", by start; "whole" without MIG.
std::string FormatLayout(const v1::InventoryGpu& g) {
  if (!g.mig_enabled()) return "whole";
  std::vector<std::string> parts;
  for (const auto& m : g.mig_instances()) parts.push_back(m.profile() + "@" + std::to_string(m.start()));
  return Joined(parts);
}

// Who holds what on the GPU (and the node): "node=acme/a", "gpu=acme/b",
// "3g.40gb@4=acme/c", "500m=acme/d".
std::string FormatHolders(const v1::InventoryNode& n, const v1::InventoryGpu* g) {
  std::vector<std::string> parts;
  if (n.has_holder()) parts.push_back("node=" + FormatHolder(n.holder()));
  if (g) {
    if (g->has_holder()) parts.push_back("gpu=" + FormatHolder(g->holder()));
    for (const auto& m : g->mig_instances()) {
      if (m.has_holder())
        parts.push_back(m.profile() + "@" + std::to_string(m.start()) + "=" + FormatHolder(m.holder()));
    }
    for (const auto& s : g->shares()) parts.push_back(std::to_string(s.milli_gpu()) + "m=" + FormatHolder(s.holder()));
  }
  return Joined(parts);
}

std::string NodeHealth(const v1::InventoryNode& n) {
  std::string health = v1::InventoryNode::Health_Name(n.health());
  if (!n.layout_settled()) health += " (mig " + OrDash(n.mig_config_state()) + ")";
  return health;
}

std::string Times(int count) { return std::to_string(count) + " x "; }

// "1 x 3g.40gb@H100-80GB, 2 x 1g.10gb"; "2 x H100-80GB GPU"; "1 x any node";
// "500 milli-GPU, 4096 MiB".
std::string FormatCapacity(const v1::Capacity& c) {
  std::vector<std::string> parts;
  for (const auto& m : c.mig())
    parts.push_back(Times(m.count()) + m.profile() + (m.model().empty() ? "" : "@" + m.model()));
  const auto model = [](const std::string& m) { return m.empty() ? std::string("any") : m; };
  if (c.has_gpus()) parts.push_back(Times(c.gpus().count()) + model(c.gpus().model()) + " GPU");
  if (c.has_nodes()) parts.push_back(Times(c.nodes().count()) + model(c.nodes().model()) + " node");
  if (c.has_shared()) {
    parts.push_back(
        std::to_string(c.shared().milli_gpu()) + " milli-GPU" +
        (c.shared().gpu_memory_mib() > 0 ? " " + std::to_string(c.shared().gpu_memory_mib()) + " MiB" : ""));
  }
  if (parts.empty()) return "-";
  return Join(parts, ", ");
}

std::string Place(const std::string& node, int gpu) { return node + "/" + std::to_string(gpu); }

// "2 x 3g.40gb on h100-0/0, h100-0/1", one group per profile (then whole
// GPUs, nodes, shares), "; " between groups.
std::string FormatReservation(const v1::Reservation& r) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // what, where
  auto add = [&](const std::string& what, const std::string& where) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == what; });
    if (it == groups.end()) it = groups.insert(groups.end(), {what, {}});
    it->second.push_back(where);
  };
  for (const auto& m : r.mig()) add(m.profile(), Place(m.node(), m.gpu()));
  for (const auto& g : r.gpus()) add("GPU", Place(g.node(), g.gpu()));
  for (const auto& n : r.nodes()) add("node", n);
  for (const auto& s : r.shares()) add(std::to_string(s.milli_gpu()) + " milli-GPU", Place(s.node(), s.gpu()));
  std::string text;
  for (const auto& [what, where] : groups) {
    std::string places;
    for (const auto& p : where) places += (places.empty() ? "" : ", ") + p;
    text += (text.empty() ? "" : "; ") + Times(static_cast<int>(where.size())) + what + " on " + places;
  }
  if (text.empty()) return "-";
  return r.releasing() ? text + " (releasing)" : text;
}

// "CapacityReady=True (CapacityReserved), Ready=False (ProvisionerMissing)".
std::string FormatConditions(const google::protobuf::RepeatedPtrField<v1::Condition>& conditions) {
  std::string text;
  for (const auto& c : conditions) {
    text +=
        (text.empty() ? "" : ", ") + c.type() + "=" + c.status() + (c.reason().empty() ? "" : " (" + c.reason() + ")");
  }
  return text.empty() ? "-" : text;
}

}  // namespace

std::string DescribeCondition(const v1::VirtualCluster& vcluster, const std::string& type) {
  for (const auto& c : vcluster.conditions()) {
    if (c.type() != type) continue;
    std::string why = c.reason();
    if (!c.message().empty()) why += (why.empty() ? "" : ": ") + c.message();
    return type + "=" + c.status() + (why.empty() ? "" : " (" + why + ")");
  }
  return "no " + type + " condition";
}

Table VirtualClusterTable(const google::protobuf::RepeatedPtrField<v1::VirtualCluster>& vclusters) {
  Table table{{"NAME", "TENANT", "STATE", "CAPACITY", "RESERVED", "CONDITIONS"}, {}};
  for (const auto& v : vclusters) {
    table.rows.push_back({v.name(), v.tenant(), v1::VirtualCluster::State_Name(v.state()), FormatCapacity(v.capacity()),
                          FormatReservation(v.reservation()), FormatConditions(v.conditions())});
  }
  return table;
}

std::string FormatTime(const google::protobuf::Timestamp& time, bool is_set) {
  if (!is_set) return "-";
  google::protobuf::Timestamp seconds;
  seconds.set_seconds(time.seconds());
  return google::protobuf::util::TimeUtil::ToString(seconds);
}

namespace {

// "gpus 2.500/4.000, vclusters 1/3": each bounded quantity, with what is used
// when the server sent usage (GetTenant); "unlimited" when nothing is bounded.
std::string FormatQuota(const v1::Tenant& t) {
  const v1::TenantQuota& q = t.quota();
  const v1::TenantQuotaUsage& u = t.quota_usage();
  const bool used = t.has_quota_usage();
  std::vector<std::string> parts;
  const auto add = [&](const char* what, bool limited, std::int64_t limit, std::int64_t usage, bool milli) {
    if (!limited) return;
    const auto text = [&](std::int64_t v) { return milli ? tenancy::FormatMilli(v) : std::to_string(v); };
    parts.push_back(std::string(what) + " " + (used ? text(usage) + "/" : "") + text(limit));
  };
  add("gpus", q.has_gpu_milli(), q.gpu_milli(), u.gpu_milli(), true);
  add("cpus", q.has_cpu_milli(), q.cpu_milli(), u.cpu_milli(), true);
  add("memory-mib", q.has_memory_mib(), q.memory_mib(), u.memory_mib(), false);
  add("pods", q.has_pods(), q.pods(), u.pods(), false);
  add("vclusters", q.has_vclusters(), q.vclusters(), u.vclusters(), false);
  if (parts.empty()) return "unlimited";
  return Join(parts, ", ");
}

}  // namespace

Table TenantTable(const google::protobuf::RepeatedPtrField<v1::Tenant>& tenants) {
  Table table{{"NAME", "DISPLAY NAME", "TIER", "STATE", "LABELS", "CREATED", "ETAG", "QUOTA (USED/LIMIT)"}, {}};
  for (const auto& t : tenants) {
    table.rows.push_back({t.name(), OrDash(t.display_name()), t.trust_tier(), v1::Tenant::State_Name(t.state()),
                          FormatLabels(t.labels()), FormatTime(t.create_time(), t.has_create_time()), t.etag(),
                          FormatQuota(t)});
  }
  return table;
}

Table MemberTable(const google::protobuf::RepeatedPtrField<v1::TenantMember>& members) {
  Table table{{"MEMBER", "ROLE", "CREATED", "UPDATED", "ETAG"}, {}};
  for (const auto& m : members) {
    table.rows.push_back({m.member(), m.role(), FormatTime(m.create_time(), m.has_create_time()),
                          FormatTime(m.update_time(), m.has_update_time()), m.etag()});
  }
  return table;
}

Table TrustTierTable(const google::protobuf::RepeatedPtrField<v1::TrustTier>& tiers) {
  Table table{{"NAME", "DISPLAY NAME", "GPU SHARING", "CO-TENANCY", "RUNTIME CLASS", "CREDENTIAL TTL MAX"}, {}};
  for (const auto& t : tiers) {
    table.rows.push_back({t.name(), OrDash(t.display_name()), v1::TrustTier::GpuSharing_Name(t.gpu_sharing()),
                          OrDash(t.co_tenancy()), OrDash(t.runtime_class()), FormatDuration(t.credential_ttl_max())});
  }
  return table;
}

Table InventoryTable(const google::protobuf::RepeatedPtrField<v1::InventoryNode>& nodes) {
  Table table{{"NODE", "HEALTH", "GPU", "MODEL", "MIG LAYOUT", "HOLDERS"}, {}};
  for (const auto& n : nodes) {
    if (n.gpus().empty()) table.rows.push_back({n.name(), NodeHealth(n), "-", "-", "-", FormatHolders(n, nullptr)});
    for (const auto& g : n.gpus()) {
      table.rows.push_back(
          {n.name(), NodeHealth(n), std::to_string(g.index()), g.model(), FormatLayout(g), FormatHolders(n, &g)});
    }
  }
  return table;
}

Table TokenTable(const google::protobuf::RepeatedPtrField<v1::ApiToken>& tokens) {
  Table table{{"ID", "PRINCIPAL", "ROLE", "APPLY SETS", "DESCRIPTION", "CREATED", "EXPIRES", "REVOKED"}, {}};
  for (const auto& t : tokens) {
    table.rows.push_back({t.id(), t.principal(), t.role(),
                          OrDash(Join(std::vector<std::string>(t.apply_sets().begin(), t.apply_sets().end()), ",")),
                          OrDash(t.description()), FormatTime(t.create_time(), t.has_create_time()),
                          FormatTime(t.expire_time(), t.has_expire_time()),
                          FormatTime(t.revoke_time(), t.has_revoke_time())});
  }
  return table;
}

Table ApplySetTable(const google::protobuf::RepeatedPtrField<v1::ApplySet>& sets, bool sync) {
  Table table{{"NAME", "REVISION", "MEMBERS", "ON DRIFT"}, {}};
  if (sync) table.headers.push_back("SYNC");
  for (const char* header : {"APPLIED BY", "APPLIED", "SOURCE"}) table.headers.push_back(header);
  for (const auto& s : sets) {
    // The policy as septactl's ApplySet document spells it: report, revert, lock.
    std::string on_drift = v1::ApplySetPolicy::DriftPolicy_Name(
        s.policy().on_drift() == v1::ApplySetPolicy::DRIFT_POLICY_UNSPECIFIED ? v1::ApplySetPolicy::REPORT
                                                                              : s.policy().on_drift());
    std::transform(on_drift.begin(), on_drift.end(), on_drift.begin(), [](unsigned char c) { return std::tolower(c); });
    std::vector<std::string> row{s.name(), std::to_string(s.revision()), std::to_string(s.members()), on_drift};
    if (sync) {
      row.push_back(s.sync_status() == v1::ApplySet::SYNC_STATUS_UNSPECIFIED
                        ? "-"
                        : v1::ApplySet::SyncStatus_Name(s.sync_status()));
    }
    row.insert(row.end(), {OrDash(s.applied_by()), FormatTime(s.apply_time(), s.has_apply_time()), OrDash(s.source())});
    table.rows.push_back(std::move(row));
  }
  return table;
}

Table DriftedMemberTable(const google::protobuf::RepeatedPtrField<v1::DriftedMember>& drifted) {
  Table table{{"CHANGED OUTSIDE THE SET", "KIND", "BY", "VIA", "AT", "ACTION", "AUDIT ID", "REQUEST ID", "WHAT"}, {}};
  for (const auto& m : drifted) {
    const v1::Drift& d = m.drift();
    table.rows.push_back({m.name(), m.kind(), OrDash(d.principal()), OrDash(d.surface()),
                          FormatTime(d.time(), d.has_time()), OrDash(d.action()), std::to_string(d.audit_id()),
                          OrDash(d.request_id()), OrDash(d.detail())});
  }
  return table;
}

Table CredentialTable(const google::protobuf::RepeatedPtrField<v1::Credential>& credentials) {
  Table table{{"SERIAL", "USER", "ROLE", "ISSUED BY", "ISSUED", "EXPIRES", "REVOKED"}, {}};
  for (const auto& c : credentials) {
    table.rows.push_back(
        {c.serial(), c.common_name(), c.role(), c.issued_by(), FormatTime(c.issue_time(), c.has_issue_time()),
         FormatTime(c.expire_time(), c.has_expire_time()), FormatTime(c.revoke_time(), c.has_revoke_time())});
  }
  return table;
}

}  // namespace septa::cli

namespace septa::cli {

namespace {

std::string Number(double value, bool exact) {
  char text[64];
  std::snprintf(text, sizeof text, exact ? "%.12g" : "%.3f", value);
  return text;
}

std::string Seconds(std::int64_t seconds) {
  if (seconds % 3600 == 0) return std::to_string(seconds / 3600) + "h";
  if (seconds % 60 == 0) return std::to_string(seconds / 60) + "m";
  return std::to_string(seconds) + "s";
}

}  // namespace

Table UsageTable(const v1::UsageReport& report, bool exact) {
  // Only the dimensions some row is grouped by get a column.
  bool tenant = false, vcluster = false, tier = false, model = false, profile = false;
  for (const auto& item : report.items()) {
    tenant = tenant || !item.tenant().empty();
    vcluster = vcluster || !item.vcluster().empty();
    tier = tier || !item.tier().empty();
    model = model || !item.model().empty();
    profile = profile || !item.mig_profile().empty();
  }
  Table table{{"START", "END"}, {}};
  const std::pair<bool, const char*> dimensions[] = {
      {tenant, "TENANT"}, {vcluster, "VCLUSTER"}, {tier, "TIER"}, {model, "MODEL"}, {profile, "MIG PROFILE"}};
  for (const auto& [shown, header] : dimensions) {
    if (shown) table.headers.push_back(header);
  }
  for (const char* header : {"ALLOCATED GPU HOURS", "USED GPU HOURS", "WASTE GPU HOURS", "EFFICIENCY", "COVERAGE"}) {
    table.headers.push_back(header);
  }
  table.headers.push_back("COST");
  table.headers.push_back("CURRENCY");
  for (const auto& item : report.items()) {
    std::vector<std::string> row{FormatTime(item.start(), item.has_start()), FormatTime(item.end(), item.has_end())};
    if (tenant) row.push_back(item.tenant());
    if (vcluster) row.push_back(item.vcluster());
    if (tier) row.push_back(item.tier());
    if (model) row.push_back(item.model());
    if (profile) row.push_back(item.mig_profile());
    row.push_back(Number(item.allocated_gpu_hours(), exact));
    row.push_back(Number(item.used_gpu_hours(), exact));
    row.push_back(Number(item.waste_gpu_hours(), exact));
    row.push_back(item.has_efficiency() ? Number(item.efficiency(), exact) : "-");
    row.push_back(Number(item.coverage(), exact));
    char cost[64];  // money in cents, unless exact
    std::snprintf(cost, sizeof cost, exact ? "%.12g" : "%.2f", item.cost());
    row.push_back(cost);
    row.push_back(report.currency());
    table.rows.push_back(std::move(row));
  }
  return table;
}

Table UsagePoolTable(const google::protobuf::RepeatedPtrField<v1::UsagePoolItem>& pool, bool exact) {
  Table table{
      {"START", "END", "MODEL", "CAPACITY GPU HOURS", "RESERVED GPU HOURS", "UNRESERVED GPU HOURS", "USED GPU HOURS"},
      {}};
  for (const auto& item : pool) {
    table.rows.push_back({FormatTime(item.start(), item.has_start()), FormatTime(item.end(), item.has_end()),
                          item.model().empty() ? "all" : item.model(), Number(item.capacity_gpu_hours(), exact),
                          Number(item.reserved_gpu_hours(), exact), Number(item.unreserved_gpu_hours(), exact),
                          Number(item.used_gpu_hours(), exact)});
  }
  return table;
}

Table HoarderTable(const google::protobuf::RepeatedPtrField<v1::Hoarder>& hoarders) {
  Table table{{"TENANT", "VCLUSTER", "TIER", "IDLE", "THRESHOLD", "HOLDING MEMORY"}, {}};
  for (const auto& h : hoarders) {
    table.rows.push_back({h.tenant(), h.vcluster(), h.tier(), Seconds(h.idle_seconds()), Seconds(h.threshold_seconds()),
                          h.holding_memory() ? "yes" : "no"});
  }
  return table;
}

}  // namespace septa::cli
