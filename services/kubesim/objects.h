// Object-level rules of the API server: server-set metadata, validation of
// names and of the fields kubesim checks, and the Table form kubectl prints.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/clock.h"
#include "services/kubesim/api_error.h"
#include "services/kubesim/resources.h"

namespace septa::kubesim {

ApiResult<std::string> NewUid(RandomSource& random);
// Five random lowercase alphanumerics, as generateName appends.
ApiResult<std::string> RandomSuffix(RandomSource& random);

// Field causes for a bad object of `type` (empty when it is valid).
std::vector<StatusCause> Validate(const ResourceType& type, const nlohmann::json& object);

// Fields of `object` the API does not declare, as paths ("metdata",
// "metadata.lables"), for fieldValidation=Strict. Checked: the top level of
// every built-in kind and metadata of every kind; custom resources' own
// fields and deeper levels are not (kubesim has no schemas for them).
std::vector<std::string> UnknownFields(const ResourceType& type, const nlohmann::json& object);

// True when anything outside metadata and status differs (generation bumps).
bool SpecChanged(const nlohmann::json& before, const nlohmann::json& after);

// kubectl's `get` output: a meta.k8s.io/v1 Table of the objects.
nlohmann::json ToTable(const ResourceType& type, const std::vector<const nlohmann::json*>& objects,
                       const std::string& resource_version, TimePoint now, bool include_object);

}  // namespace septa::kubesim
