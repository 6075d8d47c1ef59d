// The kinds kubesim serves: built-in Kubernetes resources plus those that
// CustomResourceDefinitions add at run time.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace septa::kubesim {

struct ResourceType {
  std::string group;                  // "" for the core group
  std::vector<std::string> versions;  // served versions, preferred (storage) first
  std::string resource;               // plural, "pods"
  std::string singular;               // "pod"
  std::string kind;                   // "Pod"
  bool namespaced = true;
  std::vector<std::string> short_names;
  bool has_status = false;  // a /status subresource; the main resource ignores status
  bool from_crd = false;

  std::string key() const { return group.empty() ? resource : resource + "." + group; }
  std::string group_version(const std::string& version) const {
    return group.empty() ? version : group + "/" + version;
  }
  std::string list_kind() const { return kind + "List"; }
  bool serves(const std::string& version) const;
};

// TokenReview: created and answered, never stored (token_request.cc).
inline bool IsTokenReview(const ResourceType& type) {
  return type.group == "authentication.k8s.io" && type.resource == "tokenreviews";
}

// Thread-safe; CRDs register and unregister while requests run.
class ResourceRegistry {
 public:
  ResourceRegistry();  // the built-in kinds

  std::shared_ptr<const ResourceType> Find(const std::string& group, const std::string& version,
                                           const std::string& resource) const;
  std::shared_ptr<const ResourceType> FindByKind(const std::string& group, const std::string& kind) const;
  // Every type, sorted by group then resource.
  std::vector<std::shared_ptr<const ResourceType>> All() const;

  void Register(ResourceType type);
  void Unregister(const std::string& group, const std::string& resource);

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const ResourceType>> by_key_;
};

}  // namespace septa::kubesim
