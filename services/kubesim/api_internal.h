// Internal to kubesim's API server: the per-request context and the pieces
// the verb, discovery and watch files share.
#pragma once

#include <map>
#include <mutex>
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

void ReplyJson(http::Exchange& ex, int status, std::string body);
void ReplyError(http::Exchange& ex, const ApiError& error);

struct ApiServer::Impl {
  Impl(Cluster& c, ApiServerOptions o) : cluster(c), options(std::move(o)) {}

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
  // quota_controller.cc: what admitting a pod in `ns` reads; quotas charged
  // for an admitted pod (the caller holds pod_admission_mu) and released by a
  // deleted one; ResourceQuota status recounted from the pods (a quota
  // written, and every quota_resync_interval).
  PodAdmissionContext PodAdmissionContextFor(const std::string& ns) const;
  void ChargeQuotas(const std::string& ns, const ResourceAmounts& usage, bool release);
  void ReleasePod(const std::string& ns, const nlohmann::json& pod);
  void RefreshQuotas(const std::string& ns);
  void ResyncQuotas();
  // Renders an object for the client in the requested version.
  std::string Encode(const Call& call, const nlohmann::json& obj) const;

  Cluster& cluster;
  ApiServerOptions options;
  // Held while a pod is admitted and stored, so quota checks do not race.
  std::mutex pod_admission_mu;
  TimePoint last_quota_resync{};
  std::uint64_t last_quota_resync_version = 0;
};

}  // namespace septa::kubesim
