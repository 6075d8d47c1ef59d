// ControlPlanes in memory, for the provisioner's tests: Ensure serves at
// once (or, with `serving` false, reports it is starting), failures can be
// injected, and what exists can be read back.
#pragma once

#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "services/core/control_plane.h"

namespace septa::core {

class FakeControlPlanes final : public ControlPlanes {
 public:
  Result<ControlPlaneState> Ensure(const std::string& tenant, const std::string& vcluster) override;
  Status Remove(const std::string& tenant, const std::string& vcluster) override;
  Result<std::vector<std::pair<std::string, std::string>>> List() override;
  Result<std::string> SyncerKubeconfig(const std::string& tenant, const std::string& vcluster) override;

  // The next `times` calls of Ensure or Remove return `failure`.
  void FailNext(Status failure, int times = 1);
  void SetServing(bool serving);
  // Brings one into being without a provisioner (an orphan after a crash).
  void Add(const std::string& tenant, const std::string& vcluster);
  bool Has(const std::string& tenant, const std::string& vcluster) const;
  static std::string EndpointOf(const std::string& tenant, const std::string& vcluster);

 private:
  mutable std::mutex mu_;
  std::set<std::pair<std::string, std::string>> planes_;
  std::deque<Status> failures_;
  bool serving_ = true;
};

}  // namespace septa::core
