// InventoryService over core::InventoryService.
#include "services/apiv1/convert.h"
#include "services/apiv1/rpcs.h"

namespace septa::apiv1 {

void AddInventoryRpcs(Handlers& handlers, const core::UseCases& uc) {
  handlers.Add<v1::ListNodesRequest>(
      [uc](const core::RequestContext& ctx, const v1::ListNodesRequest& req) -> Result<v1::ListNodesResponse> {
        SEPTA_ASSIGN_OR_RETURN(const core::InventoryPage page,
                               uc.inventory.ListNodes(ctx, req.page_size(), req.page_token()));
        return ToProto(page);
      });
  handlers.Add<v1::GetFreeCapacityRequest>(
      [uc](const core::RequestContext& ctx, const v1::GetFreeCapacityRequest& req) -> Result<v1::FreeCapacity> {
        SEPTA_ASSIGN_OR_RETURN(const core::FreeCapacity free, uc.inventory.FreeFor(ctx, req.tenant()));
        return ToProto(free);
      });
  handlers.Add<v1::GetInventoryFreeCapacityRequest>(
      [uc](const core::RequestContext& ctx,
           const v1::GetInventoryFreeCapacityRequest&) -> Result<v1::InventoryFreeCapacity> {
        SEPTA_ASSIGN_OR_RETURN(const std::vector<core::FreeCapacity> every, uc.inventory.FreeForEveryTier(ctx));
        v1::InventoryFreeCapacity out;
        for (const core::FreeCapacity& free : every) *out.add_by_sharing() = ToProto(free);
        return out;
      });
}

}  // namespace septa::apiv1
