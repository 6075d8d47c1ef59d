// The bound of one GitOps request, known to the server (ApplyService) and
// to septactl, which refuses more before it sends anything.
#pragma once

#include <cstddef>

namespace septa::core {

// The most objects one Diff or Apply declares (the proto's bound); a bigger
// estate is several apply sets.
inline constexpr std::size_t kMaxApplyObjects = 2000;

}  // namespace septa::core
