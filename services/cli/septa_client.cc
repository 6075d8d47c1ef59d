#include "services/cli/septa_client.h"

namespace septa::cli {

namespace {

std::shared_ptr<grpc::ChannelCredentials> CredentialsFor(const SeptaClient::Security& security) {
  if (!security.tls) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = security.root_ca_pem;
  return grpc::SslCredentials(options);
}

// septad names the surface of septactl's calls by it (audit records,
// drift reports): "septactl/1 grpc-c++/...".
grpc::ChannelArguments ChannelArgs() {
  grpc::ChannelArguments args;
  args.SetUserAgentPrefix("septactl/1");
  return args;
}

}  // namespace

SeptaClient::SeptaClient(const std::string& server, std::string token, std::chrono::milliseconds timeout,
                         const Security& security)
    : token_(std::move(token)),
      timeout_(timeout),
      channel_(grpc::CreateCustomChannel(server, CredentialsFor(security), ChannelArgs())),
      tenants_(v1::TenantService::NewStub(channel_)),
      members_(v1::TenantMemberService::NewStub(channel_)),
      tiers_(v1::TrustTierService::NewStub(channel_)),
      tokens_(v1::TokenService::NewStub(channel_)),
      inventory_(v1::InventoryService::NewStub(channel_)),
      usage_(v1::UsageService::NewStub(channel_)),
      vclusters_(v1::VirtualClusterService::NewStub(channel_)),
      declarative_(v1::DeclarativeService::NewStub(channel_)) {}

void SeptaClient::Prepare(grpc::ClientContext& context) const {
  context.set_deadline(std::chrono::system_clock::now() + timeout_);
  context.AddMetadata("authorization", "Bearer " + token_);
  if (!break_glass_.empty()) context.AddMetadata("septa-break-glass", break_glass_);
  if (!tenant_.empty()) context.AddMetadata("septa-tenant", tenant_);
}

}  // namespace septa::cli
