// Fuzzes the virtual API's body path (issue 28, C1 and H1): a request body
// as kubesim reads it (kubesim::ParseJsonOrYaml, JSON then YAML within the
// document bounds of common/documents.h), then what the server does with a
// body it accepted, every walk of it recursive: validation as every
// built-in kind, the three patch flavours against a stored object, the
// storage's depth check, the text it journals, and the YAML a client reads.
// The first byte picks the kind and the patch; the rest is the body.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "common/documents.h"
#include "services/base/yaml_json.h"
#include "services/kubesim/objects.h"
#include "services/kubesim/patches.h"
#include "services/kubesim/resources.h"

namespace {

using nlohmann::json;
using septa::kubesim::ApiResult;

// An object as stored: a pod with the lists a strategic merge keys.
const json& Stored() {
  static const json* const stored = new json(json::parse(R"({
    "apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default","labels":{"a":"b"}},
    "spec":{"containers":[{"name":"main","image":"i","env":[{"name":"A","value":"1"}],
            "ports":[{"containerPort":80}]}],"volumes":[{"name":"v","emptyDir":{}}]}})"));
  return *stored;
}

// What the server does after it has a tree it accepted: each of these
// copies, compares or serializes it recursively.
void Use(const json& object) {
  (void)object.dump();
  (void)(object == Stored());
  (void)septa::base::JsonToYaml(nlohmann::ordered_json(object));
  (void)septa::JsonDepth(object);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<std::shared_ptr<const septa::kubesim::ResourceType>> types =
      septa::kubesim::ResourceRegistry().All();
  if (size == 0) return 0;
  const septa::kubesim::ResourceType& type = *types[data[0] % types.size()];
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  ApiResult<json> parsed = septa::kubesim::ParseJsonOrYaml(body);
  if (!parsed.ok()) return 0;
  const json& sent = *parsed;
  Use(sent);
  if (sent.is_object()) {
    // The server answers a 500 for what its validation or a patch throws on
    // (a field of the wrong type) and keeps serving, as here: a crash, a
    // hang or a runaway allocation is what this fuzzer looks for.
    try {
      (void)septa::kubesim::Validate(type, sent);
      (void)septa::kubesim::UnknownFields(type, sent);
    } catch (const nlohmann::json::exception&) {
    }
  }
  try {
    ApiResult<json> patched = json();
    switch ((data[0] / types.size()) % 3) {
      case 0: patched = septa::kubesim::ApplyMergePatch(Stored(), sent); break;
      case 1: patched = septa::kubesim::ApplyStrategicMergePatch(Stored(), sent); break;
      default: patched = septa::kubesim::ApplyJsonPatch(Stored(), sent); break;
    }
    if (patched.ok()) Use(*patched);
  } catch (const nlohmann::json::exception&) {  // as for validation: the server's 500
  }
  return 0;
}
