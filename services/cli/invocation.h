// What a septactl command line asks for, parsed by CLI11 but free of it:
// global connection options and one command with its arguments.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/status.h"
#include "septa/v1/vcluster.pb.h"
#include "services/cli/output.h"

namespace septa::cli {

struct GlobalOptions {
  // Unset: from the config file, then the built-in default / $SEPTA_TOKEN.
  std::optional<std::string> server;
  std::optional<std::string> token;
  std::optional<std::string> config_path;
  std::optional<std::string> ca_file;  // TLS, septad checked against this CA
  bool tls = false;                    // TLS with the system's CAs
  OutputFormat output = OutputFormat::kTable;
  std::chrono::milliseconds timeout{10'000};
  // An admin's reason to write fields a locked apply set owns, sent with
  // every call (docs/gitops.md, "Policies"); empty: none.
  std::string break_glass{};
  // The environment variable holding an identity provider's token (a CI
  // job's OIDC ID token) to exchange for a short-lived Septa token before
  // the command; unset: the token as usual.
  std::optional<std::string> oidc_token_env{};
  // --in-tenant, else $SEPTA_TENANT (run.cc): the tenant a call that names
  // none acts in, sent as metadata septa-tenant (a person who is a member
  // of several tenants); unset: none is sent.
  std::optional<std::string> in_tenant{};
};

// Tenant quota limits by TenantQuota field ("gpu_milli", "vclusters"); a
// field without a value is unlimited.
using QuotaLimits = std::map<std::string, std::optional<std::int64_t>>;

struct TenantCreate {
  std::string name;
  std::string tier;
  std::string display_name;
  std::map<std::string, std::string> labels;
  QuotaLimits quota;
  std::string idempotency_key;
};
struct TenantGet {
  std::string name;
};
struct TenantList {
  std::string filter;
  int page_size = 0;  // 0: the server's default
  std::string page_token;
  bool all_pages = false;
};
// Only the fields given on the command line are changed (the update mask).
struct TenantUpdate {
  std::string name;
  std::optional<std::string> display_name;
  std::optional<std::map<std::string, std::string>> labels;
  std::optional<std::string> tier;
  std::optional<std::string> state;  // "ACTIVE" or "SUSPENDED"
  QuotaLimits quota;                 // only these members change
  std::string etag;
};
struct TenantDelete {
  std::string name;
  std::string etag;
};
// tenant member: a tenant's members, users and groups of the identity
// providers septad trusts (docs/identity.md "Members"). MEMBER is
// "user:<name>" or "group:<name>"; ROLE owner, editor or viewer.
struct MemberList {
  std::string tenant{};
};
struct MemberAdd {
  std::string tenant{}, member{}, role{};
};
struct MemberSetRole {
  std::string tenant{}, member{}, role{};
  std::string etag{};
};
struct MemberRemove {
  std::string tenant{}, member{};
  std::string etag{};
};
struct TierList {};
struct TierGet {
  std::string name;
};
struct TokenCreate {
  std::string principal;
  std::string role;
  std::string ttl;
  std::string description;
  std::vector<std::string> apply_sets{};  // --apply-set, repeated: the token's scope
};
struct TokenList {};
struct TokenRevoke {
  std::string id;
};
struct InventoryList {};  // every page

// What create and update set on a virtual cluster; unset: not given (create:
// the server's default, update: unchanged).
struct VclusterSpec {
  std::optional<std::string> display_name;
  std::optional<v1::Capacity> capacity;  // exactly one kind set
  std::optional<int> cpu_milli, memory_mib, pods;
  std::optional<int> priority, over_quota_weight;
};
// --wait: poll until the state settles, for at most `timeout` (the
// --timeout after the command; the one before it is each call's deadline).
struct WaitOptions {
  bool wait = false;
  std::chrono::milliseconds timeout{60'000};
};
struct VclusterCreate {
  std::string tenant, name;
  VclusterSpec spec;
  std::string idempotency_key;
  WaitOptions wait;
};
struct VclusterGet {
  std::string tenant, name;
};
struct VclusterList {  // every page
  std::string tenant;
  std::string state;  // empty: any
  int page_size = 0;  // 0: the server's default
};
struct VclusterUpdate {
  std::string tenant, name;
  VclusterSpec spec;
  std::string etag;
  WaitOptions wait;
};
struct VclusterDelete {
  std::string tenant, name;
  std::string etag;
  WaitOptions wait;
};

// vcluster sleep / wake: --wait polls until it is asleep (condition
// Sleeping True), or awake (no longer PROVISIONING).
struct VclusterSleep {
  std::string tenant, name;
  std::string etag;
  WaitOptions wait;
};
struct VclusterWake {
  std::string tenant, name;
  std::string etag;
  WaitOptions wait;
};

// vcluster kubeconfig: prints a kubeconfig (YAML) with a new client
// certificate; credentials lists them; revoke-credential revokes one.
struct VclusterKubeconfig {
  std::string tenant, name;
  std::string ttl;  // empty: the tier's cap
  std::string role;
};
struct VclusterCredentials {
  std::string tenant, name;
};
struct VclusterRevokeCredential {
  std::string tenant, name, serial;
};
// vcluster kubeconfig --exec: a kubeconfig whose user runs septactl as
// kubectl's exec credential plugin; vcluster credential is that plugin,
// printing an ExecCredential (services/cli/exec_credential.h).
struct VclusterExecKubeconfig {
  VclusterKubeconfig kubeconfig{};
  std::string exec_command{};  // --exec-command; empty: this septactl's own path
};
struct VclusterExecCredential {
  std::string tenant{}, name{}, role{}, ttl{};
};

// diff and apply: the documents of an apply set and how to apply them
// (docs/gitops.md).
struct ApplySetOptions {
  std::vector<std::string> files;  // -f: files, directories, "-" for stdin
  std::string apply_set;           // --set; empty: the ApplySet document's name
  bool prune = false;              // or the ApplySet document's spec.prune
  bool allow_empty = false;
  bool force_conflicts = false;
  bool adopt = false;                          // on every object
  std::vector<std::string> confirm_deletions;  // as the API names them: "tenants/globex", "trust-tiers/gold"
  std::string source;                          // empty: the -f paths
  bool show_unchanged = false;                 // the table lists unchanged objects too
};
struct DiffCommand {
  ApplySetOptions options;
};
struct ApplyCommand {
  ApplySetOptions options;
  std::string plan_file;           // --plan: apply exactly the plan `septactl diff -o json` wrote
  bool detailed_exitcode = false;  // exit 1 when changes were applied
  // --wait: after the apply, until every virtual cluster of the plan is
  // READY (deleted ones: gone), for at most `timeout`.
  WaitOptions wait;
};

// applyset list / get: the caller's apply sets, as their last apply left
// them; get also says whether they are still so (docs/gitops.md, "Drift").
struct ApplySetList {};
struct ApplySetGet {
  std::string name;        // the set's own name, as --set gives it ("prod")
  bool exit_code = false;  // --exit-code: exit 1 when OUT_OF_SYNC
};

// usage: GPU usage over a window (docs/usage.md): a tenant's with
// --tenant, otherwise the platform's (admins). An empty window is this
// calendar month (UTC), filled in when the command runs.
struct UsageShow {
  std::string tenant{};
  std::string start{}, end{};  // RFC 3339, from --window START/END
  std::string step{};
  std::vector<std::string> group_by{};  // --by
};
// usage hoarders: the virtual clusters idle past their tier's threshold now.
struct UsageHoarders {
  std::string tenant{};  // empty: every tenant's (admins)
};

// login / logout / auth token: a person's session at an OpenID provider
// (services/cli/login.h).
struct LoginCommand {
  std::string issuer{}, client_id{};
  std::string scope{};
  std::chrono::seconds max_wait{900};  // --max-wait; the code's own expiry may end it sooner
};
struct LogoutCommand {};
struct AuthTokenCommand {};

using Command =
    std::variant<TenantCreate, TenantGet, TenantList, TenantUpdate, TenantDelete, MemberList, MemberAdd, MemberSetRole,
                 MemberRemove, TierList, TierGet, TokenCreate, TokenList, TokenRevoke, InventoryList, VclusterCreate,
                 VclusterGet, VclusterList, VclusterUpdate, VclusterDelete, VclusterSleep, VclusterWake,
                 VclusterKubeconfig, VclusterCredentials, VclusterRevokeCredential, DiffCommand, ApplyCommand,
                 ApplySetList, ApplySetGet, UsageShow, UsageHoarders, VclusterExecKubeconfig, VclusterExecCredential,
                 LoginCommand, LogoutCommand, AuthTokenCommand>;

struct Invocation {
  GlobalOptions options;
  Command command;
};

// Either the invocation, or the help text the user asked for (--help).
using ParsedCommandLine = std::variant<Invocation, std::string>;

// `args` without the program name. A usage error is INVALID_ARGUMENT with a
// one-line message.
Result<ParsedCommandLine> ParseCommandLine(const std::vector<std::string>& args);

}  // namespace septa::cli
