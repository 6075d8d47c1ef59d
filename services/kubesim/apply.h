// Server-side apply: field ownership in metadata.managedFields (FieldsV1),
// conflicts between managers, and removal of fields a manager stopped
// applying. Simplified: ownership is tracked per leaf field.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "services/kubesim/api_error.h"

namespace septa::kubesim {

struct ApplyRequest {
  const nlohmann::json* current = nullptr;  // null: the object does not exist yet
  const nlohmann::json* intent = nullptr;   // the applied configuration
  std::string manager;
  bool force = false;
  std::string api_version;
  std::string now;                    // RFC 3339
  std::string resource, group, name;  // for error messages
};

// The object after applying; 409 Conflict naming the fields and their
// managers when another manager owns a field with a different value.
ApiResult<nlohmann::json> ServerSideApply(const ApplyRequest& request);

// Records a non-apply write by `manager`: the fields it changed become its
// own (operation Update) and stop belonging to other managers.
void RecordUpdate(const nlohmann::json* before, nlohmann::json& after, const std::string& manager,
                  const std::string& api_version, const std::string& now);

}  // namespace septa::kubesim
