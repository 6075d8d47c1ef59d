// Who may do what, on every endpoint: ONE table, run against REST
// (rest_test.cc) and against gRPC (grpc_test.cc). Each row names the REST
// call and the gRPC call that do the same thing, and the answer each caller
// gets as an HTTP status; the gRPC run expects the canonical code of that
// status. Callers: admin, owner and viewer of acme, the owner of another
// tenant (beta), and nobody.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace septa::test {

struct AuthorizationRow {
  std::string method, target, body;  // the REST call
  std::string rpc, request;          // the gRPC call: "Service/Method" and its request as proto JSON
  int admin, owner, viewer, other, none;
};

// Mutating rows are arranged so that the earlier callers' effects do not
// change later callers' answers (e.g. admin deletes last, in its own row).
// "{beta_token}" and "{admin_token}" stand for ids known only at run time.
inline std::vector<AuthorizationRow> AuthorizationTable() {
  return {
      {"GET", "/v1/trust-tiers", "", "TrustTierService/ListTrustTiers", "{}", 200, 200, 200, 200, 401},
      {"GET", "/v1/caller", "", "CallerService/GetCaller", "{}", 200, 200, 200, 200, 401},
      {"GET", "/v1/trust-tiers/shared", "", "TrustTierService/GetTrustTier", R"({"name":"shared"})", 200, 200, 200, 200,
       401},
      // Admins write tiers; "gold" has no tenants, so its admin may delete it.
      {"POST", "/v1/trust-tiers",
       R"({"name":"gold","gpu_sharing":"WHOLE_GPU","co_tenancy":"gold tenants","runtime_class":"kata",)"
       R"("credential_ttl_max":"3600s","api_limits":{"objects":10,"object_bytes":1000,"watches":1,"requests_in_flight":1}})",
       "TrustTierService/CreateTrustTier",
       R"({"trust_tier":{"name":"gold","gpu_sharing":"WHOLE_GPU","co_tenancy":"gold tenants","runtime_class":"kata",)"
       R"("credential_ttl_max":"3600s","api_limits":{"objects":10,"object_bytes":1000,"watches":1,"requests_in_flight":1}}})",
       201, 403, 403, 403, 401},
      {"PATCH", "/v1/trust-tiers/gold", R"({"description":"whole GPUs"})", "TrustTierService/UpdateTrustTier",
       R"({"trust_tier":{"name":"gold","description":"whole GPUs"},"update_mask":"description"})", 200, 403, 403, 403,
       401},
      {"DELETE", "/v1/trust-tiers/gold", "", "TrustTierService/DeleteTrustTier", R"({"name":"gold"})", 204, 403, 403,
       403, 401},
      {"GET", "/v1/tenants", "", "TenantService/ListTenants", "{}", 200, 200, 200, 200, 401},
      {"GET", "/v1/tenants/acme", "", "TenantService/GetTenant", R"({"name":"acme"})", 200, 200, 200, 404, 401},
      {"GET", "/v1/tenants/beta", "", "TenantService/GetTenant", R"({"name":"beta"})", 200, 404, 404, 200, 401},
      {"GET", "/v1/tenants/acme/quota", "", "TenantService/GetTenantQuota", R"({"tenant":"acme"})", 200, 200, 200, 404,
       401},
      {"POST", "/v1/tenants", R"({"name":"gamma","trust_tier":"shared","quota":{"vclusters":2}})",
       "TenantService/CreateTenant", R"({"tenant":{"name":"gamma","trust_tier":"shared","quota":{"vclusters":2}}})",
       201, 403, 403, 403, 401},
      {"PATCH", "/v1/tenants/acme", R"({"display_name":"A"})", "TenantService/UpdateTenant",
       R"({"tenant":{"name":"acme","display_name":"A"},"update_mask":"displayName"})", 200, 200, 403, 404, 401},
      {"PATCH", "/v1/tenants/acme", R"({"trust_tier":"dedicated"})", "TenantService/UpdateTenant",
       R"({"tenant":{"name":"acme","trust_tier":"dedicated"},"update_mask":"trustTier"})", 200, 403, 403, 404, 401},
      // Admins set a tenant's quota; its owner only reads it.
      {"PATCH", "/v1/tenants/acme", R"({"quota":{"gpu_milli":4000}})", "TenantService/UpdateTenant",
       R"({"tenant":{"name":"acme","quota":{"gpuMilli":4000}},"update_mask":"quota.gpuMilli"})", 200, 403, 403, 404,
       401},
      // Members of acme: its owner adds alice, so the admin's add of her passes authorization and conflicts; its
      // viewers read them; the owner removes her (the path %-encoded), so the admin's removal finds none.
      {"POST", "/v1/tenants/acme/members", R"({"member":"user:alice@acme.test","role":"editor"})",
       "TenantMemberService/CreateTenantMember", R"({"tenant":"acme","member":"user:alice@acme.test","role":"editor"})",
       409, 201, 403, 404, 401},
      {"GET", "/v1/tenants/acme/members", "", "TenantMemberService/ListTenantMembers", R"({"tenant":"acme"})", 200, 200,
       200, 404, 401},
      {"PATCH", "/v1/tenants/acme/members/user:alice@acme.test", R"({"role":"viewer"})",
       "TenantMemberService/UpdateTenantMember", R"({"tenant":"acme","member":"user:alice@acme.test","role":"viewer"})",
       200, 200, 403, 404, 401},
      {"DELETE", "/v1/tenants/acme/members/user%3Aalice%40acme.test", "", "TenantMemberService/DeleteTenantMember",
       R"({"tenant":"acme","member":"user:alice@acme.test"})", 404, 204, 403, 404, 401},
      // Virtual clusters of acme (dedicated by now). The owner creates vc1, so
      // the admin's create of the same name passes authorization and conflicts.
      {"POST", "/v1/tenants/acme/vclusters", R"({"name":"vc1","capacity":{"gpus":{"count":1}}})",
       "VirtualClusterService/CreateVirtualCluster",
       R"({"tenant":"acme","virtual_cluster":{"name":"vc1","capacity":{"gpus":{"count":1}}}})", 409, 201, 403, 404,
       401},
      {"GET", "/v1/tenants/acme/vclusters/vc1", "", "VirtualClusterService/GetVirtualCluster",
       R"({"tenant":"acme","name":"vc1"})", 200, 200, 200, 404, 401},
      {"GET", "/v1/tenants/acme/vclusters", "", "VirtualClusterService/ListVirtualClusters", R"({"tenant":"acme"})",
       200, 200, 200, 404, 401},
      // vc1 is PROVISIONING (no provisioner here): it cannot sleep, and waking it asks for nothing new.
      {"POST", "/v1/tenants/acme/vclusters/vc1:sleep", "", "VirtualClusterService/SleepVirtualCluster",
       R"({"tenant":"acme","name":"vc1"})", 412, 412, 403, 404, 401},
      {"POST", "/v1/tenants/acme/vclusters/vc1:wake", "", "VirtualClusterService/WakeVirtualCluster",
       R"({"tenant":"acme","name":"vc1"})", 200, 200, 403, 404, 401},
      // Its credentials: a viewer may not ask for role admin; vc1 is not READY, so no kubeconfig.
      {"POST", "/v1/tenants/acme/vclusters/vc1:kubeconfig", R"({"role":"admin"})",
       "VirtualClusterService/IssueKubeconfig", R"({"tenant":"acme","vcluster":"vc1","role":"admin"})", 412, 412, 403,
       404, 401},
      {"GET", "/v1/tenants/acme/vclusters/vc1/pods?not_running=true", "",
       "VirtualClusterService/ListVirtualClusterPods", R"({"tenant":"acme","vcluster":"vc1","not_running":true})", 200,
       200, 200, 404, 401},
      {"GET", "/v1/tenants/acme/vclusters/vc1/credentials", "", "VirtualClusterService/ListCredentials",
       R"({"tenant":"acme","vcluster":"vc1"})", 200, 200, 200, 404, 401},
      {"DELETE", "/v1/tenants/acme/vclusters/vc1/credentials/00000000000000000000000000000001", "",
       "VirtualClusterService/RevokeCredential",
       R"({"tenant":"acme","vcluster":"vc1","serial":"00000000000000000000000000000001"})", 404, 404, 403, 404, 401},
      {"PATCH", "/v1/tenants/acme/vclusters/vc1", R"({"display_name":"V"})",
       "VirtualClusterService/UpdateVirtualCluster",
       R"({"virtual_cluster":{"tenant":"acme","name":"vc1","display_name":"V"},"update_mask":"displayName"})", 200, 200,
       403, 404, 401},
      // Never provisioned, vc1 is gone once its owner deleted it.
      {"DELETE", "/v1/tenants/acme/vclusters/vc1", "", "VirtualClusterService/DeleteVirtualCluster",
       R"({"tenant":"acme","name":"vc1"})", 404, 200, 403, 404, 401},
      // GitOps: plans and applies run each object's own rules, so another
      // tenant's plan names acme's cluster REFUSED (its apply: 404). The owner
      // applies gitops into acme's set "git"; the admin's platform set "git"
      // then conflicts with it (409); the owner's prune of the set removes it.
      {"POST", "/v1/applysets/git:diff",
       R"({"objects":[{"virtual_cluster":{"tenant":"acme","name":"gitops","capacity":{"gpus":{"count":1}}}}]})",
       "DeclarativeService/Diff",
       R"({"apply_set":"git","objects":[{"virtual_cluster":{"tenant":"acme","name":"gitops","capacity":{"gpus":{"count":1}}}}]})",
       200, 200, 200, 200, 401},
      {"POST", "/v1/applysets/git:apply",
       R"({"objects":[{"virtual_cluster":{"tenant":"acme","name":"gitops","capacity":{"gpus":{"count":1}}}}]})",
       "DeclarativeService/Apply",
       R"({"apply_set":"git","objects":[{"virtual_cluster":{"tenant":"acme","name":"gitops","capacity":{"gpus":{"count":1}}}}]})",
       409, 200, 403, 404, 401},
      {"POST", "/v1/applysets/git:apply", R"({"prune":true,"allow_empty":true})", "DeclarativeService/Apply",
       R"({"apply_set":"git","prune":true,"allow_empty":true})", 200, 200, 403, 200, 401},
      // Each owner's sets: acme's "git" (its viewers read it too); no one else has one of that name.
      {"GET", "/v1/applysets/git", "", "DeclarativeService/GetApplySet", R"({"apply_set":"git"})", 404, 200, 200, 404,
       401},
      {"GET", "/v1/applysets", "", "DeclarativeService/ListApplySets", "{}", 200, 200, 200, 200, 401},
      {"POST", "/v1/tokens", R"({"principal":"tenant:acme","role":"viewer"})", "TokenService/CreateToken",
       R"({"principal":"tenant:acme","role":"viewer"})", 201, 201, 403, 404, 401},
      {"POST", "/v1/tokens", R"({"principal":"admin","role":"owner"})", "TokenService/CreateToken",
       R"({"principal":"admin","role":"owner"})", 201, 403, 403, 403, 401},
      {"GET", "/v1/tokens", "", "TokenService/ListTokens", "{}", 200, 200, 200, 200, 401},
      // Anonymous: the subject token is the credential, so every caller gets the same answer, here that this
      // server trusts no identity provider (tests/e2e/oidc exchanges tokens of a real one).
      {"POST", "/v1/tokens:exchange",
       R"({"grant_type":"urn:ietf:params:oauth:grant-type:token-exchange","subject_token":"a.b.c",)"
       R"("subject_token_type":"urn:ietf:params:oauth:token-type:id_token"})",
       "TokenService/ExchangeToken",
       R"({"grant_type":"urn:ietf:params:oauth:grant-type:token-exchange","subject_token":"a.b.c",)"
       R"("subject_token_type":"urn:ietf:params:oauth:token-type:id_token"})",
       412, 412, 412, 412, 412},
      {"GET", "/v1/inventory/nodes", "", "InventoryService/ListNodes", "{}", 200, 403, 403, 403, 401},
      {"GET", "/v1/tenants/acme/free-capacity", "", "InventoryService/GetFreeCapacity", R"({"tenant":"acme"})", 200,
       200, 200, 404, 401},
      {"GET", "/v1/inventory/free-capacity", "", "InventoryService/GetInventoryFreeCapacity", "{}", 200, 403, 403, 403,
       401},
      // Usage: a tenant's is its own (viewers too), the platform's and prices the admins'; hoarders: a
      // tenant asking for none gets its own.
      {"GET", "/v1/tenants/acme/usage?start=2026-11-01T00:00:00Z&end=2026-12-01T00:00:00Z", "",
       "UsageService/GetTenantUsage",
       R"({"tenant":"acme","start":"2026-11-01T00:00:00Z","end":"2026-12-01T00:00:00Z"})", 200, 200, 200, 404, 401},
      {"GET", "/v1/usage?start=2026-11-01T00:00:00Z&end=2026-12-01T00:00:00Z", "", "UsageService/GetPlatformUsage",
       R"({"start":"2026-11-01T00:00:00Z","end":"2026-12-01T00:00:00Z"})", 200, 403, 403, 403, 401},
      {"GET", "/v1/usage/hoarders?tenant=acme", "", "UsageService/ListHoarders", R"({"tenant":"acme"})", 200, 200, 200,
       404, 401},
      {"GET", "/v1/usage/hoarders", "", "UsageService/ListHoarders", "{}", 200, 200, 200, 200, 401},
      {"GET", "/v1/usage/prices", "", "UsageService/ListGpuPrices", "{}", 200, 403, 403, 403, 401},
      {"POST", "/v1/usage/prices", R"({"model":"A100-80GB","tier":"dedicated","per_gpu_hour":1})",
       "UsageService/CreateGpuPrice", R"({"price":{"model":"A100-80GB","tier":"dedicated","per_gpu_hour":1}})", 201,
       403, 403, 403, 401},
      // beta's owner revokes it; the admin's revocation of the revoked token then changes nothing and succeeds.
      {"DELETE", "/v1/tokens/{beta_token}", "", "TokenService/RevokeToken", R"({"id":"{beta_token}"})", 204, 404, 404,
       204, 401},
      {"DELETE", "/v1/tokens/{admin_token}", "", "TokenService/RevokeToken", R"({"id":"{admin_token}"})", 204, 404, 404,
       404, 401},
      {"DELETE", "/v1/tenants/acme", "", "TenantService/DeleteTenant", R"({"name":"acme"})", 204, 403, 403, 404, 401},
  };
}

// Least privileged first, so that a successful write comes last.
inline const std::vector<std::pair<std::string, int AuthorizationRow::*>>& CallersInOrder() {
  static const std::vector<std::pair<std::string, int AuthorizationRow::*>> callers = {
      {"none", &AuthorizationRow::none},
      {"viewer", &AuthorizationRow::viewer},
      {"other", &AuthorizationRow::other},
      {"owner", &AuthorizationRow::owner},
      {"admin", &AuthorizationRow::admin}};
  return callers;
}

// `text` with every "{name}" of `ids` replaced by its value.
inline std::string WithIds(std::string text, const std::map<std::string, std::string>& ids) {
  for (const auto& [name, value] : ids) {
    const std::string placeholder = "{" + name + "}";
    for (auto at = text.find(placeholder); at != std::string::npos; at = text.find(placeholder, at + value.size())) {
      text.replace(at, placeholder.size(), value);
    }
  }
  return text;
}

// The principals of the table: their bearer tokens by caller name ("none":
// empty), and the run-time ids. `Base` is ApiTest or a fixture derived from it.
template <typename Base>
class AuthorizationTableTest : public Base {
 protected:
  void SetUpSubjects() {
    this->CreateTenant("acme");
    this->CreateTenant("beta");
    this->PutNodes({ApiTest::WholeGpuNode("a100-0", 4)});
    bearer_ = {{"none", ""},
               {"viewer", this->CreateToken("tenant:acme", "viewer")},
               {"other", this->CreateToken("tenant:beta", "owner")},
               {"owner", this->CreateToken("tenant:acme", "owner")},
               {"admin", this->admin_}};
    ids_ = {{"beta_token", IdOfNewToken("tenant:beta", "owner")}, {"admin_token", IdOfNewToken("admin", "viewer")}};
  }

  std::map<std::string, std::string> bearer_;
  std::map<std::string, std::string> ids_;

 private:
  std::string IdOfNewToken(const std::string& principal, const std::string& role) {
    auto r =
        this->Call(this->admin_, "POST", "/v1/tokens", nlohmann::json{{"principal", principal}, {"role", role}}.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return nlohmann::json::parse(r.body).value("id", "");
  }
};

}  // namespace septa::test
