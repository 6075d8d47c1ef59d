#include "services/apiv1/field_path.h"

#include <algorithm>

namespace septa::apiv1 {

namespace pb = google::protobuf;

Result<FieldPath> ResolveFieldPath(const pb::Descriptor& message, std::string_view path,
                                   const std::vector<pb::FieldDescriptor::CppType>& leaf_types) {
  FieldPath out{std::string(path), {}};
  const pb::Descriptor* at = &message;
  for (const std::string& name : Split(path, '.')) {
    if (at == nullptr) return InvalidArgument("\"" + out.text + "\" goes through a non-message field");
    const pb::FieldDescriptor* field = at->FindFieldByName(name);
    if (field == nullptr) {
      return InvalidArgument("\"" + out.text + "\" names no field of " + std::string(message.full_name()));
    }
    out.steps.push_back(field);
    at = field->is_repeated() ? nullptr : field->message_type();
  }
  const pb::FieldDescriptor& leaf = out.leaf();
  if (leaf.is_repeated() || (!leaf_types.empty() && leaf.message_type() != nullptr)) {
    return InvalidArgument("\"" + out.text + "\" must be a singular scalar field");
  }
  if (!leaf_types.empty() && std::ranges::find(leaf_types, leaf.cpp_type()) == leaf_types.end()) {
    return InvalidArgument("\"" + out.text + "\" must be a " +
                           std::string(pb::FieldDescriptor::CppTypeName(leaf_types[0])) + " field");
  }
  return out;
}

namespace {

const pb::Message* ParentOrNull(const pb::Message& message, const FieldPath& path) {
  const pb::Message* at = &message;
  for (std::size_t i = 0; i + 1 < path.steps.size(); ++i) {
    if (!at->GetReflection()->HasField(*at, path.steps[i])) return nullptr;
    at = &at->GetReflection()->GetMessage(*at, path.steps[i]);
  }
  return at;
}

}  // namespace

pb::Message& MutableParent(pb::Message& message, const FieldPath& path) {
  pb::Message* at = &message;
  for (std::size_t i = 0; i + 1 < path.steps.size(); ++i) {
    at = at->GetReflection()->MutableMessage(at, path.steps[i]);
  }
  return *at;
}

std::string GetString(const pb::Message& message, const FieldPath& path) {
  const pb::Message* parent = ParentOrNull(message, path);
  return parent == nullptr ? std::string() : parent->GetReflection()->GetString(*parent, &path.leaf());
}

void SetString(pb::Message& message, const FieldPath& path, const std::string& value) {
  pb::Message& parent = MutableParent(message, path);
  parent.GetReflection()->SetString(&parent, &path.leaf(), value);
}

}  // namespace septa::apiv1
