#include "services/core/model.h"

namespace septa::core {

std::string EtagOf(std::int64_t version) { return std::to_string(version); }

Status CheckEtag(std::string_view if_match, std::int64_t version, std::string_view what) {
  if (if_match.empty() || if_match == EtagOf(version)) return Status::Ok();
  return FailedPrecondition("etag \"" + std::string(if_match) + "\" does not match the current etag \"" +
                            EtagOf(version) + "\" of " + std::string(what) + ": read it again and retry");
}

std::string Principal::ToString() const { return admin ? "admin" : "tenant:" + tenant; }

}  // namespace septa::core
