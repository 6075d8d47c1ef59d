#include "services/config/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <vector>

#include "common/documents.h"
#include "common/ip_address.h"
#include "common/text.h"
#include "services/base/yaml_json.h"
#include "services/config/identity_keys.h"
#include "tenancy/sync/host_keys.h"

namespace septa::config {

std::string_view Spelling(LogLevel value) {
  switch (value) {
    case LogLevel::kTrace: return "trace";
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
  }
  return "";
}

std::string_view Spelling(LogFormat value) {
  switch (value) {
    case LogFormat::kText: return "text";
    case LogFormat::kJson: return "json";
  }
  return "";
}

std::string_view Spelling(MigRelayout value) {
  switch (value) {
    case MigRelayout::kAuto: return "auto";
    case MigRelayout::kOff: return "off";
  }
  return "";
}

std::string_view Spelling(SleepReservation value) {
  switch (value) {
    case SleepReservation::kKeep: return "keep";
    case SleepReservation::kRelease: return "release";
  }
  return "";
}

std::string_view Spelling(ControlPlane value) {
  switch (value) {
    case ControlPlane::kSimulated: return "simulated";
    case ControlPlane::kHost: return "host";
  }
  return "";
}

std::string_view Spelling(DatabaseSslMode value) {
  switch (value) {
    case DatabaseSslMode::kDisable: return "disable";
    case DatabaseSslMode::kRequire: return "require";
    case DatabaseSslMode::kVerifyCa: return "verify-ca";
    case DatabaseSslMode::kVerifyFull: return "verify-full";
  }
  return "";
}

std::string_view Spelling(Issuer value) {
  switch (value) {
    case Issuer::kBuiltin: return "builtin";
    case Issuer::kVault: return "vault";
  }
  return "";
}

std::string_view Spelling(VaultAuth value) {
  switch (value) {
    case VaultAuth::kToken: return "token";
    case VaultAuth::kAppRole: return "approle";
    case VaultAuth::kKubernetes: return "kubernetes";
  }
  return "";
}

std::string_view Spelling(tenancy::host::Scheduler value) { return tenancy::host::SchedulerName(value); }

std::string_view Spelling(tenancy::host::FractionBackend value) {
  switch (value) {
    case tenancy::host::FractionBackend::kKai: return "kai";
    case tenancy::host::FractionBackend::kHami: return "hami";
  }
  return "";
}

namespace {

using Setter = std::function<Status(Config&, const std::string& value, const std::string& where)>;

Status Bad(const std::string& where, const std::string& what) { return InvalidField(where, what); }

// "a,b,c" -> {"a", "b", "c"}; "" -> {} (an empty item stays, for the caller to refuse).
std::vector<std::string> CommaList(const std::string& v) {
  std::vector<std::string> items;
  for (std::size_t begin = 0; begin <= v.size() && !v.empty();) {
    const std::size_t end = std::min(v.find(',', begin), v.size());
    items.push_back(v.substr(begin, end - begin));
    begin = end + 1;
  }
  return items;
}

Status CheckTierName(const std::string& tier, const std::string& where) {
  if (tier.empty() || tier.size() > 63 || tier.front() == '-' || tier.back() == '-' ||
      tier.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos) {
    return Bad(where, "\"" + tier + "\" is not a trust tier name (a-z, 0-9 and inner -)");
  }
  return Status::Ok();
}

Status ParseInt(const std::string& value, const std::string& where, long long min, long long max, long long& out) {
  const char* end = value.data() + value.size();
  auto [ptr, ec] = std::from_chars(value.data(), end, out);
  if (ec != std::errc() || ptr != end) return Bad(where, "\"" + value + "\" is not an integer");
  if (out < min || out > max) {
    return Bad(where, value + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return Status::Ok();
}

// "250ms", "30s", "5m", "1h", or a bare number of seconds.
Status ParseMillis(const std::string& value, const std::string& where, std::chrono::milliseconds& out) {
  std::size_t digits = 0;
  while (digits < value.size() && value[digits] >= '0' && value[digits] <= '9') ++digits;
  if (digits == 0) return Bad(where, "\"" + value + "\" is not a duration such as 500ms, 30s, 5m or 1h");
  long long n = 0;
  SEPTA_RETURN_IF_ERROR(ParseInt(value.substr(0, digits), where, 0, 1'000'000'000, n));
  const std::string unit = value.substr(digits);
  long long scale = 0;
  if (unit == "ms") scale = 1;
  else if (unit == "s" || unit.empty()) scale = 1000;
  else if (unit == "m") scale = 60'000;
  else if (unit == "h") scale = 3'600'000;
  else return Bad(where, "\"" + value + "\" has an unknown unit; use ms, s, m or h");
  out = std::chrono::milliseconds(n * scale);
  return Status::Ok();
}

// "host:port" with a numeric port (0 picks a free one).
Status ParseAddress(const std::string& value, const std::string& where) {
  const std::size_t colon = value.rfind(':');
  if (colon == std::string::npos || colon == 0) return Bad(where, "\"" + value + "\" is not host:port");
  long long port = 0;
  return ParseInt(value.substr(colon + 1), where, 0, 65535, port);
}

Status OneOf(const std::string& value, const std::string& where, std::initializer_list<const char*> choices) {
  for (const char* c : choices) {
    if (value == c) return Status::Ok();
  }
  std::string list;
  for (const char* c : choices) list += (list.empty() ? "" : ", ") + std::string(c);
  return Bad(where, "\"" + value + "\" is not one of " + list);
}

// An enumerated key: `choices` in the order its refusal lists them, each
// spelled by Spelling (an exhaustive switch).
template <typename E>
Setter EnumKey(E Config::*field, std::initializer_list<E> choices) {
  std::vector<E> all(choices);
  return [field, all](Config& c, const std::string& v, const std::string& where) {
    for (E choice : all) {
      if (v == Spelling(choice)) {
        c.*field = choice;
        return Status::Ok();
      }
    }
    std::string list;
    for (E choice : all) list += (list.empty() ? "" : ", ") + std::string(Spelling(choice));
    return Bad(where, "\"" + v + "\" is not one of " + list);
  };
}

// A lease holder name (the leases table allows 200 characters) that reads
// plainly in logs and lease rows; empty asks for the default.
Status ParseReplicaId(const std::string& value, const std::string& where) {
  if (value.size() > 128) return Bad(where, "is longer than 128 characters");
  for (char ch : value) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '_' && ch != ':' && ch != '-') {
      return Bad(where, "\"" + value + "\" has a character other than A-Z a-z 0-9 . _ : -");
    }
  }
  return Status::Ok();
}

Setter StringKey(std::string Config::*field) {
  return [field](Config& c, const std::string& v, const std::string&) {
    c.*field = v;
    return Status::Ok();
  };
}

Setter AddressKey(std::string Config::*field) {
  return [field](Config& c, const std::string& v, const std::string& where) {
    SEPTA_RETURN_IF_ERROR(ParseAddress(v, where));
    c.*field = v;
    return Status::Ok();
  };
}

Setter IntKey(int Config::*field, int min, int max) {
  return [=](Config& c, const std::string& v, const std::string& where) {
    long long n = 0;
    SEPTA_RETURN_IF_ERROR(ParseInt(v, where, min, max, n));
    c.*field = static_cast<int>(n);
    return Status::Ok();
  };
}

Setter BoolKey(bool Config::*field) {
  return [field](Config& c, const std::string& v, const std::string& where) {
    SEPTA_RETURN_IF_ERROR(OneOf(v, where, {"true", "false"}));
    c.*field = v == "true";
    return Status::Ok();
  };
}

Setter MillisKey(std::chrono::milliseconds Config::*field) {
  return [field](Config& c, const std::string& v, const std::string& where) { return ParseMillis(v, where, c.*field); };
}

// A duration of at least `min`, which `min_text` says as the user writes it.
Setter MillisKeyAtLeast(std::chrono::milliseconds Config::*field, std::chrono::milliseconds min, std::string min_text) {
  return [field, min, min_text](Config& c, const std::string& v, const std::string& where) {
    SEPTA_RETURN_IF_ERROR(ParseMillis(v, where, c.*field));
    if (c.*field < min) return Bad(where, "\"" + v + "\" is shorter than " + min_text);
    return Status::Ok();
  };
}

struct KeyDef {
  KeyInfo info;
  Setter set;
};

const std::vector<KeyDef>& Defs() {
  static const std::vector<KeyDef> defs = {
      {{"data_dir", "directory for the embedded PostgreSQL, the admin token and state"}, StringKey(&Config::data_dir)},
      {{"replica_id",
        "this replica's name as the holder of controller leases (1-128 of A-Z a-z 0-9 . _ : -); empty: the one "
        "kept in data_dir/replica_id"},
       [](Config& c, const std::string& v, const std::string& where) {
         SEPTA_RETURN_IF_ERROR(ParseReplicaId(v, where));
         c.replica_id = v;
         return Status::Ok();
       }},
      {{"database_url", "PostgreSQL connection URL; empty starts a private PostgreSQL under data_dir"},
       StringKey(&Config::database_url)},
      {{"http_addr", "REST listen address host:port"}, AddressKey(&Config::http_addr)},
      {{"grpc_addr", "gRPC listen address host:port"}, AddressKey(&Config::grpc_addr)},
      {{"metrics_addr",
        "plain-HTTP listen address of /metrics without a token, for Prometheus (empty: none; /metrics on the REST "
        "listener needs an admin token)"},
       [](Config& c, const std::string& v, const std::string& where) {
         if (!v.empty()) SEPTA_RETURN_IF_ERROR(ParseAddress(v, where));
         c.metrics_addr = v;
         return Status::Ok();
       }},
      {{"tls_cert_file", "PEM certificate chain: REST serves HTTPS and gRPC TLS (with tls_key_file)"},
       StringKey(&Config::tls_cert_file)},
      {{"tls_key_file", "PEM private key of tls_cert_file"}, StringKey(&Config::tls_key_file)},
      {{"kek_file",
        "key-encryption key of the virtual clusters' CA keys (mode 0600); empty: data_dir/kek, created on first "
        "start"},
       StringKey(&Config::kek_file)},
      {{"kek_previous_file", "the key-encryption key being rotated away from: CA keys under it are re-wrapped"},
       StringKey(&Config::kek_previous_file)},
      {{"log_level", "trace, debug, info, warn or error"},
       EnumKey(&Config::log_level,
               {LogLevel::kTrace, LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError})},
      {{"log_format", "text or json"}, EnumKey(&Config::log_format, {LogFormat::kText, LogFormat::kJson})},
      {{"migrations_dir", "read migrations from this directory instead of the built-in ones"},
       StringKey(&Config::migrations_dir)},
      {{"web_dir", "the portal's built files (web/dist), served at / on the REST listener; empty: no portal"},
       StringKey(&Config::web_dir)},
      {{"sign_in_link",
        "true or false: at start, write a one-time link that signs a browser in to the portal as the bootstrap admin "
        "(data_dir/sign-in-link, and the log)"},
       BoolKey(&Config::sign_in_link)},
      {{"http_body_limit", "largest accepted request body in bytes"},
       [](Config& c, const std::string& v, const std::string& where) {
         long long n = 0;
         SEPTA_RETURN_IF_ERROR(ParseInt(v, where, 1024, 1LL << 30, n));
         c.http_body_limit = static_cast<std::uint64_t>(n);
         return Status::Ok();
       }},
      {{"http_read_timeout", "time allowed to read one request"}, MillisKey(&Config::http_read_timeout)},
      {{"http_idle_timeout", "keep-alive connections idle this long are closed"},
       MillisKey(&Config::http_idle_timeout)},
      {{"http_io_threads", "threads doing HTTP network I/O"}, IntKey(&Config::http_io_threads, 1, 64)},
      {{"http_max_connections",
        "open HTTP connections at most (then idle ones are closed, else 503); 0: from the file-descriptor limit"},
       IntKey(&Config::http_max_connections, 0, 1'000'000)},
      {{"worker_threads", "threads running requests (database calls)"}, IntKey(&Config::worker_threads, 1, 256)},
      {{"db_pool_size", "PostgreSQL connections"}, IntKey(&Config::db_pool_size, 1, 256)},
      {{"db_statement_timeout", "longest a database statement or connect may take; then the request fails with 503"},
       MillisKey(&Config::db_statement_timeout)},
      {{"db_acquire_timeout", "longest a request waits for a pooled database connection; then it fails with 503"},
       MillisKey(&Config::db_acquire_timeout)},
      {{"db_request_timeout",
        "longest a request waits on the database altogether (connections, connects, statements, retries); then "
        "503"},
       MillisKeyAtLeast(&Config::db_request_timeout, std::chrono::milliseconds(1), "1ms")},
      {{"db_ready_timeout", "longest readiness (/readyz, gRPC health) waits on the database; then not ready"},
       MillisKeyAtLeast(&Config::db_ready_timeout, std::chrono::milliseconds(1), "1ms")},
      {{"auth_cache_ttl", "how long a verified API token is trusted without asking the database"},
       MillisKey(&Config::auth_cache_ttl)},
      {{"shutdown_grace", "time in-flight requests get to finish on SIGTERM"}, MillisKey(&Config::shutdown_grace)},
      {{"idempotency_ttl", "how long an Idempotency-Key answers retries before it is forgotten (at least 1s)"},
       MillisKeyAtLeast(&Config::idempotency_ttl, std::chrono::seconds(1), "1s")},
      {{"admin_token_ttl_max",
        "longest lifetime of an API-issued admin token, and its lifetime when none is asked (at "
        "least 1s)"},
       MillisKeyAtLeast(&Config::admin_token_ttl_max, std::chrono::seconds(1), "1s")},
      {{"bootstrap_admin_ttl",
        "lifetime of the bootstrap admin token (data_dir/admin.token), minted at start only while no live admin "
        "owner token exists (at least 1m)"},
       MillisKeyAtLeast(&Config::bootstrap_admin_ttl, std::chrono::minutes(1), "1m")},
      {{"tenant_live_tokens_max", "unexpired, unrevoked API tokens one tenant may hold"},
       IntKey(&Config::tenant_live_tokens_max, 1, 1'000'000)},
      {{"token_retention",
        "how long a revoked or expired API token stays listed before it is deleted (default 720h, 30 days; at least "
        "1h); its audit records stay"},
       MillisKeyAtLeast(&Config::token_retention, std::chrono::hours(1), "1h")},
      {{"mig_relayout", "auto or off: re-lay out MIG GPUs that run nothing when an isolated request needs it"},
       EnumKey(&Config::mig_relayout, {MigRelayout::kAuto, MigRelayout::kOff})},
      {{"usage", "true or false: whether this septad scrapes the GPU nodes' dcgm-exporters and accounts usage"},
       BoolKey(&Config::usage)},
      {{"usage_scrape_interval", "how often each GPU node's dcgm-exporter is read (at least 1s)"},
       MillisKeyAtLeast(&Config::usage_scrape_interval, std::chrono::seconds(1), "1s")},
      {{"usage_scrape_timeout", "longest one read of an exporter may take, connect to last byte (at least 100ms)"},
       MillisKeyAtLeast(&Config::usage_scrape_timeout, std::chrono::milliseconds(100), "100ms")},
      {{"usage_exporter_namespace", "the namespace of the GPU Operator's dcgm-exporter pods on the host"},
       StringKey(&Config::usage_exporter_namespace)},
      {{"usage_exporter_selector", "the label selector of the dcgm-exporter pods (not empty)"},
       [](Config& c, const std::string& v, const std::string& where) {
         // Empty would select every pod of the namespace as an exporter.
         if (v.find_first_not_of(" \t") == std::string::npos) {
           return Bad(where, "is empty: it must select the dcgm-exporter pods (e.g. app=nvidia-dcgm-exporter)");
         }
         c.usage_exporter_selector = v;
         return Status::Ok();
       }},
      {{"usage_exporter_per_pod_values",
        "true or false: the exporter runs with --kubernetes-virtual-gpus (PR #594 or later), so shared GPUs are "
        "split by each pod's own use"},
       BoolKey(&Config::usage_exporter_per_pod_values)},
      {{"usage_hoarding_after",
        "KIND=DURATION pairs (comma-separated; kinds shared, isolated, dedicated, exclusive): how long all of a "
        "virtual cluster's GPUs must be idle before it is a hoarder; kinds not given keep 15m, 30m, 60m, 120m"},
       [](Config& c, const std::string& v, const std::string& where) {
         tenancy::usage::HoardingThresholds thresholds;
         for (const std::string& pair : CommaList(v)) {
           const std::size_t equals = pair.find('=');
           if (equals == std::string::npos) return Bad(where, "\"" + pair + "\" is not KIND=DURATION");
           const std::optional<gpu::Tier> tier = gpu::TierFromName(pair.substr(0, equals));
           if (!tier)
             return Bad(where, "\"" + pair.substr(0, equals) + "\" is not shared, isolated, dedicated or exclusive");
           std::chrono::milliseconds after{0};
           SEPTA_RETURN_IF_ERROR(ParseMillis(pair.substr(equals + 1), where, after));
           if (after < std::chrono::seconds(30))
             return Bad(where, "\"" + pair + "\" is shorter than one idle window (30s)");
           const auto at = std::chrono::duration_cast<std::chrono::seconds>(after);
           switch (*tier) {
             case gpu::Tier::kShared: thresholds.shared = at; break;
             case gpu::Tier::kIsolated: thresholds.isolated = at; break;
             case gpu::Tier::kDedicated: thresholds.dedicated = at; break;
             case gpu::Tier::kExclusive: thresholds.exclusive = at; break;
           }
         }
         c.usage_hoarding_after = thresholds;
         return Status::Ok();
       }},
      {{"usage_hoarding_sleep_after",
        "TIER=DURATION pairs (comma-separated trust tier names): how long a hoarder of that tier stays flagged "
        "before it is put to sleep (at least 1m); tiers not given are never put to sleep (the default: none)"},
       [](Config& c, const std::string& v, const std::string& where) {
         std::map<std::string, std::chrono::seconds> sleep_after;
         for (const std::string& pair : CommaList(v)) {
           const std::size_t equals = pair.find('=');
           if (equals == std::string::npos) return Bad(where, "\"" + pair + "\" is not TIER=DURATION");
           const std::string tier = pair.substr(0, equals);
           SEPTA_RETURN_IF_ERROR(CheckTierName(tier, where));
           std::chrono::milliseconds after{0};
           SEPTA_RETURN_IF_ERROR(ParseMillis(pair.substr(equals + 1), where, after));
           if (after < std::chrono::minutes(1)) return Bad(where, "\"" + pair + "\" is shorter than 1m");
           if (!sleep_after.emplace(tier, std::chrono::duration_cast<std::chrono::seconds>(after)).second)
             return Bad(where, "trust tier \"" + tier + "\" is given twice");
         }
         c.usage_hoarding_sleep_after = std::move(sleep_after);
         return Status::Ok();
       }},
      {{"usage_minute_retention",
        "how long one-minute usage rows are kept (default 840h, 35 days); older ones are deleted, hours and days "
        "stay (at least 48h)"},
       MillisKeyAtLeast(&Config::usage_minute_retention, std::chrono::hours(48), "48h")},
      {{"usage_currency", "the currency of GPU prices and costs (an ISO 4217 code)"},
       [](Config& c, const std::string& v, const std::string& where) {
         if (v.size() != 3 || !std::all_of(v.begin(), v.end(), [](char ch) { return ch >= 'A' && ch <= 'Z'; })) {
           return Bad(where, "\"" + EscapeControlCharacters(v) + "\" is not a three-letter ISO 4217 code (USD, EUR)");
         }
         c.usage_currency = v;
         return Status::Ok();
       }},
      {{"kubeconfig",
        "kubeconfig of the host Kubernetes cluster; in-cluster: the pod's service account; empty runs a simulated "
        "cluster in-process"},
       StringKey(&Config::kubeconfig)},
      {{"kubesim_addr", "HTTPS listen address of the simulated cluster (port 0: any free port)"},
       AddressKey(&Config::kubesim_addr)},
      {{"kubesim_inventory", "simulated nodes (YAML file); empty uses the built-in sample"},
       StringKey(&Config::kubesim_inventory)},
      {{"scheduler", "the host's batch scheduler the provisioner writes queues for: kai, kueue or default (none)"},
       EnumKey(&Config::scheduler,
               {tenancy::host::Scheduler::kKai, tenancy::host::Scheduler::kKueue, tenancy::host::Scheduler::kDefault})},
      {{"provisioner", "true or false: whether this septad makes virtual clusters real on the host"},
       BoolKey(&Config::provisioner)},
      {{"syncer",
        "true or false: whether this septad syncs the virtual clusters' pods to the host (needs the provisioner "
        "and control_plane simulated)"},
       BoolKey(&Config::syncer)},
      {{"fraction_backend", "kai or hami: how the syncer hands shared-tier GPU fractions to the host"},
       EnumKey(&Config::fraction_backend,
               {tenancy::host::FractionBackend::kKai, tenancy::host::FractionBackend::kHami})},
      {{"default_gpu_fraction_milli",
        "what a shared-tier pod that asks for nvidia.com/gpu: 1 and no fraction gets, in thousandths of a GPU"},
       IntKey(&Config::default_gpu_fraction_milli, 1, 1000)},
      {{"external_service_tiers",
        "trust tiers (comma-separated) whose virtual clusters may have NodePort and LoadBalancer services on the "
        "host; empty: none"},
       [](Config& c, const std::string& v, const std::string& where) {
         std::set<std::string> tiers;
         for (const std::string& tier : CommaList(v)) {
           SEPTA_RETURN_IF_ERROR(CheckTierName(tier, where));
           tiers.insert(tier);
         }
         c.external_service_tiers = std::move(tiers);
         return Status::Ok();
       }},
      {{"integration_keys",
        "TIER=DOMAIN pairs (comma-separated): the host integrations whose label and annotation keys a trust "
        "tier's objects may carry to the host, where a controller of the platform's acts on them (e.g. "
        "shared=external-dns.alpha.kubernetes.io); empty: none"},
       [](Config& c, const std::string& v, const std::string& where) {
         std::map<std::string, std::set<std::string>> allowed;
         for (const std::string& pair : CommaList(v)) {
           const std::size_t equals = pair.find('=');
           if (equals == std::string::npos) return Bad(where, "\"" + pair + "\" is not TIER=DOMAIN");
           const std::string tier = pair.substr(0, equals), domain = pair.substr(equals + 1);
           SEPTA_RETURN_IF_ERROR(CheckTierName(tier, where));
           if (!tenancy::sync::IsIntegrationDomain(domain)) {
             return Bad(where, "\"" + domain + "\" is not a known integration domain (" +
                                   tenancy::sync::IntegrationDomainList() + ")");
           }
           allowed[tier].insert(domain);
         }
         c.integration_keys = std::move(allowed);
         return Status::Ok();
       }},
      {{"sleep_reservation",
        "keep or release: whether a sleeping virtual cluster keeps its reservation or frees it "
        "until it wakes"},
       EnumKey(&Config::sleep_reservation, {SleepReservation::kKeep, SleepReservation::kRelease})},
      {{"vcluster_addr", "HTTPS listen address of the virtual clusters' Kubernetes APIs (port 0: any free port)"},
       AddressKey(&Config::vcluster_addr)},
      {{"vcluster_advertise_address",
        "the IP address tenants and the host's pods reach vcluster_addr at (empty: its host, 127.0.0.1 for a "
        "wildcard)"},
       [](Config& c, const std::string& v, const std::string& where) {
         if (!v.empty() && !IsIpAddress(v)) {
           return Bad(where, "\"" + EscapeControlCharacters(v) + "\" is not an IPv4 or IPv6 address");
         }
         c.vcluster_advertise_address = v;
         return Status::Ok();
       }},
      {{"vcluster_idle_after", "how long an unused virtual control plane stays in memory (at least 1s)"},
       [](Config& c, const std::string& v, const std::string& where) {
         SEPTA_RETURN_IF_ERROR(ParseMillis(v, where, c.vcluster_idle_after));
         if (c.vcluster_idle_after < std::chrono::seconds(1)) return Bad(where, "\"" + v + "\" is shorter than 1s");
         return Status::Ok();
       }},
      {{"control_plane",
        "where virtual clusters' Kubernetes APIs run: simulated (septad serves them) or host (a stock control plane "
        "per virtual cluster on the host cluster)"},
       EnumKey(&Config::control_plane, {ControlPlane::kSimulated, ControlPlane::kHost})},
      {{"control_plane_database_address",
        "control_plane host: PostgreSQL as the host cluster's pods reach it (host:port), for kine"},
       AddressKey(&Config::control_plane_database_address)},
      {{"control_plane_database_sslmode",
        "control_plane host: kine's sslmode: disable, require, verify-ca, verify-full"},
       EnumKey(&Config::control_plane_database_sslmode, {DatabaseSslMode::kDisable, DatabaseSslMode::kRequire,
                                                         DatabaseSslMode::kVerifyCa, DatabaseSslMode::kVerifyFull})},
      {{"issuer", "who signs tenants' client certificates: builtin (each virtual cluster's CA) or vault"},
       EnumKey(&Config::issuer, {Issuer::kBuiltin, Issuer::kVault})},
      {{"vault_addr", "issuer vault: the Vault's address, https://host:8200"}, StringKey(&Config::vault_addr)},
      {{"vault_ca_file", "issuer vault: PEM CA of the Vault's certificate; empty: the system trust store"},
       StringKey(&Config::vault_ca_file)},
      {{"vault_auth", "issuer vault: how septad logs in: token, approle or kubernetes"},
       EnumKey(&Config::vault_auth, {VaultAuth::kToken, VaultAuth::kAppRole, VaultAuth::kKubernetes})},
      {{"vault_token_file", "vault_auth token: file holding the token (re-read at every login)"},
       StringKey(&Config::vault_token_file)},
      {{"vault_role_id", "vault_auth approle: the role_id"}, StringKey(&Config::vault_role_id)},
      {{"vault_secret_id_file", "vault_auth approle: file holding the secret_id"},
       StringKey(&Config::vault_secret_id_file)},
      {{"vault_kubernetes_role", "vault_auth kubernetes: the Vault role to log in as"},
       StringKey(&Config::vault_kubernetes_role)},
      {{"vault_jwt_file", "vault_auth kubernetes: the service account token; empty: the pod's own"},
       StringKey(&Config::vault_jwt_file)},
      {{"vault_auth_mount", "vault_auth approle or kubernetes: the auth method's mount; empty: its type's name"},
       StringKey(&Config::vault_auth_mount)},
      {{"vault_pki_mount", "issuer vault: the mount of Septa's root CA (one PKI mount per virtual cluster besides)"},
       StringKey(&Config::vault_pki_mount)},
      {{"vault_workload_access",
        "issuer vault, true or false: give each virtual cluster's workloads a Vault login with their own service "
        "account token (a Kubernetes auth method per virtual cluster, the Vault reaching its endpoint)"},
       BoolKey(&Config::vault_workload_access)},
      {{"vault_workload_policy",
        "vault_workload_access: the policy (HCL) of a virtual cluster's workloads, {tenant} and {vcluster} replaced; "
        "empty: read secret/data/tenants/{tenant}/*"},
       StringKey(&Config::vault_workload_policy)},
      {{"vault_workload_token_ttl", "vault_workload_access: the lifetime of a workload's Vault token"},
       MillisKey(&Config::vault_workload_token_ttl)},
      {{"vault_secrets_operator",
        "vault_workload_access, true or false: keep the Vault Secrets Operator's default VaultConnection and "
        "VaultAuth in each virtual cluster"},
       BoolKey(&Config::vault_secrets_operator)},
      {{"vault_secrets_operator_address",
        "vault_secrets_operator: the Vault's address as the virtual clusters' pods reach it; empty: vault_addr"},
       StringKey(&Config::vault_secrets_operator_address)},
      {{"vault_secrets_operator_namespace",
        "vault_secrets_operator: the namespace the operator runs in, where its defaults live"},
       [](Config& c, const std::string& v, const std::string& where) {
         if (!IsDns1123Label(v)) return Bad(where, "\"" + v + "\" is not a namespace name (a DNS-1123 label)");
         c.vault_secrets_operator_namespace = v;
         return Status::Ok();
       }},
      {{"oidc_issuers",
        "the OpenID Connect identity providers whose tokens septad verifies: a list of {issuer, audience, "
        "client_id, cli_client_id, client_secret_file, name, scopes, username_claim, groups_claim, admin_groups, "
        "ca_file} "
        "(docs/identity.md)",
        true},
       [](Config& c, const std::string& v, const std::string& where) {
         return identity::ParseOidcIssuers(v, where, c.oidc_issuers);
       }},
      {{"token_exchange_rules",
        "which identity providers' tokens are exchanged for Septa tokens (POST /v1/tokens:exchange): a list of "
        "{issuer, claims, principal, role, ttl}, the first match wins (docs/identity.md)",
        true},
       [](Config& c, const std::string& v, const std::string& where) {
         return identity::ParseTokenExchangeRules(v, where, c.token_exchange_rules);
       }},
  };
  return defs;
}

const KeyDef* Find(const std::string& key) {
  for (const auto& d : Defs()) {
    if (d.info.key == key) return &d;
  }
  return nullptr;
}

std::string FlagName(const std::string& key) {
  std::string flag = key;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return "--" + flag;
}

Status ApplyYaml(Config& config, const Sources& sources) {
  if (sources.yaml_text.empty()) return Status::Ok();
  const std::string& file = sources.yaml_name.empty() ? std::string("config") : sources.yaml_name;
  auto parsed = ParseYaml(sources.yaml_text);
  if (!parsed.ok()) return InvalidArgument(file + ": " + parsed.status().message());
  const YAML::Node& root = *parsed;
  if (root.IsNull()) return Status::Ok();
  if (!root.IsMap()) return InvalidArgument(file + ": must be a mapping of key: value");
  for (const auto& item : root) {
    const std::string key = item.first.as<std::string>();
    const KeyDef* def = Find(key);
    if (def == nullptr) return InvalidField(key, "unknown configuration key in " + file);
    if (def->info.structured) {
      // The node's text again (the setter parses it with the bounds of
      // common/documents.h, as it does the environment's JSON).
      SEPTA_RETURN_IF_ERROR(
          def->set(config, base::YamlToJson(item.second).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                   key + " (" + file + ")"));
      continue;
    }
    if (!item.second.IsScalar()) return InvalidField(key, "must be a scalar value in " + file);
    SEPTA_RETURN_IF_ERROR(def->set(config, item.second.as<std::string>(), key + " (" + file + ")"));
  }
  return Status::Ok();
}

// What issuer vault needs, named by the key that is missing.
Status CheckVaultAuth(const Config& config) {
  switch (config.vault_auth) {
    case VaultAuth::kToken:
      if (config.vault_token_file.empty()) return InvalidField("vault_token_file", "required when vault_auth is token");
      return Status::Ok();
    case VaultAuth::kAppRole:
      if (config.vault_role_id.empty() || config.vault_secret_id_file.empty()) {
        return InvalidField(config.vault_role_id.empty() ? "vault_role_id" : "vault_secret_id_file",
                            "required when vault_auth is approle");
      }
      return Status::Ok();
    case VaultAuth::kKubernetes:
      if (config.vault_kubernetes_role.empty()) {
        return InvalidField("vault_kubernetes_role", "required when vault_auth is kubernetes");
      }
      return Status::Ok();
  }
  return Status::Ok();
}

Status CheckVault(const Config& config) {
  switch (config.issuer) {
    case Issuer::kBuiltin: return Status::Ok();
    case Issuer::kVault: break;
  }
  if (config.vault_addr.empty()) return InvalidField("vault_addr", "required when issuer is vault");
  SEPTA_RETURN_IF_ERROR(CheckVaultAuth(config));
  if (config.vault_workload_access && config.vault_workload_token_ttl < std::chrono::seconds(1)) {
    return InvalidField("vault_workload_token_ttl", "must be at least 1s");
  }
  if (config.vault_secrets_operator && !config.vault_workload_access) {
    return InvalidField("vault_secrets_operator", "needs vault_workload_access: the operator logs in as a workload");
  }
  return Status::Ok();
}

}  // namespace

const std::vector<KeyInfo>& Keys() {
  static const std::vector<KeyInfo> keys = [] {
    std::vector<KeyInfo> out;
    for (const auto& d : Defs()) out.push_back(d.info);
    return out;
  }();
  return keys;
}

std::size_t EffectiveHttpMaxConnections(const Config& config, std::uint64_t fd_soft_limit) {
  if (config.http_max_connections > 0) return static_cast<std::size_t>(config.http_max_connections);
  constexpr std::uint64_t kReserve = 128;  // descriptors that are not HTTP connections, besides the pool
  constexpr std::uint64_t kLeast = 16, kMost = 4096;
  const std::uint64_t reserved = kReserve + static_cast<std::uint64_t>(config.db_pool_size);
  const std::uint64_t left = fd_soft_limit > reserved ? fd_soft_limit - reserved : 0;
  return static_cast<std::size_t>(std::clamp(left, kLeast, kMost));
}

std::size_t VirtualApiMaxConnections(const Config& config, std::uint64_t fd_soft_limit) {
  // Never below the fixed 1,024 it had before it was derived: a small limit
  // is no reason to serve fewer virtual clusters than then.
  constexpr std::uint64_t kReserve = 128, kLeast = 1024;
  const std::uint64_t taken =
      kReserve + static_cast<std::uint64_t>(config.db_pool_size) + EffectiveHttpMaxConnections(config, fd_soft_limit);
  const std::uint64_t left = fd_soft_limit > taken ? fd_soft_limit - taken : 0;
  return static_cast<std::size_t>(std::max(left / 2, kLeast));
}

std::string EnvName(const std::string& key) {
  std::string env = "SEPTA_";
  for (char c : key) env += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return env;
}

Result<Config> Load(const Sources& sources, const std::string& home) {
  Config config;
  config.data_dir = home.empty() ? std::string(".septa") : home + "/.local/share/septa";
  SEPTA_RETURN_IF_ERROR(ApplyYaml(config, sources));
  for (const auto& def : Defs()) {
    auto env = sources.env.find(EnvName(def.info.key));
    if (env != sources.env.end()) {
      SEPTA_RETURN_IF_ERROR(def.set(config, env->second, def.info.key + " (" + env->first + ")"));
    }
  }
  for (const auto& [key, value] : sources.flags) {
    const KeyDef* def = Find(key);
    if (def == nullptr) return InvalidField(key, "unknown flag " + FlagName(key));
    SEPTA_RETURN_IF_ERROR(def->set(config, value, key + " (" + FlagName(key) + ")"));
  }
  if (config.data_dir.empty()) return InvalidField("data_dir", "must not be empty");
  if (config.control_plane == ControlPlane::kHost && config.control_plane_database_address.empty()) {
    return InvalidField("control_plane_database_address", "required when control_plane is host");
  }
  SEPTA_RETURN_IF_ERROR(CheckVault(config));
  SEPTA_RETURN_IF_ERROR(identity::CheckIdentityKeys(config));
  if (config.tls_cert_file.empty() != config.tls_key_file.empty()) {
    return config.tls_key_file.empty() ? InvalidField("tls_key_file", "required when tls_cert_file is set")
                                       : InvalidField("tls_cert_file", "required when tls_key_file is set");
  }
  return config;
}

}  // namespace septa::config
