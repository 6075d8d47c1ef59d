// The table columns of each resource: what an admin scans for at a glance.
// Everything else is in -o json / -o yaml.
#pragma once

#include <google/protobuf/timestamp.pb.h>

#include <string>

#include "septa/v1/declarative.pb.h"
#include "septa/v1/inventory.pb.h"
#include "septa/v1/member.pb.h"
#include "septa/v1/tenant.pb.h"
#include "septa/v1/token.pb.h"
#include "septa/v1/trust_tier.pb.h"
#include "septa/v1/usage.pb.h"
#include "septa/v1/vcluster.pb.h"
#include "services/cli/output.h"

namespace septa::cli {

// QUOTA: each bounded quantity as used/limit (GetTenant sends usage) or
// limit (lists do not), GPUs and CPUs in units to three decimals.
Table TenantTable(const google::protobuf::RepeatedPtrField<v1::Tenant>& tenants);
// MEMBER, ROLE, CREATED, UPDATED, ETAG.
Table MemberTable(const google::protobuf::RepeatedPtrField<v1::TenantMember>& members);
Table TrustTierTable(const google::protobuf::RepeatedPtrField<v1::TrustTier>& tiers);
Table TokenTable(const google::protobuf::RepeatedPtrField<v1::ApiToken>& tokens);
Table CredentialTable(const google::protobuf::RepeatedPtrField<v1::Credential>& credentials);
// One row per GPU (one per node without GPUs): its MIG layout and its holders.
Table InventoryTable(const google::protobuf::RepeatedPtrField<v1::InventoryNode>& nodes);
// What each asks for, what its reservation holds ("2 x 3g.40gb on h100-0/0,
// h100-0/1") and its conditions' reasons.
Table VirtualClusterTable(const google::protobuf::RepeatedPtrField<v1::VirtualCluster>& vclusters);

// An apply set as its last apply left it: NAME, REVISION, MEMBERS, APPLIED
// BY, APPLIED, SOURCE, and with `sync` SYNC (ListApplySets does not check
// drift, so a list has no SYNC column).
Table ApplySetTable(const google::protobuf::RepeatedPtrField<v1::ApplySet>& sets, bool sync);
// Each member changed outside its set since the set's last apply, with the
// newest such change: who, when, what, and which audit record and request.
Table DriftedMemberTable(const google::protobuf::RepeatedPtrField<v1::DriftedMember>& drifted);

// Usage rows: the bucket, the grouped dimensions (tenant, vcluster, tier,
// model, mig_profile: those any row has), then ALLOCATED_GPU_HOURS,
// USED_GPU_HOURS, WASTE_GPU_HOURS, EFFICIENCY, COVERAGE, COST (in
// `currency`). With `exact`, numbers carry full precision (CSV for finance),
// else three decimals.
Table UsageTable(const v1::UsageReport& report, bool exact);
Table UsagePoolTable(const google::protobuf::RepeatedPtrField<v1::UsagePoolItem>& pool, bool exact);
Table HoarderTable(const google::protobuf::RepeatedPtrField<v1::Hoarder>& hoarders);

// "CapacityReady=True (CapacityReserved: 1 instance held)"; "no CapacityReady condition".
std::string DescribeCondition(const v1::VirtualCluster& vcluster, const std::string& type);

// One resource as the list the table functions take.
template <typename Item>
google::protobuf::RepeatedPtrField<Item> AsList(const Item& item) {
  google::protobuf::RepeatedPtrField<Item> items;
  *items.Add() = item;
  return items;
}

// RFC 3339 in UTC to the second; "-" when unset.
std::string FormatTime(const google::protobuf::Timestamp& time, bool is_set);

}  // namespace septa::cli
