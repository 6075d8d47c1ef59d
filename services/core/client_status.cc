#include "services/core/client_status.h"

namespace septa::core {

bool IsServerFault(Code code) {
  switch (code) {
    case Code::kUnknown:
    case Code::kInternal:
    case Code::kDataLoss:
    case Code::kUnavailable:
    case Code::kDeadlineExceeded: return true;
    default: return false;
  }
}

Status ClientVisible(const Status& status) {
  switch (status.code()) {
    case Code::kUnavailable: return Status(status.code(), "service temporarily unavailable; retry later");
    case Code::kDeadlineExceeded: return Status(status.code(), "the server did not finish in time; retry later");
    case Code::kUnknown:
    case Code::kInternal:
    case Code::kDataLoss:
      return Status(status.code(), "internal error; operators find the details in the server log under the request id");
    default: return status;
  }
}

}  // namespace septa::core
