#include "services/cli/invocation.h"

#include "services/cli/login_invocation.h"
#include "services/cli/member_invocation.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <sstream>

namespace septa::cli {

namespace {

// --etag "" would reach the API as no precondition at all (an empty etag
// field is an unset one), turning a script's lost etag into an
// unconditional write: refused, as REST refuses `If-Match: ""`.
const CLI::Validator kEtag(
    [](std::string& etag) {
      return etag.empty() ? std::string("names no etag: give the etag read, or leave --etag out") : std::string();
    },
    "ETAG");

// --label k=v, repeated, into a map; a later value for the same key wins.
Result<std::map<std::string, std::string>> ParseLabels(const std::vector<std::string>& items) {
  std::map<std::string, std::string> labels;
  for (const auto& item : items) {
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgument("--label must be key=value, not \"" + item + "\"");
    }
    labels[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return labels;
}

// A positive count, all of `text`.
std::optional<int> ParseCount(std::string_view text) {
  int count = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
  if (error != std::errc() || end != text.data() + text.size() || count <= 0) return std::nullopt;
  return count;
}

// --gpus / --nodes MODEL=COUNT (MODEL may be empty: any model).
template <typename Kind>
Result<Kind> ParseModelCount(const std::string& flag, const std::string& item) {
  const std::size_t eq = item.rfind('=');
  const auto count = eq == std::string::npos ? std::nullopt : ParseCount(std::string_view(item).substr(eq + 1));
  if (!count) return InvalidArgument(flag + " must be MODEL=COUNT with a positive COUNT, not \"" + item + "\"");
  Kind kind;
  kind.set_model(item.substr(0, eq));
  kind.set_count(*count);
  return kind;
}

// --mig PROFILE=COUNT[@MODEL].
Result<v1::Capacity::Mig> ParseMig(const std::string& item) {
  const std::size_t eq = item.find('=');
  const std::size_t at = item.find('@', eq == std::string::npos ? 0 : eq);
  const auto count =
      eq == std::string::npos || eq == 0
          ? std::nullopt
          : ParseCount(std::string_view(item).substr(eq + 1, at == std::string::npos ? at : at - eq - 1));
  if (!count || at + 1 == item.size()) {
    return InvalidArgument("--mig must be PROFILE=COUNT[@MODEL] with a positive COUNT, not \"" + item + "\"");
  }
  v1::Capacity::Mig mig;
  mig.set_profile(item.substr(0, eq));
  mig.set_count(*count);
  if (at != std::string::npos) mig.set_model(item.substr(at + 1));
  return mig;
}

// What the API's int32 quota fields carry; the server names the real bounds.
constexpr std::int64_t kMaxQuotaLimit = 2'147'483'647;

// "4", "2.5" (at most three decimals) as thousandths when `milli`, a whole
// number otherwise; "unlimited" as no value.
Result<std::optional<std::int64_t>> ParseQuotaLimit(const std::string& flag, const std::string& text, bool milli) {
  if (text == "unlimited") return std::optional<std::int64_t>();
  const std::size_t dot = milli ? text.find('.') : std::string::npos;
  const std::string whole = text.substr(0, dot);
  std::string fraction = dot == std::string::npos ? "" : text.substr(dot + 1);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(whole.data(), whole.data() + whole.size(), value);
  const bool digits = std::all_of(fraction.begin(), fraction.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (whole.empty() || error != std::errc() || end != whole.data() + whole.size() || value < 0 || !digits ||
      fraction.size() > 3 || (dot != std::string::npos && fraction.empty()) || value > kMaxQuotaLimit) {
    return InvalidArgument(flag + " must be " + (milli ? "a number with at most three decimals" : "a whole number") +
                           " or \"unlimited\", not \"" + text + "\"");
  }
  if (!milli) return std::optional<std::int64_t>(value);
  fraction.append(3 - fraction.size(), '0');
  const std::int64_t thousandths = value * 1000 + std::stoi(fraction);
  if (thousandths > kMaxQuotaLimit) return InvalidArgument(flag + " is too large: \"" + text + "\"");
  return std::optional<std::int64_t>(thousandths);
}

// --quota-* flags of tenant create and update: flag, TenantQuota field, counted in thousandths.
struct QuotaFlag {
  const char* flag;
  const char* field;
  bool milli;
  const char* help;
};
constexpr QuotaFlag kQuotaFlags[] = {
    {"--quota-gpus", "gpu_milli", true, "GPU-equivalents over all virtual clusters, e.g. 4 or 2.5 (unlimited: none)"},
    {"--quota-cpus", "cpu_milli", true, "CPUs over all virtual clusters' workload limits (unlimited: none)"},
    {"--quota-memory-mib", "memory_mib", false, "MiB over all virtual clusters' workload limits (unlimited: none)"},
    {"--quota-pods", "pods", false, "pods over all virtual clusters' workload limits (unlimited: none)"},
    {"--quota-vclusters", "vclusters", false, "number of virtual clusters (unlimited: none)"},
};

void AddQuotaFlags(CLI::App* command, std::map<std::string, std::string>& values) {
  for (const QuotaFlag& q : kQuotaFlags) command->add_option(q.flag, values[q.flag], q.help);
}

Result<QuotaLimits> QuotaFrom(CLI::App* command, const std::map<std::string, std::string>& values) {
  QuotaLimits quota;
  for (const QuotaFlag& q : kQuotaFlags) {
    if (command->get_option(q.flag)->count() == 0) continue;
    auto limit = ParseQuotaLimit(q.flag, values.at(q.flag), q.milli);
    SEPTA_RETURN_IF_ERROR(limit);
    quota[q.field] = *limit;
  }
  return quota;
}

// The flags of a virtual cluster's settings (create and update).
struct SpecFlags {
  std::string display_name, gpus, nodes;
  std::vector<std::string> mig;
  int shared_milli = 0, shared_memory_mib = 0, cpu_milli = 0, memory_mib = 0, pods = 0, priority = 0, weight = 0;
  CLI::App* command = nullptr;
};

void AddSpecFlags(CLI::App* command, SpecFlags& f) {
  f.command = command;
  command->add_option("--display-name", f.display_name, "human-readable name");
  command->add_option("--mig", f.mig, "tier isolated: PROFILE=COUNT[@MODEL] MIG instances (repeatable)");
  command->add_option("--gpus", f.gpus, "tier dedicated: MODEL=COUNT whole GPUs (empty MODEL: any)");
  command->add_option("--nodes", f.nodes, "tier exclusive: MODEL=COUNT whole nodes (empty MODEL: any)");
  command->add_option("--shared-milli", f.shared_milli, "tier shared: milli-GPUs of time-sliced GPUs");
  command->add_option("--shared-memory-mib", f.shared_memory_mib, "tier shared: GPU memory (with --shared-milli)");
  command->add_option("--cpu-milli", f.cpu_milli, "workload CPU limit (0: none)");
  command->add_option("--memory-mib", f.memory_mib, "workload memory limit (0: none)");
  command->add_option("--pods", f.pods, "workload pod limit (0: none)");
  command->add_option("--priority", f.priority, "queue priority (default 100)");
  command->add_option("--over-quota-weight", f.weight, "queue over-quota weight (default 1)");
}

bool Given(const SpecFlags& f, const std::string& flag) { return f.command->get_option(flag)->count() > 0; }

// At most one capacity kind; none: nullopt.
Result<std::optional<v1::Capacity>> CapacityFrom(const SpecFlags& f) {
  const int kinds = static_cast<int>(!f.mig.empty()) + static_cast<int>(Given(f, "--gpus")) +
                    static_cast<int>(Given(f, "--nodes")) + static_cast<int>(Given(f, "--shared-milli"));
  if (kinds > 1) return InvalidArgument("give only one of --mig, --gpus, --nodes or --shared-milli");
  if (Given(f, "--shared-memory-mib") && !Given(f, "--shared-milli")) {
    return InvalidArgument("--shared-memory-mib needs --shared-milli");
  }
  if (kinds == 0) return std::optional<v1::Capacity>();
  v1::Capacity capacity;
  for (const auto& item : f.mig) {
    auto mig = ParseMig(item);
    SEPTA_RETURN_IF_ERROR(mig);
    *capacity.add_mig() = *std::move(mig);
  }
  if (Given(f, "--gpus")) {
    auto gpus = ParseModelCount<v1::Capacity::Gpus>("--gpus", f.gpus);
    SEPTA_RETURN_IF_ERROR(gpus);
    *capacity.mutable_gpus() = *std::move(gpus);
  }
  if (Given(f, "--nodes")) {
    auto nodes = ParseModelCount<v1::Capacity::Nodes>("--nodes", f.nodes);
    SEPTA_RETURN_IF_ERROR(nodes);
    *capacity.mutable_nodes() = *std::move(nodes);
  }
  if (Given(f, "--shared-milli")) {
    if (f.shared_milli <= 0) return InvalidArgument("--shared-milli must be positive");
    capacity.mutable_shared()->set_milli_gpu(f.shared_milli);
    capacity.mutable_shared()->set_gpu_memory_mib(f.shared_memory_mib);
  }
  return std::optional<v1::Capacity>(std::move(capacity));
}

Result<VclusterSpec> SpecFrom(const SpecFlags& f) {
  VclusterSpec spec;
  auto capacity = CapacityFrom(f);
  SEPTA_RETURN_IF_ERROR(capacity);
  spec.capacity = *std::move(capacity);
  auto set = [&](const std::string& flag, int value, std::optional<int>& field) -> Status {
    if (!Given(f, flag)) return Status::Ok();
    if (value < 0) return InvalidArgument(flag + " must not be negative");
    field = value;
    return Status::Ok();
  };
  if (Given(f, "--display-name")) spec.display_name = f.display_name;
  SEPTA_RETURN_IF_ERROR(set("--cpu-milli", f.cpu_milli, spec.cpu_milli));
  SEPTA_RETURN_IF_ERROR(set("--memory-mib", f.memory_mib, spec.memory_mib));
  SEPTA_RETURN_IF_ERROR(set("--pods", f.pods, spec.pods));
  SEPTA_RETURN_IF_ERROR(set("--priority", f.priority, spec.priority));
  SEPTA_RETURN_IF_ERROR(set("--over-quota-weight", f.weight, spec.over_quota_weight));
  return spec;
}

// --wait [--timeout D]; this --timeout, after the command, bounds the wait.
struct WaitFlags {
  bool wait = false;
  double timeout_ms = 60'000;
  CLI::App* command = nullptr;
  std::string example;  // the command, for the message of a --timeout without --wait: "vcluster ..."
};

// A vcluster command's words: the owning tenant first, or as --tenant
// (septactl vcluster kubeconfig train --tenant acme), then `after` (NAME,
// NAME SERIAL, or nothing for list).
struct VclusterWords {
  CLI::App* command = nullptr;
  std::vector<std::string> words;
  std::string tenant;  // --tenant
  // Where the tenant and each word after it go, and the words' names.
  std::string* tenant_out = nullptr;
  std::vector<std::pair<std::string, std::string*>> after;
};

// --confirm-delete KIND/NAME as the API names it: "Tenant/globex",
// "tenant/globex" and "tenants/globex" are "tenants/globex"; "TrustTier/gold"
// and "trust-tiers/gold" are "trust-tiers/gold". Only tiers and tenants
// wait for a confirmation before they are pruned.
Result<std::string> ConfirmedDeletion(const std::string& given) {
  const std::size_t slash = given.find('/');
  std::string kind;
  for (const char c : given.substr(0, slash)) {
    if (c != '-') kind += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  const std::string name = slash == std::string::npos ? "" : given.substr(slash + 1);
  const char* collection = kind == "tenant" || kind == "tenants"         ? "tenants/"
                           : kind == "trusttier" || kind == "trusttiers" ? "trust-tiers/"
                                                                         : nullptr;
  if (collection == nullptr || name.empty() || name.find('/') != std::string::npos) {
    return InvalidArgument(
        "--confirm-delete must be Tenant/NAME or TrustTier/NAME (or tenants/NAME, trust-tiers/NAME), not \"" + given +
        "\"");
  }
  return collection + name;
}

void AddApplySetFlags(CLI::App* command, ApplySetOptions& o) {
  command
      ->add_option("-f,--filename", o.files,
                   "documents: a file, a directory (its *.yaml, *.yml and *.json files) or - for stdin (repeatable)")
      ->required();
  command->add_option("--set", o.apply_set, "the apply set (a DNS label); default: the ApplySet document's name");
  command->add_flag("--prune", o.prune, "delete the set's members the documents no longer declare");
  command->add_flag("--allow-empty", o.allow_empty, "with --prune: allow no object at all (prunes every member)");
  command->add_flag("--force-conflicts", o.force_conflicts, "take objects another apply set owns (audited)");
  command->add_flag("--adopt", o.adopt, "take into the set existing objects that no apply set owns");
  command->add_option("--confirm-delete", o.confirm_deletions,
                      "a trust tier or tenant the prune may delete: Tenant/NAME or TrustTier/NAME (repeatable)");
  command->add_option("--source", o.source,
                      "where the documents come from (repository, commit, pipeline run); default: the -f paths");
  command->add_flag("-v,--show-unchanged", o.show_unchanged, "list the unchanged objects too");
}

constexpr char kDiffExitCodes[] =
    "Exit codes: 0 in sync; 1 differences, all applicable; 2 error (documents, flags, auth, transport, server); "
    "3 not applicable (a conflict, an unconfirmed deletion, a capacity, quota or tier refusal).";
constexpr char kApplyExitCodes[] =
    "Exit codes: 0 applied, or nothing to do; 1 with --detailed-exitcode: changes applied; 2 error (documents, "
    "flags, auth, transport, server), nothing applied; 3 refused (a conflict, an unconfirmed deletion, a capacity, "
    "quota or tier refusal, a stale --plan), nothing applied; 4 with --wait: applied, but a virtual cluster was "
    "not READY (or not gone) before --timeout, or became FAILED.";
constexpr char kApplySetGetExitCodes[] =
    "Exit codes: 0 the set was read (SYNCED, or OUT_OF_SYNC without --exit-code); 1 with --exit-code: OUT_OF_SYNC; "
    "2 error (flags, auth, transport, server; NOT_FOUND: no such set).";

// The flags' storage while CLI11 parses; turned into an Invocation after.
struct Flags {
  std::string server, token, config_path, ca_file, oidc_token_env, in_tenant, output = "table";
  bool tls = false;
  double timeout_ms = 10'000;
  std::string break_glass;
  TenantCreate tenant_create;
  std::vector<std::string> create_labels;
  TenantGet tenant_get;
  TenantList tenant_list;
  TenantUpdate tenant_update;
  std::string update_display_name, update_tier, update_state;
  std::map<std::string, std::string> create_quota, update_quota;  // --quota-* flag -> its text
  std::vector<std::string> update_labels;
  TenantDelete tenant_delete;
  MemberCommands members;
  LoginCommands logins;
  TierGet tier_get;
  TokenCreate token_create;
  TokenRevoke token_revoke;
  VclusterCreate vcluster_create;
  SpecFlags create_spec, update_spec;
  VclusterGet vcluster_get;
  VclusterList vcluster_list;
  VclusterUpdate vcluster_update;
  VclusterDelete vcluster_delete;
  VclusterSleep vcluster_sleep;
  VclusterWake vcluster_wake;
  VclusterKubeconfig vcluster_kubeconfig;
  VclusterCredentials vcluster_credentials;
  VclusterRevokeCredential vcluster_revoke_credential;
  bool kubeconfig_exec = false;
  std::string kubeconfig_exec_command;
  VclusterExecCredential vcluster_credential;
  WaitFlags create_wait, update_wait, delete_wait, sleep_wait, wake_wait;
  VclusterWords create_words, get_words, list_words, update_words, delete_words, sleep_words, wake_words,
      kubeconfig_words, credentials_words, revoke_words, credential_words;
  DiffCommand diff;
  ApplyCommand apply;
  WaitFlags apply_wait;
  ApplySetGet applyset_get;
  UsageShow usage;
  std::string usage_window;
  std::vector<std::string> usage_by;
  UsageHoarders usage_hoarders;
};

// Sub-commands of one CLI11 parse, kept to find out which one ran.
struct Commands {
  CLI::App* tenant_create;
  CLI::App* tenant_get;
  CLI::App* tenant_list;
  CLI::App* tenant_update;
  CLI::Option* update_display_name;
  CLI::Option* update_labels;
  CLI::Option* update_tier;
  CLI::Option* update_state;
  CLI::App* tenant_delete;
  CLI::App* tier_list;
  CLI::App* tier_get;
  CLI::App* token_create;
  CLI::App* token_list;
  CLI::App* token_revoke;
  CLI::App* inventory;
  CLI::App* vcluster_create;
  CLI::App* vcluster_get;
  CLI::App* vcluster_list;
  CLI::App* vcluster_update;
  CLI::App* vcluster_delete;
  CLI::App* vcluster_sleep;
  CLI::App* vcluster_wake;
  CLI::App* vcluster_kubeconfig;
  CLI::App* vcluster_credentials;
  CLI::App* vcluster_revoke_credential;
  CLI::App* vcluster_credential;
  CLI::App* diff;
  CLI::App* apply;
  CLI::App* applyset_list;
  CLI::App* applyset_get;
  CLI::App* usage;
  CLI::App* usage_hoarders;
};

const std::map<std::string, double> kMillisecondsPerUnit{{"ms", 1}, {"s", 1000}, {"m", 60'000}, {"h", 3'600'000}};
constexpr auto kUnitRequired = static_cast<CLI::AsNumberWithUnit::Options>(CLI::AsNumberWithUnit::CASE_SENSITIVE |
                                                                           CLI::AsNumberWithUnit::UNIT_REQUIRED);

void AddVclusterWords(CLI::App* command, VclusterWords& w, std::string& tenant,
                      std::vector<std::pair<std::string, std::string*>> after, const std::string& help) {
  std::string name = "[TENANT]";
  for (const auto& word : after) name += " " + word.first;
  const int n = static_cast<int>(after.size());
  CLI::Option* words = command->add_option(name, w.words, "owning tenant (or --tenant)" + help)->expected(n, n + 1);
  if (n > 0) words->required();
  command->add_option("--tenant", w.tenant, "owning tenant, instead of the first word");
  w.command = command;
  w.tenant_out = &tenant;
  w.after = std::move(after);
}

// Fills the command's tenant and names, or names the two forms it takes.
Status ResolveVclusterWords(const VclusterWords& w) {
  std::string after;
  for (const auto& word : w.after) after += (after.empty() ? "" : " ") + word.first;
  const std::size_t n = w.after.size();
  const std::size_t given = w.words.size();
  if (!w.tenant.empty() ? given != n : given != n + 1) {
    return InvalidArgument("give TENANT" + (after.empty() ? "" : " " + after) + ", or " +
                           (after.empty() ? "--tenant" : after + " with --tenant") +
                           (!w.tenant.empty() && given == n + 1 ? ", not both" : ""));
  }
  *w.tenant_out = w.tenant.empty() ? w.words.front() : w.tenant;
  for (std::size_t i = 0; i < n; ++i) *w.after[i].second = w.words[given - n + i];
  return Status::Ok();
}

void AddWaitFlags(CLI::App* command, WaitFlags& f, const std::string& example, const std::string& help) {
  f.command = command;
  f.example = example;
  command->add_flag("--wait", f.wait, help);
  command->add_option("--timeout", f.timeout_ms, "with --wait: how long to wait, e.g. 30s, 5m (default 60s)")
      ->transform(CLI::AsNumberWithUnit(kMillisecondsPerUnit, kUnitRequired))
      ->check(CLI::PositiveNumber);
}

constexpr char kVclusterWait[] = "poll until the virtual cluster's state settles";

Result<WaitOptions> WaitFrom(const WaitFlags& f) {
  if (f.command->get_option("--timeout")->count() > 0 && !f.wait) {
    return InvalidArgument(
        "--timeout after this command is the --wait deadline: add --wait, or give the call "
        "deadline before the command (septactl --timeout 5s " +
        f.example + ")");
  }
  return WaitOptions{f.wait, std::chrono::milliseconds(static_cast<std::int64_t>(f.timeout_ms))};
}

void DefineVcluster(CLI::App& app, Flags& f, Commands& c) {
  auto* vcluster = app.add_subcommand("vcluster", "manage a tenant's virtual clusters")->require_subcommand(1);
  c.vcluster_create = vcluster->add_subcommand("create", "create a virtual cluster and reserve its GPU capacity");
  AddVclusterWords(c.vcluster_create, f.create_words, f.vcluster_create.tenant, {{"NAME", &f.vcluster_create.name}},
                   ", then the virtual cluster's name (DNS label)");
  AddSpecFlags(c.vcluster_create, f.create_spec);
  c.vcluster_create->add_option("--idempotency-key", f.vcluster_create.idempotency_key,
                                "a retry with the same key returns the first result");
  AddWaitFlags(c.vcluster_create, f.create_wait, "vcluster ...", kVclusterWait);

  c.vcluster_get = vcluster->add_subcommand("get", "show one virtual cluster");
  AddVclusterWords(c.vcluster_get, f.get_words, f.vcluster_get.tenant, {{"NAME", &f.vcluster_get.name}},
                   ", then the virtual cluster's name");

  c.vcluster_list = vcluster->add_subcommand("list", "list a tenant's virtual clusters (every page)");
  AddVclusterWords(c.vcluster_list, f.list_words, f.vcluster_list.tenant, {}, "");
  c.vcluster_list->add_option("--state", f.vcluster_list.state, "only this state")
      ->check(CLI::IsMember({"PROVISIONING", "READY", "SLEEPING", "DELETING", "FAILED"}));
  c.vcluster_list->add_option("--page-size", f.vcluster_list.page_size, "virtual clusters per call (1-500)");

  c.vcluster_update = vcluster->add_subcommand("update", "change the given settings of a virtual cluster");
  AddVclusterWords(c.vcluster_update, f.update_words, f.vcluster_update.tenant, {{"NAME", &f.vcluster_update.name}},
                   ", then the virtual cluster's name");
  AddSpecFlags(c.vcluster_update, f.update_spec);
  c.vcluster_update->add_option("--etag", f.vcluster_update.etag, "only update if it still has this etag")
      ->check(kEtag);
  AddWaitFlags(c.vcluster_update, f.update_wait, "vcluster ...", kVclusterWait);

  c.vcluster_delete = vcluster->add_subcommand("delete", "delete a virtual cluster (its capacity is released)");
  AddVclusterWords(c.vcluster_delete, f.delete_words, f.vcluster_delete.tenant, {{"NAME", &f.vcluster_delete.name}},
                   ", then the virtual cluster's name");
  c.vcluster_delete->add_option("--etag", f.vcluster_delete.etag, "only delete if it still has this etag")
      ->check(kEtag);
  AddWaitFlags(c.vcluster_delete, f.delete_wait, "vcluster ...", kVclusterWait);

  c.vcluster_sleep = vcluster->add_subcommand(
      "sleep", "stop a virtual cluster's workloads on the host; its objects stay (wake brings them back)");
  AddVclusterWords(c.vcluster_sleep, f.sleep_words, f.vcluster_sleep.tenant, {{"NAME", &f.vcluster_sleep.name}},
                   ", then the virtual cluster's name");
  c.vcluster_sleep->add_option("--etag", f.vcluster_sleep.etag, "only sleep if it still has this etag")->check(kEtag);
  AddWaitFlags(c.vcluster_sleep, f.sleep_wait, "vcluster ...", kVclusterWait);

  c.vcluster_wake = vcluster->add_subcommand("wake", "wake a sleeping virtual cluster");
  AddVclusterWords(c.vcluster_wake, f.wake_words, f.vcluster_wake.tenant, {{"NAME", &f.vcluster_wake.name}},
                   ", then the virtual cluster's name");
  c.vcluster_wake->add_option("--etag", f.vcluster_wake.etag, "only wake if it still has this etag")->check(kEtag);
  AddWaitFlags(c.vcluster_wake, f.wake_wait, "vcluster ...", kVclusterWait);

  c.vcluster_kubeconfig = vcluster->add_subcommand(
      "kubeconfig", "print a kubeconfig with a new client certificate for a READY virtual cluster");
  AddVclusterWords(c.vcluster_kubeconfig, f.kubeconfig_words, f.vcluster_kubeconfig.tenant,
                   {{"NAME", &f.vcluster_kubeconfig.name}}, ", then the virtual cluster's name");
  c.vcluster_kubeconfig->add_option("--role", f.vcluster_kubeconfig.role, "admin, edit or view")->required();
  c.vcluster_kubeconfig->add_option("--ttl", f.vcluster_kubeconfig.ttl,
                                    "certificate lifetime (e.g. 1h, 90m); default and cap: the trust tier's");
  c.vcluster_kubeconfig->add_flag("--exec", f.kubeconfig_exec,
                                  "a kubeconfig that renews its certificate: kubectl runs septactl vcluster "
                                  "credential with septactl's own credential (docs/identity.md)");
  c.vcluster_kubeconfig->add_option("--exec-command", f.kubeconfig_exec_command,
                                    "with --exec: the septactl kubectl runs (default: this septactl's path)");
  c.vcluster_credential = vcluster->add_subcommand(
      "credential",
      "print an ExecCredential with a client certificate, cached until due for renewal (kubectl's exec plugin of "
      "kubeconfig --exec)");
  AddVclusterWords(c.vcluster_credential, f.credential_words, f.vcluster_credential.tenant,
                   {{"NAME", &f.vcluster_credential.name}}, ", then the virtual cluster's name");
  c.vcluster_credential->add_option("--role", f.vcluster_credential.role, "admin, edit or view")->required();
  c.vcluster_credential->add_option("--ttl", f.vcluster_credential.ttl,
                                    "lifetime of a new certificate; default and cap: the trust tier's");

  c.vcluster_credentials =
      vcluster->add_subcommand("credentials", "list the client certificates issued for a virtual cluster");
  AddVclusterWords(c.vcluster_credentials, f.credentials_words, f.vcluster_credentials.tenant,
                   {{"NAME", &f.vcluster_credentials.name}}, ", then the virtual cluster's name");

  c.vcluster_revoke_credential =
      vcluster->add_subcommand("revoke-credential", "revoke a client certificate of a virtual cluster");
  AddVclusterWords(c.vcluster_revoke_credential, f.revoke_words, f.vcluster_revoke_credential.tenant,
                   {{"NAME", &f.vcluster_revoke_credential.name}, {"SERIAL", &f.vcluster_revoke_credential.serial}},
                   ", then the virtual cluster's name and the certificate's serial (hex)");
}

Result<Command> SelectedVclusterCommand(const Commands& c, Flags& f) {
  for (VclusterWords* words :
       {&f.create_words, &f.get_words, &f.list_words, &f.update_words, &f.delete_words, &f.sleep_words, &f.wake_words,
        &f.kubeconfig_words, &f.credentials_words, &f.revoke_words, &f.credential_words}) {
    if (words->command->parsed()) SEPTA_RETURN_IF_ERROR(ResolveVclusterWords(*words));
  }
  if (c.vcluster_create->parsed()) {
    auto spec = SpecFrom(f.create_spec);
    SEPTA_RETURN_IF_ERROR(spec);
    if (!spec->capacity) return InvalidArgument("give one of --mig, --gpus, --nodes or --shared-milli");
    auto wait = WaitFrom(f.create_wait);
    SEPTA_RETURN_IF_ERROR(wait);
    f.vcluster_create.spec = *std::move(spec);
    f.vcluster_create.wait = *wait;
    return Command(std::move(f.vcluster_create));
  }
  if (c.vcluster_get->parsed()) return Command(std::move(f.vcluster_get));
  if (c.vcluster_kubeconfig->parsed()) {
    if (f.kubeconfig_exec) {
      return Command(VclusterExecKubeconfig{std::move(f.vcluster_kubeconfig), f.kubeconfig_exec_command});
    }
    if (c.vcluster_kubeconfig->get_option("--exec-command")->count() > 0) {
      return InvalidArgument("--exec-command needs --exec");
    }
    return Command(std::move(f.vcluster_kubeconfig));
  }
  if (c.vcluster_credential->parsed()) return Command(std::move(f.vcluster_credential));
  if (c.vcluster_credentials->parsed()) return Command(std::move(f.vcluster_credentials));
  if (c.vcluster_revoke_credential->parsed()) return Command(std::move(f.vcluster_revoke_credential));
  if (c.vcluster_list->parsed()) return Command(std::move(f.vcluster_list));
  if (c.vcluster_update->parsed()) {
    auto spec = SpecFrom(f.update_spec);
    SEPTA_RETURN_IF_ERROR(spec);
    const VclusterSpec& s = *spec;
    if (!s.display_name && !s.capacity && !s.cpu_milli && !s.memory_mib && !s.pods && !s.priority &&
        !s.over_quota_weight) {
      return InvalidArgument(
          "nothing to update: give --display-name, a capacity flag (--mig, --gpus, --nodes, --shared-milli), "
          "--cpu-milli, --memory-mib, --pods, --priority or --over-quota-weight");
    }
    auto wait = WaitFrom(f.update_wait);
    SEPTA_RETURN_IF_ERROR(wait);
    f.vcluster_update.spec = *std::move(spec);
    f.vcluster_update.wait = *wait;
    return Command(std::move(f.vcluster_update));
  }
  if (c.vcluster_sleep->parsed()) {
    auto wait = WaitFrom(f.sleep_wait);
    SEPTA_RETURN_IF_ERROR(wait);
    f.vcluster_sleep.wait = *wait;
    return Command(std::move(f.vcluster_sleep));
  }
  if (c.vcluster_wake->parsed()) {
    auto wait = WaitFrom(f.wake_wait);
    SEPTA_RETURN_IF_ERROR(wait);
    f.vcluster_wake.wait = *wait;
    return Command(std::move(f.vcluster_wake));
  }
  if (c.vcluster_delete->parsed()) {
    auto wait = WaitFrom(f.delete_wait);
    SEPTA_RETURN_IF_ERROR(wait);
    f.vcluster_delete.wait = *wait;
    return Command(std::move(f.vcluster_delete));
  }
  // A sub-command without a branch above: a defect here, never a delete.
  return Internal("septactl vcluster: the sub-command parsed has no command");
}

// Positionals in the usage line as their names say ("[TENANT] NAME"),
// without CLI11's count suffix ("(1x)") for the vcluster words.
class UsageFormatter final : public CLI::Formatter {
 public:
  std::string make_option_usage(const CLI::Option* opt) const override {
    const std::string name = make_option_name(opt, true);
    return opt->get_required() || name.front() == '[' ? name : "[" + name + "]";
  }
};

Commands Define(CLI::App& app, Flags& f) {
  app.require_subcommand(1);
  app.formatter(std::make_shared<UsageFormatter>());  // sub-commands made after this inherit it
  // Global flags may also follow the command (septactl tenant list -o json);
  // sub-commands created after this inherit it.
  app.fallthrough();
  app.add_option("--server", f.server, "septad's gRPC address host:port (default: config file, else 127.0.0.1:9090)");
  app.add_option("--token", f.token,
                 "bearer token (default: config file's token, else $SEPTA_TOKEN, else the ID token of septactl "
                 "login; each wins over the ones after it, --oidc-token-env over all)");
  app.add_option("--oidc-token-env", f.oidc_token_env,
                 "exchange the OIDC token in this environment variable (a CI job's ID token) for a short-lived "
                 "Septa token first (docs/identity.md)");
  app.add_option("--config", f.config_path,
                 "config file with server, token and login (default ~/.config/septa/config.yaml)");
  app.add_option("--in-tenant", f.in_tenant,
                 "the tenant a call that names none acts in, for a person who is a member of several (default: "
                 "$SEPTA_TENANT; sent as metadata septa-tenant)");
  app.add_option("--ca-file", f.ca_file, "connect with TLS and check septad's certificate against this CA (PEM)");
  app.add_flag("--tls", f.tls, "connect with TLS, checking septad's certificate against the system's CAs");
  app.add_option("-o,--output", f.output, "output format: table, json, yaml or csv (tables only)")
      ->check(CLI::IsMember({"table", "json", "yaml", "csv"}));
  app.add_option("--break-glass", f.break_glass,
                 "as an admin, write fields a locked apply set owns; the reason is audited (one line of ASCII)");
  app.add_option("--timeout", f.timeout_ms, "deadline of each call, e.g. 500ms, 10s, 2m")
      ->transform(CLI::AsNumberWithUnit(kMillisecondsPerUnit, kUnitRequired))
      ->check(CLI::PositiveNumber);

  Commands c{};
  auto* tenant = app.add_subcommand("tenant", "manage tenants")->require_subcommand(1);
  c.tenant_create = tenant->add_subcommand("create", "create a tenant");
  c.tenant_create->add_option("NAME", f.tenant_create.name, "tenant name (DNS label)")->required();
  c.tenant_create->add_option("--tier", f.tenant_create.tier, "trust tier (septactl tier list)")->required();
  c.tenant_create->add_option("--display-name", f.tenant_create.display_name, "human-readable name");
  c.tenant_create->add_option("--label", f.create_labels, "label key=value (repeatable)");
  c.tenant_create->add_option("--idempotency-key", f.tenant_create.idempotency_key,
                              "a retry with the same key returns the first result");
  AddQuotaFlags(c.tenant_create, f.create_quota);

  c.tenant_get = tenant->add_subcommand("get", "show one tenant");
  c.tenant_get->add_option("NAME", f.tenant_get.name, "tenant name")->required();

  c.tenant_list = tenant->add_subcommand("list", "list tenants");
  c.tenant_list->add_option("--filter", f.tenant_list.filter, "e.g. 'trust_tier=shared AND labels.team=ml'");
  c.tenant_list->add_option("--page-size", f.tenant_list.page_size, "tenants per page (1-500)");
  c.tenant_list->add_option("--page-token", f.tenant_list.page_token, "continue a previous list");
  c.tenant_list->add_flag("--all", f.tenant_list.all_pages, "fetch every page");

  c.tenant_update = tenant->add_subcommand("update", "change the given fields of a tenant");
  c.tenant_update->add_option("NAME", f.tenant_update.name, "tenant name")->required();
  c.update_display_name = c.tenant_update->add_option("--display-name", f.update_display_name, "human-readable name");
  c.update_labels =
      c.tenant_update->add_option("--label", f.update_labels, "label key=value (repeatable; replaces all)");
  c.update_tier = c.tenant_update->add_option("--tier", f.update_tier, "trust tier");
  c.update_state = c.tenant_update->add_option("--state", f.update_state, "ACTIVE or SUSPENDED")
                       ->check(CLI::IsMember({"ACTIVE", "SUSPENDED"}));
  c.tenant_update->add_option("--etag", f.tenant_update.etag, "only update if the tenant still has this etag")
      ->check(kEtag);
  AddQuotaFlags(c.tenant_update, f.update_quota);

  c.tenant_delete = tenant->add_subcommand("delete", "delete a tenant");
  c.tenant_delete->add_option("NAME", f.tenant_delete.name, "tenant name")->required();
  c.tenant_delete->add_option("--etag", f.tenant_delete.etag, "only delete if the tenant still has this etag")
      ->check(kEtag);
  DefineMemberCommands(*tenant, f.members, kEtag);

  auto* tier = app.add_subcommand("tier", "show trust tiers")->require_subcommand(1);
  c.tier_list = tier->add_subcommand("list", "list trust tiers");
  c.tier_get = tier->add_subcommand("get", "show one trust tier");
  c.tier_get->add_option("NAME", f.tier_get.name, "tier name")->required();

  auto* token = app.add_subcommand("token", "manage API tokens")->require_subcommand(1);
  c.token_create = token->add_subcommand("create", "issue a token (the secret is printed once)");
  c.token_create->add_option("--principal", f.token_create.principal, "admin or tenant:NAME")->required();
  c.token_create->add_option("--role", f.token_create.role, "owner or viewer")
      ->required()
      ->check(CLI::IsMember({"owner", "viewer"}));
  f.token_create.ttl = "24h";
  c.token_create
      ->add_option("--ttl", f.token_create.ttl, "lifetime, e.g. 90m, 24h, 1h30m (capped by the tenant's tier)")
      ->capture_default_str();
  c.token_create->add_option("--description", f.token_create.description, "what the token is for");
  c.token_create->add_option("--apply-set", f.token_create.apply_sets,
                             "scope the token to this apply set of its principal (repeat for more): it applies and "
                             "diffs only those and writes nothing else");
  c.token_list = token->add_subcommand("list", "list tokens");
  c.token_revoke = token->add_subcommand("revoke", "revoke a token");
  c.token_revoke->add_option("ID", f.token_revoke.id, "token id")->required();

  DefineLoginCommands(app, f.logins);
  c.inventory = app.add_subcommand("inventory", "list the host cluster's nodes and GPUs and who holds what (admin)");
  DefineVcluster(app, f, c);

  c.diff = app.add_subcommand("diff", "show what applying the documents would change (nothing is written)");
  AddApplySetFlags(c.diff, f.diff.options);
  c.diff->footer(kDiffExitCodes);
  c.apply = app.add_subcommand("apply", "make the apply set what the documents declare, all or nothing");
  AddApplySetFlags(c.apply, f.apply.options);
  c.apply->add_option("--plan", f.apply.plan_file,
                      "apply only the plan in this file (septactl diff -o json), refused if anything moved since");
  c.apply->add_flag("--detailed-exitcode", f.apply.detailed_exitcode, "exit 1 when changes were applied");
  AddWaitFlags(c.apply, f.apply_wait, "apply ...",
               "after the apply, poll until every virtual cluster of the plan is READY (deleted ones: gone)");
  c.apply->footer(kApplyExitCodes);

  auto* applyset =
      app.add_subcommand("applyset", "show apply sets and whether they are in sync")->require_subcommand(1);
  c.applyset_list = applyset->add_subcommand("list", "list the caller's apply sets (without the drift check)");
  c.applyset_get = applyset->add_subcommand(
      "get", "show an apply set: its last apply, its sync status and each member changed outside it since");
  c.applyset_get->add_option("NAME", f.applyset_get.name, "the set's name, as --set names it")->required();
  c.applyset_get->add_flag("--exit-code", f.applyset_get.exit_code, "exit 1 when the set is OUT_OF_SYNC");
  c.applyset_get->footer(kApplySetGetExitCodes);

  c.usage = app.add_subcommand("usage",
                               "GPU usage, waste and cost over a window: a tenant's (--tenant), else the "
                               "platform's (admin)")
                ->require_subcommand(0, 1);
  c.usage->add_option("--tenant", f.usage.tenant, "the tenant whose usage to show");
  c.usage->add_option("--window", f.usage_window,
                      "START/END in RFC 3339 or as dates (2026-11-01/2026-12-01); default: this month (UTC)");
  c.usage->add_option("--step", f.usage.step, "one row per step: 15m, 1h, 1d, 7d; default: the whole window");
  c.usage->add_option("--by", f.usage_by, "group by vcluster, tier, model, mig_profile or tenant (repeat or comma)")
      ->delimiter(',');
  c.usage_hoarders =
      c.usage->add_subcommand("hoarders", "virtual clusters whose GPUs have all idled past their tier's threshold");
  c.usage_hoarders->add_option("--tenant", f.usage_hoarders.tenant, "one tenant's; default: every tenant's (admin)");
  return c;
}

// "2026-11-01" is that day's midnight UTC; anything else is passed on as
// RFC 3339 for septad to check.
std::string WindowEdge(const std::string& text) {
  const bool date = text.size() == 10 && text[4] == '-' && text[7] == '-';
  return date ? text + "T00:00:00Z" : text;
}

Result<UsageShow> UsageFrom(Flags& f) {
  UsageShow usage = std::move(f.usage);
  if (!f.usage_window.empty()) {
    const std::size_t slash = f.usage_window.find('/');
    if (slash == std::string::npos || f.usage_window.find('/', slash + 1) != std::string::npos) {
      return InvalidArgument("--window is START/END, e.g. 2026-11-01/2026-12-01, not \"" + f.usage_window + "\"");
    }
    usage.start = WindowEdge(f.usage_window.substr(0, slash));
    usage.end = WindowEdge(f.usage_window.substr(slash + 1));
  }
  usage.group_by = std::move(f.usage_by);
  return usage;
}

Result<Command> SelectedCommand(const Commands& c, Flags& f) {
  if (auto login = SelectedLoginCommand(f.logins)) return *std::move(login);
  if (c.tenant_create->parsed()) {
    auto labels = ParseLabels(f.create_labels);
    SEPTA_RETURN_IF_ERROR(labels);
    f.tenant_create.labels = std::move(*labels);
    auto quota = QuotaFrom(c.tenant_create, f.create_quota);
    SEPTA_RETURN_IF_ERROR(quota);
    f.tenant_create.quota = *std::move(quota);
    return Command(std::move(f.tenant_create));
  }
  if (c.tenant_get->parsed()) return Command(std::move(f.tenant_get));
  if (c.tenant_list->parsed()) return Command(std::move(f.tenant_list));
  if (c.tenant_update->parsed()) {
    TenantUpdate& u = f.tenant_update;
    if (c.update_display_name->count() > 0) u.display_name = f.update_display_name;
    if (c.update_tier->count() > 0) u.tier = f.update_tier;
    if (c.update_state->count() > 0) u.state = f.update_state;
    if (c.update_labels->count() > 0) {
      auto labels = ParseLabels(f.update_labels);
      SEPTA_RETURN_IF_ERROR(labels);
      u.labels = std::move(*labels);
    }
    auto quota = QuotaFrom(c.tenant_update, f.update_quota);
    SEPTA_RETURN_IF_ERROR(quota);
    u.quota = *std::move(quota);
    if (!u.display_name && !u.tier && !u.state && !u.labels && u.quota.empty()) {
      return InvalidArgument("nothing to update: give --display-name, --label, --tier, --state or --quota-*");
    }
    return Command(std::move(u));
  }
  if (c.tenant_delete->parsed()) return Command(std::move(f.tenant_delete));
  if (auto member = SelectedMemberCommand(f.members)) return *std::move(member);
  if (c.tier_list->parsed()) return Command(TierList{});
  if (c.tier_get->parsed()) return Command(std::move(f.tier_get));
  if (c.token_create->parsed()) return Command(std::move(f.token_create));
  if (c.token_list->parsed()) return Command(TokenList{});
  if (c.inventory->parsed()) return Command(InventoryList{});
  if (c.token_revoke->parsed()) return Command(std::move(f.token_revoke));
  for (auto [command, options] : {std::pair{c.diff, &f.diff.options}, std::pair{c.apply, &f.apply.options}}) {
    if (!command->parsed()) continue;
    for (std::string& deletion : options->confirm_deletions) {
      auto confirmed = ConfirmedDeletion(deletion);
      SEPTA_RETURN_IF_ERROR(confirmed);
      deletion = *std::move(confirmed);
    }
  }
  if (c.diff->parsed()) return Command(std::move(f.diff));
  if (c.apply->parsed()) {
    auto wait = WaitFrom(f.apply_wait);
    SEPTA_RETURN_IF_ERROR(wait);
    f.apply.wait = *wait;
    return Command(std::move(f.apply));
  }
  if (c.applyset_list->parsed()) return Command(ApplySetList{});
  if (c.applyset_get->parsed()) {
    const std::string& name = f.applyset_get.name;
    if (name.find('/') != std::string::npos) {
      return InvalidArgument("NAME is the set's own name, as --set gives it (\"prod\" of \"applysets/prod\"), not \"" +
                             name + "\"");
    }
    return Command(std::move(f.applyset_get));
  }
  if (c.usage_hoarders->parsed()) return Command(std::move(f.usage_hoarders));
  if (c.usage->parsed()) {
    auto usage = UsageFrom(f);
    SEPTA_RETURN_IF_ERROR(usage);
    return Command(*std::move(usage));
  }
  return SelectedVclusterCommand(c, f);
}

}  // namespace

Result<ParsedCommandLine> ParseCommandLine(const std::vector<std::string>& args) {
  CLI::App app{"septactl: administer Septa over its gRPC API", "septactl"};
  Flags flags;
  const Commands commands = Define(app, flags);
  // CLI11 takes the arguments last first.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    std::ostringstream help, unused;
    app.exit(e, help, unused);
    return ParsedCommandLine(help.str());
  } catch (const CLI::CallForAllHelp& e) {
    std::ostringstream help, unused;
    app.exit(e, help, unused);
    return ParsedCommandLine(help.str());
  } catch (const CLI::ParseError& e) {
    return InvalidArgument(std::string(e.what()) + " (see septactl --help)");
  }

  Invocation invocation;
  GlobalOptions& options = invocation.options;
  if (!flags.server.empty()) options.server = flags.server;
  if (app.get_option("--token")->count() > 0) options.token = flags.token;
  if (!flags.config_path.empty()) options.config_path = flags.config_path;
  if (app.get_option("--oidc-token-env")->count() > 0) {
    if (flags.oidc_token_env.empty()) return InvalidArgument("--oidc-token-env: name an environment variable");
    options.oidc_token_env = flags.oidc_token_env;
  }
  if (!flags.ca_file.empty()) options.ca_file = flags.ca_file;
  if (app.get_option("--in-tenant")->count() > 0) options.in_tenant = flags.in_tenant;
  options.tls = flags.tls;
  auto output = ParseOutputFormat(flags.output);
  SEPTA_RETURN_IF_ERROR(output);
  options.output = *output;
  options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(flags.timeout_ms));
  // gRPC metadata holds printable ASCII only; septad bounds the length (500).
  if (app.get_option("--break-glass")->count() > 0) {
    const bool printable =
        std::all_of(flags.break_glass.begin(), flags.break_glass.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
    if (flags.break_glass.empty() || flags.break_glass.size() > 500 || !printable) {
      return InvalidArgument("--break-glass: give the reason as 1-500 printable ASCII characters on one line");
    }
    options.break_glass = flags.break_glass;
  }
  auto command = SelectedCommand(commands, flags);
  SEPTA_RETURN_IF_ERROR(command);
  invocation.command = std::move(*command);
  return ParsedCommandLine(std::move(invocation));
}

}  // namespace septa::cli
