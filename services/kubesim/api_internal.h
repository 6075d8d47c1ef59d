// Internal to kubesim's API server: the per-request context and the pieces
// the verb, discovery and watch files share.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "services/kubesim/api_server.h"
#include "services/kubesim/quota.h"

namespace septa::kubesim {

// One API request after routing and authentication.
struct Call {
  http::Request request;
  std::shared_ptr<http::Exchange> exchange;
  std::map<std::string, std::string> query;
  UserInfo user;
  std::shared_ptr<const ResourceType> type;
  std::string version, ns, name, subresource;
  bool table = false;  // the client asked for meta.k8s.io Table output

  std::string api_version() const { return type->group_version(version); }
  std::string Query(const std::string& key, const std::string& fallback = "") const {
    auto it = query.find(key);
    return it == query.end() ? fallback : it->second;
  }
  bool DryRun() const { return Query("dryRun") == "All"; }
};

// `warning`, when not empty, goes in a Warning header (299), which kubectl
// prints as "Warning: <text>".
void ReplyJson(http::Exchange& ex, int status, std::string body, std::string_view warning = {});
// The request's body as a JSON object (or array, when allowed), from JSON or YAML.
ApiResult<nlohmann::json> ParseBody(const Call& call, bool allow_array = false);

struct ApiServer::Impl {
  Impl(Cluster& c, ApiServerOptions o) : cluster(c), options(std::move(o)) { StartQuotaController(); }

  void Route(Call& call);
  bool Discovery(Call& call, const std::vector<std::string>& segments);
  bool OpenApi(Call& call, const std::vector<std::string>& segments);

  // verbs.cc
  void Get(Call& call);
  void List(Call& call);
  void Create(Call& call);
  void Update(Call& call);
  void Patch(Call& call);
  void Delete(Call& call);
  void DeleteCollection(Call& call);
  void Bind(Call& call);
  // scale.cc: the /scale subresource
  void Scale(Call& call);
  // token_request.cc: serviceaccounts/<name>/token, the users its tokens
  // authenticate, and TokenReview (what Vault's Kubernetes auth asks)
  void TokenRequest(Call& call);
  std::optional<UserInfo> ServiceAccountUser(std::string_view token) const;
  void TokenReview(Call& call);
  // watch.cc
  void Watch(Call& call);

  // Shared write paths (also used by the system, without a Call).
  ApiResult<ObjectPtr> CreateParsed(const ResourceType& type, const std::string& ns, nlohmann::json obj, bool dry_run,
                                    const std::string& manager);
  ApiResult<ObjectPtr> DeleteOne(const ResourceType& type, const std::string& ns, const std::string& name,
                                 const nlohmann::json& options, bool dry_run);
  void AfterWrite(const ResourceType& type, const std::string& ns, const ObjectPtr& obj, bool deleted);
  void DeleteNamespaceContents(const std::string& ns);
  void MaybeFinalizeNamespace(const std::string& ns);
  // quota_controller.cc. Admission charges a pod to its namespace's quotas
  // (the caller holds pod_admission_mu); deletions and pods that finish give
  // their share back through a watch on pods (applied before each admission,
  // after each pod write through the API, and on every tick); a quota that is
  // written is recounted from the pods.
  void StartQuotaController();
  PodAdmissionContext PodAdmissionContextFor(const std::string& ns);
  void ChargeQuotas(const std::string& ns, const ResourceAmounts& usage, bool release);
  void ApplyQuotaChanges();  // the caller holds pod_admission_mu
  void SyncQuotas();
  void RefreshQuotas(const std::string& ns);
  // Deletes the events last written before the event TTL (at most once a minute).
  void ExpireEvents();
  TimePoint next_event_sweep{};  // Tick's only
  // Renders an object for the client in the requested version.
  std::string Encode(const Call& call, const nlohmann::json& obj) const;

  Cluster& cluster;
  ApiServerOptions options;
  // Held while a pod is admitted and stored and while quota status changes,
  // so quota checks do not race.
  std::mutex pod_admission_mu;
  // Held from reading the services' cluster IPs to storing a new service,
  // so two creates never take one address (service_ips.h).
  std::mutex service_ips_mu;
  std::set<std::uint32_t> UsedServiceIps() const;
  std::shared_ptr<class PodQuotaWatch> pod_quota_watch;
};

}  // namespace septa::kubesim
