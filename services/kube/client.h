// A Kubernetes REST client: every verb on any group/version/resource (CRDs
// included), Status bodies decoded into septa::Status, safe retries with
// jittered backoff, and Retry-After honoured.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "services/kube/config.h"
#include "services/kube/object.h"
#include "services/kube/transport.h"

namespace septa::kube {

// Which resource: "" / "v1" / "pods" for core pods; "apps" / "v1" /
// "deployments"; a CRD's group, version and plural.
struct Resource {
  std::string group;
  std::string version = "v1";
  std::string resource;
  bool namespaced = true;

  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
};

// The Kubernetes reason kept alongside the canonical code
// ("Conflict" and "AlreadyExists" are both 409).
std::string_view KubeReason(const Status& status);

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  std::size_t limit = 0;
  std::string continue_token;
  std::string resource_version;
};

struct WriteOptions {
  bool dry_run = false;
  std::string field_manager;
  std::string subresource;  // "status" for the status subresource
};

enum class PatchType { kMerge, kJson, kStrategic, kApply };

struct PatchOptions {
  bool dry_run = false;
  std::string field_manager;  // required for kApply
  bool force = false;         // kApply: take over conflicting fields
  std::string subresource;
};

struct DeleteOptions {
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  std::optional<std::string> propagation_policy;  // Foreground, Background, Orphan
  std::optional<long> grace_period_seconds;
  bool dry_run = false;
};

struct ClientOptions {
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds request_timeout{30'000};
  int max_retries = 4;  // for 429, 5xx and connection failures on safe calls
  std::chrono::milliseconds backoff_base{100};
  std::chrono::milliseconds backoff_max{5'000};
  const Clock* clock = nullptr;    // system clock when null
  RandomSource* random = nullptr;  // for jitter; OpenSSL's when null
  // Waits between retries; tests replace it to stay fast and deterministic.
  std::function<void(std::chrono::milliseconds)> sleep;
};

class Client {
 public:
  static Result<std::unique_ptr<Client>> Create(ClientConfig config, ClientOptions options = {});
  ~Client();

  const ClientConfig& config() const { return config_; }

  Result<nlohmann::json> Get(const Resource& r, const std::string& ns, const std::string& name,
                             const std::string& subresource = "");
  Result<ListPage> List(const Resource& r, const std::string& ns, const ListOptions& options = {});
  // Follows continue tokens to the end (pages of `options.limit`, or 500).
  Result<ListPage> ListAll(const Resource& r, const std::string& ns, ListOptions options = {});
  Result<nlohmann::json> Create(const Resource& r, const std::string& ns, const nlohmann::json& object,
                                const WriteOptions& options = {});
  // POST to a subresource of `name` that makes something (pods/binding,
  // serviceaccounts/token): the response object.
  Result<nlohmann::json> CreateSubresource(const Resource& r, const std::string& ns, const std::string& name,
                                           const std::string& subresource, const nlohmann::json& object);
  // PUT; the object's metadata.resourceVersion makes it conditional.
  Result<nlohmann::json> Update(const Resource& r, const std::string& ns, const nlohmann::json& object,
                                const WriteOptions& options = {});
  Result<nlohmann::json> Patch(const Resource& r, const std::string& ns, const std::string& name, PatchType type,
                               const std::string& body, const PatchOptions& options = {});
  // Server-side apply of `object` (its full intent) as `field_manager`.
  Result<nlohmann::json> Apply(const Resource& r, const std::string& ns, const nlohmann::json& object,
                               const std::string& field_manager, bool force = false);
  Status Delete(const Resource& r, const std::string& ns, const std::string& name, const DeleteOptions& options = {});

  // The path of a collection or object: /api/v1/namespaces/x/pods[/name[/sub]].
  std::string Path(const Resource& r, const std::string& ns, const std::string& name = "",
                   const std::string& subresource = "") const;

  // Raw access for watches and anything not covered above.
  Result<HttpResponse> Call(const HttpRequest& request, bool idempotent);
  Result<HttpResponse> OpenStream(const HttpRequest& request, std::chrono::milliseconds idle_timeout,
                                  const std::function<bool(std::string_view)>& on_data, StreamCancel* cancel);
  const Clock& clock() const { return *clock_; }
  RandomSource& random() { return *random_; }
  void Sleep(std::chrono::milliseconds d) { options_.sleep(d); }
  // Exponential backoff with full jitter for the given attempt (0-based).
  std::chrono::milliseconds Backoff(int attempt);

 private:
  Client(ClientConfig config, ClientOptions options);
  Result<nlohmann::json> JsonCall(const HttpRequest& request, bool idempotent);

  ClientConfig config_;
  ClientOptions options_;
  SystemClock system_clock_;
  std::unique_ptr<RandomSource> own_random_;
  const Clock* clock_;
  RandomSource* random_;
  std::unique_ptr<Credentials> credentials_;
  std::unique_ptr<Transport> transport_;
};

// Decodes an error response (a Status body, or anything else) into a Status.
Status StatusFromResponse(const HttpResponse& response, const std::string& what);

}  // namespace septa::kube
