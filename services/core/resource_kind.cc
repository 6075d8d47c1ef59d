#include "services/core/resource_kind.h"

#include <algorithm>

#include "common/text.h"

namespace septa::core {
namespace {

// `inner` is `outer` or one of its members ("quota.pods" in "quota").
bool Within(std::string_view inner, std::string_view outer) {
  return inner == outer || (inner.size() > outer.size() && inner.starts_with(outer) && inner[outer.size()] == '.');
}

}  // namespace

bool DeclaredFields::Covers(std::string_view path) const {
  if (all()) return true;
  for (const std::string& declared : paths_) {
    if (Within(path, declared)) return true;
  }
  return false;
}

Result<DeclaredFields> CheckDeclaredPaths(const DeclaredFields& declared, std::string_view kind,
                                          std::initializer_list<std::string_view> writable) {
  std::vector<std::string> folded;
  for (const std::string& path : declared.paths()) {
    std::string as_written = path;
    const bool known = std::any_of(writable.begin(), writable.end(), [&](std::string_view field) {
      if (field.ends_with(".*")) {  // a map: the map itself or one key
        const std::string_view map = field.substr(0, field.size() - 2);
        return path == map || (path.size() > map.size() + 1 && Within(path, map));
      }
      if (Within(path, field) && path != field) {  // inside a field written whole
        as_written = std::string(field);
        return true;
      }
      return Within(field, path);  // the field, or a parent of it
    });
    if (!known) {
      std::string fields;
      for (std::string_view field : writable) fields += (fields.empty() ? "" : ", ") + std::string(field);
      return InvalidField(EscapeControlCharacters(path),
                          "is not a writable field of a " + std::string(kind) + "; writable: " + fields);
    }
    if (std::find(folded.begin(), folded.end(), as_written) == folded.end()) folded.push_back(std::move(as_written));
  }
  return DeclaredFields(std::move(folded));
}

void ForgetAll(Authenticator& authenticator, const std::vector<Revocation>& forget) {
  for (const Revocation& r : forget) authenticator.Forget(r);
}

void CompareField(std::vector<FieldChange>& changes, const DeclaredFields& declared, std::string_view path,
                  const std::string& live, const std::string& desired) {
  if (live != desired && declared.Covers(path)) changes.push_back({std::string(path), live, desired});
}

void CompareField(std::vector<FieldChange>& changes, const DeclaredFields& declared, std::string_view path,
                  const std::optional<std::int64_t>& live, const std::optional<std::int64_t>& desired) {
  auto text = [](const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : std::string(); };
  CompareField(changes, declared, path, text(live), text(desired));
}

void CompareApiLimits(std::vector<FieldChange>& changes, const DeclaredFields& declared, const tenancy::ApiLimits& live,
                      const tenancy::ApiLimits& desired) {
  CompareField(changes, declared, "api_limits.objects", live.objects, desired.objects);
  CompareField(changes, declared, "api_limits.object_bytes", live.object_bytes, desired.object_bytes);
  CompareField(changes, declared, "api_limits.watches", live.watches, desired.watches);
  CompareField(changes, declared, "api_limits.requests_in_flight", live.requests_in_flight, desired.requests_in_flight);
}

}  // namespace septa::core
