// Dotted paths to fields of a request ("tenant", "virtual_cluster.tenant"),
// as the (septa.v1.http) and (septa.v1.auth) options name them, resolved
// once against the descriptor when the API loads and read or written by
// protobuf reflection when a request is bound.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include "common/status.h"
#include "common/text.h"  // Split

namespace septa::apiv1 {

// A resolved path: each step a field, every one but the last a singular
// message field.
struct FieldPath {
  std::string text;  // "virtual_cluster.tenant"
  std::vector<const google::protobuf::FieldDescriptor*> steps;

  const google::protobuf::FieldDescriptor& leaf() const { return *steps.back(); }
};

// `path` in `message`; the last step must be a singular field of one of
// `leaf_types` (any singular type when empty). Fails naming the path.
Result<FieldPath> ResolveFieldPath(const google::protobuf::Descriptor& message, std::string_view path,
                                   const std::vector<google::protobuf::FieldDescriptor::CppType>& leaf_types = {});

// The string at `path` ("" when a message on the way is unset).
std::string GetString(const google::protobuf::Message& message, const FieldPath& path);
// Sets the string at `path`, creating the messages on the way.
void SetString(google::protobuf::Message& message, const FieldPath& path, const std::string& value);
// The message that holds the leaf of `path`, created when unset.
google::protobuf::Message& MutableParent(google::protobuf::Message& message, const FieldPath& path);

}  // namespace septa::apiv1
