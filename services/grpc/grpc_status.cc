#include "services/grpc/grpc_status.h"

#include <spdlog/spdlog.h>

#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "services/core/client_status.h"

namespace septa::grpcapi {

grpc::Status ToGrpcStatus(const Status& original, const std::string& request_id) {
  if (original.ok()) return grpc::Status::OK;
  if (core::IsServerFault(original.code())) {
    spdlog::error("grpc request_id={} code={} detail: {}", request_id, CodeName(original.code()), original.message());
  }
  const Status status = core::ClientVisible(original);
  google::rpc::Status details;
  details.set_code(static_cast<int>(status.code()));
  details.set_message(status.message());
  if (!status.violations().empty()) {
    google::rpc::BadRequest bad_request;
    for (const auto& v : status.violations()) {
      auto* fv = bad_request.add_field_violations();
      fv->set_field(v.field);
      fv->set_description(v.description);
    }
    details.add_details()->PackFrom(bad_request);
  }
  google::rpc::RequestInfo info;
  info.set_request_id(request_id);
  details.add_details()->PackFrom(info);
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), status.message(), details.SerializeAsString());
}

}  // namespace septa::grpcapi
