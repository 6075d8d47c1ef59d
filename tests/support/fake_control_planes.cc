#include "tests/support/fake_control_planes.h"

namespace septa::core {

Result<ControlPlaneState> FakeControlPlanes::Ensure(const std::string& tenant, const std::string& vcluster) {
  std::lock_guard lock(mu_);
  if (!failures_.empty()) {
    Status failure = failures_.front();
    failures_.pop_front();
    return failure;
  }
  planes_.insert({tenant, vcluster});
  if (!serving_) return ControlPlaneState{false, "", "the API server is starting"};
  return ControlPlaneState{true, EndpointOf(tenant, vcluster), ""};
}

Status FakeControlPlanes::Remove(const std::string& tenant, const std::string& vcluster) {
  std::lock_guard lock(mu_);
  if (!failures_.empty()) {
    Status failure = failures_.front();
    failures_.pop_front();
    return failure;
  }
  planes_.erase({tenant, vcluster});
  return Status::Ok();
}

Result<std::vector<std::pair<std::string, std::string>>> FakeControlPlanes::List() {
  std::lock_guard lock(mu_);
  return std::vector<std::pair<std::string, std::string>>(planes_.begin(), planes_.end());
}

void FakeControlPlanes::FailNext(Status failure, int times) {
  std::lock_guard lock(mu_);
  for (int i = 0; i < times; ++i) failures_.push_back(failure);
}

void FakeControlPlanes::SetServing(bool serving) {
  std::lock_guard lock(mu_);
  serving_ = serving;
}

void FakeControlPlanes::Add(const std::string& tenant, const std::string& vcluster) {
  std::lock_guard lock(mu_);
  planes_.insert({tenant, vcluster});
}

bool FakeControlPlanes::Has(const std::string& tenant, const std::string& vcluster) const {
  std::lock_guard lock(mu_);
  return planes_.contains({tenant, vcluster});
}

std::string FakeControlPlanes::EndpointOf(const std::string& tenant, const std::string& vcluster) {
  return "https://127.0.0.1:6444/vc/" + tenant + "/" + vcluster;
}

Result<std::string> FakeControlPlanes::SyncerKubeconfig(const std::string& tenant, const std::string& vcluster) {
  return Status(Code::kUnimplemented, "fake control plane " + tenant + "/" + vcluster + " serves no API");
}

}  // namespace septa::core
