// The handlers of API v1, one file per service: each maps its RPCs' request
// messages onto the use cases and their results back (services/apiv1/api.h).
#pragma once

#include "services/apiv1/api.h"

namespace septa::apiv1 {

void AddTenantRpcs(Handlers& handlers, const core::UseCases& uc);
void AddMemberRpcs(Handlers& handlers, const core::UseCases& uc);
void AddCallerRpcs(Handlers& handlers, const core::UseCases& uc);
void AddTrustTierRpcs(Handlers& handlers, const core::UseCases& uc);
void AddTokenRpcs(Handlers& handlers, const core::UseCases& uc);
void AddVirtualClusterRpcs(Handlers& handlers, const core::UseCases& uc);
void AddCredentialRpcs(Handlers& handlers, const core::UseCases& uc);
void AddInventoryRpcs(Handlers& handlers, const core::UseCases& uc);
void AddDeclarativeRpcs(Handlers& handlers, const core::UseCases& uc);
void AddUsageRpcs(Handlers& handlers, const core::UseCases& uc);

}  // namespace septa::apiv1
