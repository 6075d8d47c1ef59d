#include "services/core/virtual_pods.h"

#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>

#include "common/documents.h"
#include "services/core/tenant_query.h"
#include "services/core/virtual_cluster_kind.h"

namespace septa::core {

namespace {

constexpr std::string_view kPodPageTokenKind = "pod:";
constexpr std::string_view kPodsTypeKey = "pods";

// The string at `key` of `object`, or "" when absent or not a string.
std::string Text(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

const nlohmann::json& Member(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kNone;
  if (!object.is_object()) return kNone;
  auto it = object.find(key);
  return it == object.end() ? kNone : *it;
}

}  // namespace

Result<VirtualPodStatus> DescribeVirtualPod(std::string_view json) {
  SEPTA_ASSIGN_OR_RETURN(const nlohmann::json pod, ParseJson(json));
  const nlohmann::json& metadata = Member(pod, "metadata");
  const nlohmann::json& status = Member(pod, "status");
  VirtualPodStatus out;
  out.ns = Text(metadata, "namespace");
  out.name = Text(metadata, "name");
  if (out.name.empty()) return InvalidArgument("a stored pod without metadata.name");
  out.create_time = Text(metadata, "creationTimestamp");
  out.phase = Text(status, "phase");
  if (out.phase.empty()) out.phase = "Pending";
  if (out.Running()) return out;
  for (const nlohmann::json& condition : Member(status, "conditions")) {
    if (Text(condition, "type") == "PodScheduled" && Text(condition, "status") == "False") {
      out.reason = Text(condition, "reason");
      out.message = Text(condition, "message");
      out.since = Text(condition, "lastTransitionTime");
      return out;
    }
  }
  for (const char* statuses : {"initContainerStatuses", "containerStatuses"}) {
    for (const nlohmann::json& container : Member(status, statuses)) {
      const nlohmann::json& waiting = Member(Member(container, "state"), "waiting");
      if (const std::string reason = Text(waiting, "reason"); !reason.empty()) {
        out.reason = reason;
        out.message = Text(waiting, "message");
        return out;
      }
    }
  }
  out.reason = Text(status, "reason");
  out.message = Text(status, "message");
  return out;
}

Result<VirtualPodPage> VirtualPodService::List(const RequestContext& ctx, const std::string& tenant,
                                               const std::string& vcluster, const ListVirtualPodsParams& params) {
  SEPTA_RETURN_IF_ERROR(CheckMaySeeVirtualCluster(ctx, tenant, vcluster));
  if (params.page_size < 0 || params.page_size > kMaxPageSize) {
    return InvalidField("page_size", "must be between 1 and 500 (0 for the default of 100)");
  }
  // The last pod of the previous page: "<namespace>/<name>" (a namespace holds no slash).
  std::optional<std::pair<std::string, std::string>> after;
  if (!params.page_token.empty()) {
    SEPTA_ASSIGN_OR_RETURN(const std::string last, DecodeKeyPageToken(kPodPageTokenKind, params.page_token));
    const std::size_t slash = last.find('/');
    if (slash == std::string::npos) return InvalidField("page_token", "is not a token returned by a previous list");
    after.emplace(last.substr(0, slash), last.substr(slash + 1));
  }
  SEPTA_RETURN_IF_ERROR(
      TransactFor(store_, TxMode::kReadOnly, [&](Tx& tx) { return FindVirtualCluster(tx, tenant, vcluster); }));
  if (!pods_stored_) {
    return FailedPrecondition(DescribeVirtualCluster(tenant, vcluster) +
                              " runs on a host control plane: list its pods through its own API (kubectl)");
  }
  SEPTA_ASSIGN_OR_RETURN(const std::vector<VirtualObject> objects,
                         objects_.LoadObjects(tenancy::VirtualClusterRef{tenant, vcluster}));
  std::vector<VirtualPodStatus> pods;
  for (const VirtualObject& object : objects) {
    if (object.type_key != kPodsTypeKey) continue;
    // The tenant wrote it: one that does not read as a pod is left out, not an error of the list.
    auto pod = DescribeVirtualPod(object.body);
    if (!pod.ok() || (params.not_running && pod->Running())) continue;
    if (after && std::tie(pod->ns, pod->name) <= std::tie(after->first, after->second)) continue;
    pods.push_back(*std::move(pod));
  }
  std::ranges::sort(pods, {}, [](const VirtualPodStatus& p) { return std::tie(p.ns, p.name); });
  VirtualPodPage page;
  const auto limit = static_cast<std::size_t>(params.page_size == 0 ? kDefaultPageSize : params.page_size);
  if (pods.size() > limit) {
    pods.resize(limit);
    page.next_page_token = EncodeKeyPageToken(kPodPageTokenKind, pods.back().ns + "/" + pods.back().name);
  }
  page.pods = std::move(pods);
  return page;
}

}  // namespace septa::core
