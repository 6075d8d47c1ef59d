#include "services/core/model.h"

namespace septa::core {

std::string EtagOf(std::int64_t version) { return std::to_string(version); }

std::string Principal::ToString() const { return admin ? "admin" : "tenant:" + tenant; }

}  // namespace septa::core
