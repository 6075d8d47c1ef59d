// The API's side of GitOps' declarations (DeclarativeService's conversion,
// declarative_rpcs.cc): an ApplyRequest as the use case takes it, and a
// member's intent (core::ApplyObjectRequest::intent: the
// septa.v1.ApplyObject the API received) back into its request, through the
// same conversion, so a revert applies exactly what was declared.
#pragma once

#include <string_view>

#include "septa/v1/declarative.pb.h"
#include "services/core/apply_service.h"

namespace septa::apiv1 {

// Every object converted (errors name objects[i]), each with its intent.
Result<core::ApplyOrder> ApplyOrderOf(const v1::ApplyRequest& request);

class ApplyObjectDecoder final : public core::DeclarationDecoder {
 public:
  Result<core::ApplyObjectRequest> Decode(std::string_view intent) const override;
};

}  // namespace septa::apiv1
