// KV version 2, enough for policy tests: data/<path> write and read (with
// versions), metadata/<path> list and delete.
#include "services/vaultsim/backend.h"

namespace septa::vaultsim {

ApiReply Backend::Kv(const ApiRequest& request, const std::string& mount) {
  const auto& s = request.segments;
  if (s.size() < 2 || (s[1] != "data" && s[1] != "metadata")) {
    return Error(404, "no handler for route \"" + request.path + "\"");
  }
  std::string path;
  for (std::size_t i = 2; i < s.size(); ++i) path += (path.empty() ? "" : "/") + s[i];
  auto& secrets = kv_[mount];
  auto it = secrets.find(path);
  TimePoint now = clock_.Now();
  auto metadata = [&](const KvSecret& secret, std::size_t version) {
    return json{{"created_time", FormatRfc3339(secret.versions[version - 1].created)},
                {"custom_metadata", nullptr},
                {"deletion_time", ""},
                {"destroyed", false},
                {"version", version}};
  };
  if (s[1] == "data") {
    if (path.empty()) return Error(404, "");
    if (request.op == Operation::kWrite) {
      if (!request.body.contains("data") || !request.body["data"].is_object()) {
        return Error(400, "no data provided");
      }
      KvSecret& secret = secrets[path];
      secret.versions.push_back({request.body["data"], now});
      return Ok(metadata(secret, secret.versions.size()));
    }
    if (request.op == Operation::kRead) {
      if (it == secrets.end()) return Error(404, "");
      std::size_t version = it->second.versions.size();
      if (auto v = request.query.find("version"); v != request.query.end() && v->second != "0") {
        try {
          version = std::stoul(v->second);
        } catch (const std::exception&) {
          return Error(400, "error converting input " + v->second + " for field \"version\"");
        }
        if (version == 0 || version > it->second.versions.size()) return Error(404, "");
      }
      return Ok(json{{"data", it->second.versions[version - 1].data}, {"metadata", metadata(it->second, version)}});
    }
    if (request.op == Operation::kDelete) {
      secrets.erase(path);
      return NoContent();
    }
    return Error(405, "unsupported operation");
  }
  if (request.op == Operation::kList) {
    std::string prefix = path.empty() ? "" : path + "/";
    json keys = json::array();
    std::string last;
    for (const auto& [key, secret] : secrets) {
      if (key.rfind(prefix, 0) != 0) continue;
      std::string tail = key.substr(prefix.size());
      auto slash = tail.find('/');
      std::string entry = slash == std::string::npos ? tail : tail.substr(0, slash + 1);
      if (entry != last) keys.push_back(entry);
      last = entry;
    }
    return keys.empty() ? Error(404, "") : Ok(json{{"keys", keys}});
  }
  if (request.op == Operation::kDelete) {
    secrets.erase(path);
    return NoContent();
  }
  if (request.op == Operation::kRead) {
    if (it == secrets.end()) return Error(404, "");
    return Ok(json{{"current_version", it->second.versions.size()},
                   {"created_time", FormatRfc3339(it->second.versions.front().created)},
                   {"max_versions", 0}});
  }
  return Error(405, "unsupported operation");
}

}  // namespace septa::vaultsim
