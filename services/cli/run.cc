#include "services/cli/run.h"

#include <google/protobuf/empty.pb.h>

#include <map>
#include <optional>
#include <string_view>

#include "common/text.h"
#include "services/base/file.h"
#include "services/cli/apply_command.h"
#include "services/cli/config_file.h"
#include "services/cli/error_line.h"
#include "services/cli/exec_credential.h"
#include "services/cli/invocation.h"
#include "services/cli/login.h"
#include "services/cli/septa_client.h"
#include "services/cli/vcluster_wait.h"
#include "services/cli/views.h"
#include "tenancy/condition.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::cli {

namespace {

constexpr char kDefaultServer[] = "127.0.0.1:9090";

// `spec`'s fields into `vc`, and their paths into `mask` when given.
void ApplySpec(const VclusterSpec& spec, v1::VirtualCluster& vc, google::protobuf::FieldMask* mask) {
  auto path = [&](const char* p) {
    if (mask) mask->add_paths(p);
  };
  if (spec.display_name) {
    vc.set_display_name(*spec.display_name);
    path("display_name");
  }
  if (spec.capacity) {
    *vc.mutable_capacity() = *spec.capacity;
    path("capacity");
  }
  if (spec.cpu_milli) {
    vc.mutable_quota()->set_cpu_milli(*spec.cpu_milli);
    path("quota.cpu_milli");
  }
  if (spec.memory_mib) {
    vc.mutable_quota()->set_memory_mib(*spec.memory_mib);
    path("quota.memory_mib");
  }
  if (spec.pods) {
    vc.mutable_quota()->set_pods(*spec.pods);
    path("quota.pods");
  }
  if (spec.priority) {
    vc.mutable_queue()->set_priority(*spec.priority);
    path("queue.priority");
  }
  if (spec.over_quota_weight) {
    vc.mutable_queue()->set_over_quota_weight(*spec.over_quota_weight);
    path("queue.over_quota_weight");
  }
}

struct Connection {
  std::string server;
  std::string token;
  SeptaClient::Security security;
  std::filesystem::path config_path{};
  std::optional<LoginSession> login{};  // the file's login, for when no token is given
  std::string tenant{};                 // --in-tenant / $SEPTA_TENANT; empty: none
};

// --config, else ~/.config/septa/config.yaml.
std::filesystem::path ConfigPath(const GlobalOptions& options, const Environment& env) {
  return options.config_path ? std::filesystem::path(*options.config_path) : DefaultConfigPath(env.home);
}

// Flags win over the config file; the token falls back to $SEPTA_TOKEN,
// then to the file's login (UseLogin).
Result<Connection> ResolveConnection(const GlobalOptions& options, const Environment& env) {
  const bool named = options.config_path.has_value();
  Result<ConfigFile> file = ConfigFile{};
  const std::filesystem::path file_path = ConfigPath(options, env);
  if (named || !env.home.empty()) file = LoadConfigFile(file_path, named);
  SEPTA_RETURN_IF_ERROR(file);
  Connection connection;
  connection.server = options.server.value_or(file->server.value_or(kDefaultServer));
  connection.token = options.token.value_or(file->token.value_or(env.septa_token.value_or("")));
  connection.config_path = file_path;
  connection.login = file->login;
  const std::optional<std::string> tenant =
      options.in_tenant ? options.in_tenant : (env.variable ? env.variable("SEPTA_TENANT") : std::nullopt);
  if (tenant) {
    // gRPC metadata holds printable ASCII; septad checks the name.
    const bool printable = std::all_of(tenant->begin(), tenant->end(), [](char c) { return c > 0x20 && c < 0x7f; });
    if (tenant->empty() || tenant->size() > 253 || !printable) {
      return InvalidArgument(std::string(options.in_tenant ? "--in-tenant" : "$SEPTA_TENANT") +
                             ": give a tenant's name (1-253 printable ASCII characters, no spaces)");
    }
    connection.tenant = *tenant;
  }
  const std::optional<std::string> ca_file = options.ca_file ? options.ca_file : file->ca_file;
  connection.security.tls = options.tls || file->tls.value_or(false) || ca_file.has_value();
  if (ca_file) {
    auto pem = base::ReadFile(*ca_file);
    if (!pem.ok()) {
      const std::string from = options.ca_file ? "--ca-file" : file_path.string() + ": ca_file";
      return InvalidArgument(from + ": " + pem.status().message());
    }
    connection.security.root_ca_pem = *std::move(pem);
  }
  return connection;
}

// Each given limit into its TenantQuota field (reflection: the flags name
// the fields); an unlimited one stays absent.
void SetQuota(const QuotaLimits& limits, v1::TenantQuota& quota) {
  const auto* reflection = quota.GetReflection();
  for (const auto& [field, limit] : limits) {
    const auto* descriptor = v1::TenantQuota::descriptor()->FindFieldByName(field);
    if (limit) reflection->SetInt32(&quota, descriptor, static_cast<std::int32_t>(*limit));
  }
}

// Runs one imperative command against septad and prints its result (the
// GitOps commands, with exit codes of their own, run in RunGitOps).
class CommandRunner {
 public:
  CommandRunner(SeptaClient& client, OutputFormat format, const Clock& clock, std::ostream& out, std::ostream& err)
      : client_(client), format_(format), clock_(clock), out_(out), err_(err) {}

  // Why --wait gave up, if it did.
  const std::optional<Status>& gave_up() const { return gave_up_; }

  grpc::Status operator()(const TenantCreate& c) {
    v1::CreateTenantRequest request;
    request.set_idempotency_key(c.idempotency_key);
    v1::Tenant& tenant = *request.mutable_tenant();
    tenant.set_name(c.name);
    tenant.set_trust_tier(c.tier);
    tenant.set_display_name(c.display_name);
    tenant.mutable_labels()->insert(c.labels.begin(), c.labels.end());
    SetQuota(c.quota, *tenant.mutable_quota());
    return ShowTenant(client_.Call(client_.tenants(), &v1::TenantService::Stub::CreateTenant, request, &tenant_));
  }

  grpc::Status operator()(const TenantGet& c) {
    v1::GetTenantRequest request;
    request.set_name(c.name);
    return ShowTenant(client_.Call(client_.tenants(), &v1::TenantService::Stub::GetTenant, request, &tenant_));
  }

  grpc::Status operator()(const TenantList& c) {
    v1::ListTenantsRequest request;
    request.set_filter(c.filter);
    request.set_page_size(c.page_size);
    request.set_page_token(c.page_token);
    v1::ListTenantsResponse all;
    do {
      v1::ListTenantsResponse page;
      const auto status = client_.Call(client_.tenants(), &v1::TenantService::Stub::ListTenants, request, &page);
      if (!status.ok()) return status;
      all.mutable_tenants()->MergeFrom(page.tenants());
      all.set_next_page_token(page.next_page_token());
      request.set_page_token(page.next_page_token());
    } while (c.all_pages && !request.page_token().empty());
    out_ << Render(format_, all, TenantTable(all.tenants()));
    if (format_ == OutputFormat::kTable && !all.next_page_token().empty()) {
      err_ << "more tenants: add --all, or --page-token " << all.next_page_token() << "\n";
    }
    return grpc::Status::OK;
  }

  grpc::Status operator()(const TenantUpdate& c) {
    v1::UpdateTenantRequest request;
    v1::Tenant& tenant = *request.mutable_tenant();
    tenant.set_name(c.name);
    tenant.set_etag(c.etag);
    auto& mask = *request.mutable_update_mask();
    if (c.display_name) {
      tenant.set_display_name(*c.display_name);
      mask.add_paths("display_name");
    }
    if (c.labels) {
      tenant.mutable_labels()->insert(c.labels->begin(), c.labels->end());
      mask.add_paths("labels");
    }
    if (c.tier) {
      tenant.set_trust_tier(*c.tier);
      mask.add_paths("trust_tier");
    }
    if (c.state) {
      v1::Tenant::State state = v1::Tenant::STATE_UNSPECIFIED;
      v1::Tenant::State_Parse(*c.state, &state);  // the parser let only ACTIVE and SUSPENDED through
      tenant.set_state(state);
      mask.add_paths("state");
    }
    SetQuota(c.quota, *tenant.mutable_quota());
    for (const auto& [field, limit] : c.quota) mask.add_paths("quota." + field);
    return ShowTenant(client_.Call(client_.tenants(), &v1::TenantService::Stub::UpdateTenant, request, &tenant_));
  }

  grpc::Status operator()(const TenantDelete& c) {
    v1::DeleteTenantRequest request;
    request.set_name(c.name);
    request.set_etag(c.etag);
    return ShowDone(client_.Call(client_.tenants(), &v1::TenantService::Stub::DeleteTenant, request, &empty_),
                    "tenant \"" + c.name + "\" deleted");
  }

  grpc::Status operator()(const MemberList& c) {
    v1::ListTenantMembersRequest request;
    request.set_tenant(c.tenant);
    v1::ListTenantMembersResponse members;
    const auto status =
        client_.Call(client_.members(), &v1::TenantMemberService::Stub::ListTenantMembers, request, &members);
    if (status.ok()) out_ << Render(format_, members, MemberTable(members.members()));
    return status;
  }

  grpc::Status operator()(const MemberAdd& c) {
    v1::CreateTenantMemberRequest request;
    request.set_tenant(c.tenant);
    request.set_member(c.member);
    request.set_role(c.role);
    return ShowMember(
        client_.Call(client_.members(), &v1::TenantMemberService::Stub::CreateTenantMember, request, &member_));
  }

  grpc::Status operator()(const MemberSetRole& c) {
    v1::UpdateTenantMemberRequest request;
    request.set_tenant(c.tenant);
    request.set_member(c.member);
    request.set_role(c.role);
    request.set_etag(c.etag);
    return ShowMember(
        client_.Call(client_.members(), &v1::TenantMemberService::Stub::UpdateTenantMember, request, &member_));
  }

  grpc::Status operator()(const MemberRemove& c) {
    v1::DeleteTenantMemberRequest request;
    request.set_tenant(c.tenant);
    request.set_member(c.member);
    request.set_etag(c.etag);
    return ShowDone(
        client_.Call(client_.members(), &v1::TenantMemberService::Stub::DeleteTenantMember, request, &empty_),
        "member " + EscapeControlCharacters(c.member) + " removed from tenant \"" + c.tenant + "\"");
  }

  grpc::Status operator()(const TierList&) {
    v1::ListTrustTiersResponse tiers;
    const auto status =
        client_.Call(client_.tiers(), &v1::TrustTierService::Stub::ListTrustTiers, v1::ListTrustTiersRequest(), &tiers);
    if (status.ok()) out_ << Render(format_, tiers, TrustTierTable(tiers.trust_tiers()));
    return status;
  }

  grpc::Status operator()(const TierGet& c) {
    v1::GetTrustTierRequest request;
    request.set_name(c.name);
    v1::TrustTier tier;
    const auto status = client_.Call(client_.tiers(), &v1::TrustTierService::Stub::GetTrustTier, request, &tier);
    if (status.ok()) out_ << Render(format_, tier, TrustTierTable(AsList(tier)));
    return status;
  }

  grpc::Status operator()(const TokenCreate& c) {
    v1::CreateTokenRequest request;
    request.set_principal(c.principal);
    request.set_role(c.role);
    request.set_ttl(c.ttl);
    request.set_description(c.description);
    for (const std::string& set : c.apply_sets) request.add_apply_sets(set);
    v1::ApiToken token;
    const auto status = client_.Call(client_.tokens(), &v1::TokenService::Stub::CreateToken, request, &token);
    if (!status.ok()) return status;
    out_ << Render(format_, token, TokenTable(AsList(token)));
    if (format_ == OutputFormat::kTable) {
      out_ << "\nSecret (shown only once; store it now, Septa keeps only its hash):\n  " << token.token() << "\n";
    }
    return status;
  }

  grpc::Status operator()(const TokenList&) {
    v1::ListTokensResponse tokens;
    const auto status =
        client_.Call(client_.tokens(), &v1::TokenService::Stub::ListTokens, v1::ListTokensRequest(), &tokens);
    if (status.ok()) out_ << Render(format_, tokens, TokenTable(tokens.tokens()));
    return status;
  }

  grpc::Status operator()(const TokenRevoke& c) {
    v1::RevokeTokenRequest request;
    request.set_id(c.id);
    return ShowDone(client_.Call(client_.tokens(), &v1::TokenService::Stub::RevokeToken, request, &empty_),
                    "token " + c.id + " revoked");
  }

  grpc::Status operator()(const InventoryList&) {
    v1::ListNodesRequest request;
    v1::ListNodesResponse all;
    do {
      v1::ListNodesResponse page;
      const auto status = client_.Call(client_.inventory(), &v1::InventoryService::Stub::ListNodes, request, &page);
      if (!status.ok()) return status;
      all.mutable_nodes()->MergeFrom(page.nodes());
      request.set_page_token(page.next_page_token());
    } while (!request.page_token().empty());
    out_ << Render(format_, all, InventoryTable(all.nodes()));
    return grpc::Status::OK;
  }

  grpc::Status operator()(const UsageShow& c) {
    // No window: this calendar month, UTC.
    std::string start = c.start, end = c.end;
    if (start.empty() && end.empty()) {
      const auto today = std::chrono::floor<std::chrono::days>(clock_.Now());
      const std::chrono::year_month_day day{today};
      const std::chrono::sys_days first{day.year() / day.month() / 1};
      const std::chrono::sys_days next{(day.year() / day.month() / 1) + std::chrono::months(1)};
      start = FormatRfc3339(first);
      end = FormatRfc3339(next);
    }
    const bool exact = format_ == OutputFormat::kCsv;
    if (!c.tenant.empty()) {
      v1::GetTenantUsageRequest request;
      request.set_tenant(c.tenant);
      request.set_start(start);
      request.set_end(end);
      request.set_step(c.step);
      for (const std::string& by : c.group_by) request.add_group_by(by);
      v1::UsageReport report;
      const auto status = client_.Call(client_.usage(), &v1::UsageService::Stub::GetTenantUsage, request, &report);
      if (!status.ok()) return status;
      out_ << Render(format_, report, UsageTable(report, exact));
      return status;
    }
    v1::GetPlatformUsageRequest request;
    request.set_start(start);
    request.set_end(end);
    request.set_step(c.step);
    for (const std::string& by : c.group_by) request.add_group_by(by);
    v1::PlatformUsageReport report;
    const auto status = client_.Call(client_.usage(), &v1::UsageService::Stub::GetPlatformUsage, request, &report);
    if (!status.ok()) return status;
    out_ << Render(format_, report, UsageTable(report.usage(), exact));
    if (format_ == OutputFormat::kTable) out_ << "\n" << RenderTable(UsagePoolTable(report.pool(), false));
    return status;
  }

  grpc::Status operator()(const UsageHoarders& c) {
    v1::ListHoardersRequest request;
    request.set_tenant(c.tenant);
    v1::ListHoardersResponse response;
    const auto status = client_.Call(client_.usage(), &v1::UsageService::Stub::ListHoarders, request, &response);
    if (!status.ok()) return status;
    out_ << Render(format_, response, HoarderTable(response.hoarders()));
    return status;
  }

  grpc::Status operator()(const VclusterCreate& c) {
    v1::CreateVirtualClusterRequest request;
    request.set_tenant(c.tenant);
    request.set_idempotency_key(c.idempotency_key);
    v1::VirtualCluster& vc = *request.mutable_virtual_cluster();
    vc.set_name(c.name);
    vc.set_tenant(c.tenant);
    ApplySpec(c.spec, vc, nullptr);
    const auto status =
        client_.Call(client_.vclusters(), &v1::VirtualClusterService::Stub::CreateVirtualCluster, request, &vcluster_);
    return ShowVcluster(status, c.wait, WaitGoal::kSettled);
  }

  grpc::Status operator()(const VclusterGet& c) {
    v1::GetVirtualClusterRequest request;
    request.set_tenant(c.tenant);
    request.set_name(c.name);
    return ShowVcluster(
        client_.Call(client_.vclusters(), &v1::VirtualClusterService::Stub::GetVirtualCluster, request, &vcluster_),
        WaitOptions{}, WaitGoal::kSettled);
  }

  grpc::Status operator()(const VclusterList& c) {
    v1::ListVirtualClustersRequest request;
    request.set_tenant(c.tenant);
    request.set_page_size(c.page_size);
    if (!c.state.empty()) request.set_filter("state=" + c.state);
    v1::ListVirtualClustersResponse all;
    do {
      v1::ListVirtualClustersResponse page;
      const auto status =
          client_.Call(client_.vclusters(), &v1::VirtualClusterService::Stub::ListVirtualClusters, request, &page);
      if (!status.ok()) return status;
      all.mutable_virtual_clusters()->MergeFrom(page.virtual_clusters());
      request.set_page_token(page.next_page_token());
    } while (!request.page_token().empty());
    out_ << Render(format_, all, VirtualClusterTable(all.virtual_clusters()));
    return grpc::Status::OK;
  }

  grpc::Status operator()(const VclusterUpdate& c) {
    v1::UpdateVirtualClusterRequest request;
    v1::VirtualCluster& vc = *request.mutable_virtual_cluster();
    vc.set_tenant(c.tenant);
    vc.set_name(c.name);
    vc.set_etag(c.etag);
    ApplySpec(c.spec, vc, request.mutable_update_mask());
    const auto status =
        client_.Call(client_.vclusters(), &v1::VirtualClusterService::Stub::UpdateVirtualCluster, request, &vcluster_);
    return ShowVcluster(status, c.wait, WaitGoal::kSettled);
  }

  grpc::Status operator()(const VclusterDelete& c) {
    v1::DeleteVirtualClusterRequest request;
    request.set_tenant(c.tenant);
    request.set_name(c.name);
    request.set_etag(c.etag);
    const auto status =
        client_.Call(client_.vclusters(), &v1::VirtualClusterService::Stub::DeleteVirtualCluster, request, &vcluster_);
    return ShowVcluster(status, c.wait, WaitGoal::kDeleting);
  }

  grpc::Status operator()(const VclusterSleep& c) {
    v1::SleepVirtualClusterRequest request;
    request.set_tenant(c.tenant);
    request.set_name(c.name);
    request.set_etag(c.etag);
    const auto status =
        client_.Call(client_.vclusters(), &v1::VirtualClusterService::Stub::SleepVirtualCluster, request, &vcluster_);
    return ShowVcluster(status, c.wait, WaitGoal::kAsleep);
  }

  // The kubeconfig alone on stdout (so `> file` works); a capped ttl is told on stderr.
  grpc::Status operator()(const VclusterKubeconfig& c) {
    v1::IssueKubeconfigRequest request;
    request.set_tenant(c.tenant);
    request.set_vcluster(c.name);
    request.set_ttl(c.ttl);
    request.set_role(c.role);
    v1::IssueKubeconfigResponse issued;
    const auto status =
        client_.Call(client_.vclusters(), &v1::VirtualClusterService::Stub::IssueKubeconfig, request, &issued);
    if (!status.ok()) return status;
    if (issued.ttl_capped()) {
      err_ << "note: --ttl " << c.ttl << " is longer than the trust tier allows; the certificate expires "
           << FormatTime(issued.expire_time(), true) << "\n";
    }
    out_ << issued.kubeconfig();
    return grpc::Status::OK;
  }

  grpc::Status operator()(const VclusterCredentials& c) {
    v1::ListCredentialsRequest request;
    request.set_tenant(c.tenant);
    request.set_vcluster(c.name);
    v1::ListCredentialsResponse all;
    do {
      v1::ListCredentialsResponse page;
      const auto status =
          client_.Call(client_.vclusters(), &v1::VirtualClusterService::Stub::ListCredentials, request, &page);
      if (!status.ok()) return status;
      all.mutable_credentials()->MergeFrom(page.credentials());
      request.set_page_token(page.next_page_token());
    } while (!request.page_token().empty());
    out_ << Render(format_, all, CredentialTable(all.credentials()));
    return grpc::Status::OK;
  }

  grpc::Status operator()(const VclusterRevokeCredential& c) {
    v1::RevokeCredentialRequest request;
    request.set_tenant(c.tenant);
    request.set_vcluster(c.name);
    request.set_serial(c.serial);
    v1::Credential revoked;
    return ShowDone(
        client_.Call(client_.vclusters(), &v1::VirtualClusterService::Stub::RevokeCredential, request, &revoked),
        "credential " + c.serial + " of virtual cluster " + tenancy::VirtualClusterText(c.tenant, c.name) + " revoked");
  }

  grpc::Status operator()(const VclusterWake& c) {
    v1::WakeVirtualClusterRequest request;
    request.set_tenant(c.tenant);
    request.set_name(c.name);
    request.set_etag(c.etag);
    const auto status =
        client_.Call(client_.vclusters(), &v1::VirtualClusterService::Stub::WakeVirtualCluster, request, &vcluster_);
    return ShowVcluster(status, c.wait, WaitGoal::kSettled);
  }

 private:
  // Prints the virtual cluster a call returned, after --wait if asked.
  grpc::Status ShowVcluster(const grpc::Status& status, const WaitOptions& wait, WaitGoal goal) {
    if (!status.ok()) return status;
    bool gone = false;
    if (wait.wait) {
      const auto waited = Wait(wait.timeout, goal, gone);
      if (!waited.ok()) return waited;
    }
    if (!gone) out_ << Render(format_, vcluster_, VirtualClusterTable(AsList(vcluster_)));
    return grpc::Status::OK;
  }

  // Prints to err_ each condition that is new or whose status or reason changed since `seen`.
  void ReportConditions(const std::string& who, std::map<std::string, std::string>& seen) {
    for (const auto& c : vcluster_.conditions()) {
      const std::string now = c.status() + " " + c.reason();
      auto [at, added] = seen.emplace(c.type(), now);
      if (!added && at->second == now) continue;
      at->second = now;
      err_ << "virtual cluster " << who << ": " << c.type() << " " << c.status() << " (" << c.reason() << ")"
           << (c.message().empty() ? "" : ": " + c.message()) << "\n";
    }
  }

  // Waits (vcluster_wait.h) until `goal` is reached (kDeleting: or the
  // virtual cluster is gone), printing each state change and each condition
  // as it turns True or False to err_; at the deadline records in gave_up_ why.
  grpc::Status Wait(std::chrono::milliseconds timeout, WaitGoal goal, bool& gone) {
    const std::string who = tenancy::VirtualClusterText(vcluster_.tenant(), vcluster_.name());
    std::vector<WaitTarget> targets{
        {.tenant = vcluster_.tenant(), .name = vcluster_.name(), .goal = goal, .seen = vcluster_, .gone = false}};
    WaitTarget& target = targets.front();
    std::optional<v1::VirtualCluster::State> state;  // the state last printed
    std::map<std::string, std::string> conditions;   // type -> "status reason" last printed
    const auto progress = [&] {
      if (target.gone) {
        err_ << "virtual cluster " << who << ": gone\n";
        return;
      }
      vcluster_ = *target.seen;
      const bool first = !state;
      if (first) err_ << "virtual cluster " << who << ": " << v1::VirtualCluster::State_Name(vcluster_.state()) << "\n";
      ReportConditions(who, conditions);
      if (!first && vcluster_.state() != *state) {
        err_ << "virtual cluster " << who << ": " << v1::VirtualCluster::State_Name(vcluster_.state()) << "\n";
      }
      state = vcluster_.state();
    };
    const WaitOutcome outcome = WaitFor(targets, timeout, clock_, ReaderOf(client_), progress);
    gone = target.gone;
    if (outcome.end == WaitEnd::kTimedOut) {
      gave_up_ = DeadlineExceeded(
          "gave up waiting after " + FormatWaitTimeout(timeout) + ": virtual cluster " + who + " is still " +
          v1::VirtualCluster::State_Name(vcluster_.state()) + ", " +
          DescribeCondition(vcluster_, goal == WaitGoal::kAsleep ? tenancy::kSleeping : tenancy::kCapacityReady));
    }
    return outcome.status;
  }

  grpc::Status ShowMember(const grpc::Status& status) {
    if (status.ok()) out_ << Render(format_, member_, MemberTable(AsList(member_)));
    return status;
  }

  grpc::Status ShowTenant(const grpc::Status& status) {
    if (status.ok()) out_ << Render(format_, tenant_, TenantTable(AsList(tenant_)));
    return status;
  }

  // Calls that return nothing: a sentence for people, {} for programs.
  grpc::Status ShowDone(const grpc::Status& status, const std::string& sentence) {
    if (!status.ok()) return status;
    if (format_ == OutputFormat::kTable) {
      out_ << sentence << "\n";
    } else {
      out_ << Render(format_, empty_, {});
    }
    return status;
  }

  SeptaClient& client_;
  OutputFormat format_;
  const Clock& clock_;
  std::ostream& out_;
  std::ostream& err_;
  v1::Tenant tenant_;
  v1::TenantMember member_;
  v1::VirtualCluster vcluster_;
  std::optional<Status> gave_up_;
  google::protobuf::Empty empty_;
};

Status NoToken() {
  return Unauthenticated(
      "no token: run septactl login, pass --token or --oidc-token-env, set SEPTA_TOKEN, or put token: in the config "
      "file");
}

// Without any other credential, the ID token of the config file's login
// (septactl login), refreshed first when due.
Status UseLogin(const GlobalOptions& options, const Environment& env, Connection& connection) {
  if (!connection.token.empty() || options.oidc_token_env || !connection.login) return Status::Ok();
  std::unique_ptr<oidc::ProviderHttp> own;
  oidc::ProviderHttp* http = env.provider_http;
  if (http == nullptr) http = (own = oidc::NewProviderHttp(options.timeout)).get();
  SystemClock system_clock;
  auto bearer = LoginBearer(connection.config_path, *connection.login, *http, env.clock ? *env.clock : system_clock);
  SEPTA_RETURN_IF_ERROR(bearer);
  connection.token = *std::move(bearer);
  return Status::Ok();
}

// With --oidc-token-env: the identity provider's token in that variable
// exchanged (ExchangeToken, RFC 8693) for a short-lived Septa token, which
// the command then uses instead of any other.
grpc::Status ExchangeOidcToken(const GlobalOptions& options, const Environment& env, Connection& connection) {
  if (!options.oidc_token_env) return grpc::Status::OK;
  const std::string& name = *options.oidc_token_env;
  const std::optional<std::string> subject = env.variable ? env.variable(name) : std::nullopt;
  if (!subject || subject->empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "--oidc-token-env: $" + name + " is not set or empty");
  }
  SeptaClient anonymous(connection.server, "", options.timeout, connection.security);
  v1::ExchangeTokenRequest request;
  request.set_grant_type("urn:ietf:params:oauth:grant-type:token-exchange");
  request.set_subject_token(*subject);
  request.set_subject_token_type("urn:ietf:params:oauth:token-type:id_token");
  v1::ExchangeTokenResponse response;
  grpc::Status status = anonymous.Call(anonymous.tokens(), &v1::TokenService::Stub::ExchangeToken, request, &response);
  if (status.ok()) connection.token = response.access_token();
  return status;
}

// The GitOps commands (diff, apply, applyset): every failure is kExitError,
// since 1 means "differences" (diff), "changes applied" (apply
// --detailed-exitcode) or "out of sync" (applyset get --exit-code).
// `send` makes the call: (client, server) -> exit code.
template <typename Send>
int RunGitOps(const GlobalOptions& options, const Environment& env, std::ostream& err, const Send& send) {
  auto connection = ResolveConnection(options, env);
  if (connection.ok()) {
    if (grpc::Status exchanged = ExchangeOidcToken(options, env, *connection); !exchanged.ok()) {
      err << ErrorLine(exchanged, connection->server) << "\n";
      return kExitError;
    }
    if (Status login = UseLogin(options, env, *connection); !login.ok()) {
      err << ErrorLine(login) << "\n";
      return kExitError;
    }
  }
  if (!connection.ok() || connection->token.empty()) {
    err << ErrorLine(connection.ok() ? NoToken() : connection.status()) << "\n";
    return kExitError;
  }
  SeptaClient client(connection->server, connection->token, options.timeout, connection->security);
  client.SetBreakGlass(options.break_glass);
  client.SetTenant(connection->tenant);
  return send(client, std::string_view(connection->server));
}

// The documents are read before anything else: a bad one needs no server.
bool ReportDocumentErrors(const PreparedApply& prepared, std::ostream& err) {
  for (const auto& error : prepared.errors) err << ErrorLine(InvalidArgument(error)) << "\n";
  return !prepared.errors.empty();
}

// One command of an invocation: each GitOps command by its own overload,
// every other through the CommandRunner.
class Dispatch {
 public:
  Dispatch(const GlobalOptions& options, const Environment& env, std::ostream& out, std::ostream& err)
      : options_(options), env_(env), out_(out), err_(err) {}

  int operator()(const DiffCommand& diff) const {
    const PreparedApply prepared = PrepareDiff(diff, env_.in);
    if (ReportDocumentErrors(prepared, err_)) return kExitError;
    return RunGitOps(options_, env_, err_, [&](SeptaClient& client, std::string_view server) {
      return SendDiff(client, diff, prepared, options_.output, server, out_, err_);
    });
  }

  int operator()(const ApplyCommand& apply) const {
    const PreparedApply prepared = PrepareApply(apply, env_.in);
    if (ReportDocumentErrors(prepared, err_)) return kExitError;
    return RunGitOps(options_, env_, err_, [&](SeptaClient& client, std::string_view server) {
      return SendApply(client, apply, prepared, options_.output, server, WaitClock(), out_, err_);
    });
  }

  int operator()(const ApplySetList&) const {
    return RunGitOps(options_, env_, err_, [&](SeptaClient& client, std::string_view server) {
      return SendApplySetList(client, options_.output, server, out_, err_);
    });
  }

  int operator()(const ApplySetGet& get) const {
    return RunGitOps(options_, env_, err_, [&](SeptaClient& client, std::string_view server) {
      return SendApplySetGet(client, get, options_.output, server, out_, err_);
    });
  }

  // kubeconfig --exec and the exec plugin (services/cli/exec_credential.h):
  // septad is called only when a certificate is to be issued.
  int operator()(const VclusterExecKubeconfig& c) const {
    return WithIssuer([&](const ExecContext& context) { return RunExecKubeconfig(c, context, out_, err_); });
  }
  int operator()(const VclusterExecCredential& c) const {
    return WithIssuer([&](const ExecContext& context) { return RunExecCredential(c, context, out_, err_); });
  }

  int operator()(const LoginCommand& login) const {
    return WithLogin([&](const LoginEnvironment& env) { return RunLogin(login, env, out_, err_); });
  }
  int operator()(const LogoutCommand&) const {
    return WithLogin([&](const LoginEnvironment& env) { return RunLogout(env, out_, err_); });
  }
  int operator()(const AuthTokenCommand&) const {
    return WithLogin([&](const LoginEnvironment& env) { return RunAuthToken(env, out_, err_); });
  }

  template <typename Imperative>
  int operator()(const Imperative& command) const {
    auto connection = ResolveConnection(options_, env_);
    if (!connection.ok()) {
      err_ << ErrorLine(connection.status()) << "\n";
      return kExitUsage;
    }
    if (grpc::Status exchanged = ExchangeOidcToken(options_, env_, *connection); !exchanged.ok()) {
      err_ << ErrorLine(exchanged, connection->server) << "\n";
      return kExitFailure;
    }
    if (Status login = UseLogin(options_, env_, *connection); !login.ok()) {
      err_ << ErrorLine(login) << "\n";
      return kExitFailure;
    }
    if (connection->token.empty()) {
      err_ << ErrorLine(NoToken()) << "\n";
      return kExitFailure;
    }
    SeptaClient client(connection->server, connection->token, options_.timeout, connection->security);
    client.SetBreakGlass(options_.break_glass);
    client.SetTenant(connection->tenant);
    CommandRunner runner(client, options_.output, WaitClock(), out_, err_);
    const grpc::Status status = runner(command);
    if (!status.ok()) {
      err_ << ErrorLine(status, connection->server) << "\n";
      return kExitFailure;
    }
    if (runner.gave_up()) {
      err_ << ErrorLine(*runner.gave_up()) << "\n";
      return kExitWaitTimeout;
    }
    return kExitOk;
  }

 private:
  template <typename Run>
  int WithIssuer(const Run& run) const {
    auto connection = ResolveConnection(options_, env_);
    if (!connection.ok()) {
      err_ << ErrorLine(connection.status()) << "\n";
      return kExitUsage;
    }
    Connection& resolved = *connection;
    const auto issue = [&](const v1::IssueKubeconfigRequest& request, v1::IssueKubeconfigResponse& issued) {
      if (grpc::Status exchanged = ExchangeOidcToken(options_, env_, resolved); !exchanged.ok()) return exchanged;
      if (Status login = UseLogin(options_, env_, resolved); !login.ok()) {
        return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, login.message());
      }
      if (resolved.token.empty()) return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, NoToken().message());
      SeptaClient client(resolved.server, resolved.token, options_.timeout, resolved.security);
      return client.Call(client.vclusters(), &v1::VirtualClusterService::Stub::IssueKubeconfig, request, &issued);
    };
    return run(ExecContext{options_, env_, WaitClock(), resolved.server, resolved.security.tls, issue});
  }

  // Runs a login command with the config file, the provider's HTTP and the clock.
  template <typename Run>
  int WithLogin(const Run& run) const {
    if (!options_.config_path && env_.home.empty()) {
      err_ << ErrorLine(InvalidArgument("no home directory for the config file: pass --config")) << "\n";
      return kExitUsage;
    }
    std::unique_ptr<oidc::ProviderHttp> own;
    oidc::ProviderHttp* http = env_.provider_http;
    if (http == nullptr) http = (own = oidc::NewProviderHttp(options_.timeout)).get();
    LoginEnvironment login{.config_path = ConfigPath(options_, env_),
                           .config_named = options_.config_path.has_value(),
                           .http = http,
                           .clock = &WaitClock(),
                           .catch_interrupt = env_.catch_interrupt,
                           .other_credential = options_.token.has_value() || env_.septa_token.has_value()};
    return run(login);
  }

  // --wait's clock: the environment's, else the system's.
  const Clock& WaitClock() const { return env_.clock ? *env_.clock : system_clock_; }

  const GlobalOptions& options_;
  const Environment& env_;
  std::ostream& out_;
  std::ostream& err_;
  SystemClock system_clock_;
};

}  // namespace

int RunSeptactl(const std::vector<std::string>& args, const Environment& env, std::ostream& out, std::ostream& err) {
  auto parsed = ParseCommandLine(args);
  if (!parsed.ok()) {
    err << ErrorLine(parsed.status()) << "\n";
    return kExitUsage;
  }
  if (const auto* help = std::get_if<std::string>(&*parsed)) {
    out << *help;
    return kExitOk;
  }
  const auto& invocation = std::get<Invocation>(*parsed);
  return std::visit(Dispatch(invocation.options, env, out, err), invocation.command);
}

}  // namespace septa::cli
