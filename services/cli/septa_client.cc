#include "services/cli/septa_client.h"

namespace septa::cli {

SeptaClient::SeptaClient(const std::string& server, std::string token, std::chrono::milliseconds timeout)
    : token_(std::move(token)),
      timeout_(timeout),
      channel_(grpc::CreateChannel(server, grpc::InsecureChannelCredentials())),
      tenants_(v1::TenantService::NewStub(channel_)),
      tiers_(v1::TrustTierService::NewStub(channel_)),
      tokens_(v1::TokenService::NewStub(channel_)) {}

void SeptaClient::Prepare(grpc::ClientContext& context) const {
  context.set_deadline(std::chrono::system_clock::now() + timeout_);
  context.AddMetadata("authorization", "Bearer " + token_);
}

}  // namespace septa::cli
