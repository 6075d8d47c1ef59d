// septad's gRPC surface: every service of API v1 (services/apiv1/api.h),
// served from its descriptors, plus server reflection and the standard
// health service.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "services/core/use_cases.h"

namespace grpc {
class Server;
}
namespace prometheus {
class Registry;
}

namespace septa::apiv1 {
class Api;
}

namespace septa::grpcapi {

using core::UseCases;

class GrpcServer {
 public:
  struct TlsKeyPair {
    std::string certificate_pem;  // leaf first, then intermediates
    std::string private_key_pem;
  };
  // Serves `api` on `address` ("127.0.0.1:0" picks a free port), with TLS
  // when `tls` is given; counts calls and their latency in `metrics`.
  static Result<std::unique_ptr<GrpcServer>> Start(const std::string& address, std::shared_ptr<const apiv1::Api> api,
                                                   UseCases use_cases, prometheus::Registry& metrics,
                                                   const TlsKeyPair* tls = nullptr);
  ~GrpcServer();

  int port() const { return port_; }
  // Marks the server NOT_SERVING, lets in-flight calls finish (up to
  // `deadline`), then stops.
  void Shutdown(std::chrono::milliseconds deadline);

 private:
  struct Services;
  GrpcServer() = default;
  std::unique_ptr<Services> services_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace septa::grpcapi
