// Fuzzes the JSON body decoder of the API (services/apiv1/json.h) with every
// message of septa.v1: the first byte picks the message type, the rest is the
// body. A body that decodes is encoded again, as a handler's answer would be.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include "septa/v1/tenant.pb.h"
#include "septa/v1/token.pb.h"
#include "septa/v1/trust_tier.pb.h"
#include "services/apiv1/json.h"

namespace {

namespace pb = google::protobuf;

// Every top-level message of the API's .proto files, so a message added to
// them is fuzzed without editing this file.
std::vector<const pb::Message*> ApiMessages() {
  std::vector<const pb::Message*> messages;
  for (const pb::FileDescriptor* file :
       {septa::v1::Tenant::descriptor()->file(), septa::v1::CreateTokenRequest::descriptor()->file(),
        septa::v1::GetTrustTierRequest::descriptor()->file()}) {
    for (int i = 0; i < file->message_type_count(); ++i) {
      messages.push_back(pb::MessageFactory::generated_factory()->GetPrototype(file->message_type(i)));
    }
  }
  return messages;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<const pb::Message*> messages = ApiMessages();
  if (size == 0) return 0;
  const pb::Message& prototype = *messages[data[0] % messages.size()];
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  std::unique_ptr<pb::Message> message(prototype.New());
  if (septa::apiv1::ParseJsonBody(body, *message).ok()) (void)septa::apiv1::ToJson(*message);
  return 0;
}
