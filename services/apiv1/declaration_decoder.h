// A member's intent (core::ApplyObjectRequest::intent) is the
// septa.v1.ApplyObject the API received: this turns it back into the
// request, through the same conversion Apply used, so a revert applies
// exactly what was declared.
#pragma once

#include <string_view>

#include "services/core/apply_service.h"

namespace septa::apiv1 {

class ApplyObjectDecoder final : public core::DeclarationDecoder {
 public:
  Result<core::ApplyObjectRequest> Decode(std::string_view intent) const override;
};

}  // namespace septa::apiv1
