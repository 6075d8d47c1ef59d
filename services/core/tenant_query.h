// The list filter and page token of ListTenants, parsed into a TenantQuery.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "services/core/store.h"

namespace septa::core {

constexpr int kDefaultPageSize = 50;
constexpr int kMaxPageSize = 500;

// `trust_tier=<tier>` and `labels.<key>=<value>` terms joined by " AND "
// (values may be double-quoted); at most 4096 bytes of UTF-8 without control
// characters. Errors name the field "filter".
Status ParseTenantFilter(std::string_view filter, TenantQuery& query);

// Page tokens are opaque to clients: base64url of the last name returned.
std::string EncodePageToken(std::string_view last_name);
Result<std::string> DecodePageToken(std::string_view token);
// The same for lists keyed otherwise (nodes, pods): `kind` ("node:",
// "pod:") keeps one list's token from being taken by another; the key is
// returned as it was given, for the caller to check.
std::string EncodeKeyPageToken(std::string_view kind, std::string_view last_key);
Result<std::string> DecodeKeyPageToken(std::string_view kind, std::string_view token);

}  // namespace septa::core
