// VirtualClusterService's lifecycle RPCs over core::VirtualClusterService
// (its credentials: credential_rpcs.cc).
#include <algorithm>

#include "services/apiv1/convert.h"
#include "services/apiv1/rpcs.h"

namespace septa::apiv1 {

namespace {

// Without an update mask, the fields the client set (messages by presence,
// scalars when not empty). Over REST the mask is the fields the body sent.
std::vector<std::string> VirtualClusterFieldsSet(const v1::VirtualCluster& v) {
  std::vector<std::string> paths;
  if (!v.display_name().empty()) paths.push_back("display_name");
  if (v.has_capacity()) paths.push_back("capacity");
  if (v.has_quota()) paths.push_back("quota");
  if (v.has_queue()) paths.push_back("queue");
  if (v.has_api_limits()) paths.push_back("api_limits");
  return paths;
}

core::WriteMode WriteModeOf(bool validate_only) {
  return validate_only ? core::WriteMode::kValidateOnly : core::WriteMode::kCommit;
}

using Transition = Result<core::VirtualClusterView> (core::VirtualClusterService::*)(const core::RequestContext&,
                                                                                     const std::string&,
                                                                                     const std::string&,
                                                                                     std::string_view);

}  // namespace

void AddVirtualClusterRpcs(Handlers& handlers, const core::UseCases& uc) {
  handlers.Add<v1::CreateVirtualClusterRequest>(
      [uc](const core::RequestContext& ctx, const v1::CreateVirtualClusterRequest& req) -> Result<v1::VirtualCluster> {
        const v1::VirtualCluster& in = req.virtual_cluster();
        if (!in.tenant().empty() && in.tenant() != req.tenant()) {
          return InvalidField("virtual_cluster.tenant", "must match tenant (\"" + req.tenant() + "\")");
        }
        SEPTA_ASSIGN_OR_RETURN(const tenancy::VirtualCluster draft,
                               VirtualClusterFromProto(in, /*require_capacity=*/true));
        SEPTA_ASSIGN_OR_RETURN(
            const core::VirtualClusterView created,
            uc.vclusters.Create(ctx, req.tenant(), draft, req.idempotency_key(), WriteModeOf(req.validate_only())));
        return ToProto(created);
      });
  handlers.Add<v1::GetVirtualClusterRequest>(
      [uc](const core::RequestContext& ctx, const v1::GetVirtualClusterRequest& req) -> Result<v1::VirtualCluster> {
        SEPTA_ASSIGN_OR_RETURN(const core::VirtualClusterView found, uc.vclusters.Get(ctx, req.tenant(), req.name()));
        return ToProto(found);
      });
  handlers.Add<v1::ListVirtualClustersRequest>(
      [uc](const core::RequestContext& ctx,
           const v1::ListVirtualClustersRequest& req) -> Result<v1::ListVirtualClustersResponse> {
        SEPTA_ASSIGN_OR_RETURN(const core::VirtualClusterPage page,
                               uc.vclusters.List(ctx, req.tenant(), {req.page_size(), req.page_token(), req.filter()}));
        v1::ListVirtualClustersResponse out;
        for (const auto& v : page.vclusters) *out.add_virtual_clusters() = ToProto(v);
        out.set_next_page_token(page.next_page_token);
        return out;
      });
  handlers.Add<v1::UpdateVirtualClusterRequest>(
      [uc](const core::RequestContext& ctx, const v1::UpdateVirtualClusterRequest& req) -> Result<v1::VirtualCluster> {
        const v1::VirtualCluster& in = req.virtual_cluster();
        std::vector<std::string> paths(req.update_mask().paths().begin(), req.update_mask().paths().end());
        paths = MaskPaths(*v1::VirtualCluster::descriptor(), paths.empty() ? VirtualClusterFieldsSet(in) : paths);
        SEPTA_ASSIGN_OR_RETURN(const tenancy::VirtualCluster patch,
                               VirtualClusterFromProto(in, std::ranges::find(paths, "capacity") != paths.end()));
        SEPTA_ASSIGN_OR_RETURN(const core::VirtualClusterView updated,
                               uc.vclusters.Update(ctx, in.tenant(), in.name(), patch, paths, in.etag(),
                                                   WriteModeOf(req.validate_only())));
        return ToProto(updated);
      });
  handlers.Add<v1::DeleteVirtualClusterRequest>(
      [uc](const core::RequestContext& ctx, const v1::DeleteVirtualClusterRequest& req) -> Result<v1::VirtualCluster> {
        SEPTA_ASSIGN_OR_RETURN(const core::VirtualClusterView deleted,
                               uc.vclusters.Delete(ctx, req.tenant(), req.name(), req.etag()));
        return ToProto(deleted);
      });
  // Sleep and wake: the same shape, another transition.
  auto transition = [uc](Transition method) {
    return [uc, method](const core::RequestContext& ctx, const auto& req) -> Result<v1::VirtualCluster> {
      SEPTA_ASSIGN_OR_RETURN(const core::VirtualClusterView moved,
                             (uc.vclusters.*method)(ctx, req.tenant(), req.name(), req.etag()));
      return ToProto(moved);
    };
  };
  handlers.Add<v1::SleepVirtualClusterRequest>(transition(&core::VirtualClusterService::Sleep));
  handlers.Add<v1::WakeVirtualClusterRequest>(transition(&core::VirtualClusterService::Wake));
  handlers.Add<v1::ListVirtualClusterPodsRequest>(
      [uc](const core::RequestContext& ctx,
           const v1::ListVirtualClusterPodsRequest& req) -> Result<v1::ListVirtualClusterPodsResponse> {
        SEPTA_ASSIGN_OR_RETURN(
            const core::VirtualPodPage page,
            uc.pods.List(ctx, req.tenant(), req.vcluster(), {req.not_running(), req.page_size(), req.page_token()}));
        return ToProto(page);
      });
}

}  // namespace septa::apiv1
