#include "services/cli/apply_documents.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>

#include "common/duration.h"
#include "services/apiv1/json.h"
#include "services/base/file.h"
#include "services/base/yaml_json.h"

namespace septa::cli {

namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using DocumentTree = nlohmann::json;

constexpr char kStdinName[] = "<stdin>";
constexpr std::string_view kDocumentExtensions[] = {".yaml", ".yml", ".json"};
constexpr char kApplySetKind[] = "ApplySet";

// A stream may hold twice as many documents as an apply takes objects:
// room for its ApplySet and empty documents, and still a bound on empty
// ones, which cost the parser work but not the byte bound much ("---\n").
constexpr std::size_t kMaxStreamDocuments = 2 * kMaxApplyObjects;

// The kinds of object a document declares: its `kind` and the member of
// ApplyObject's oneof that holds it.
struct ResourceKind {
  std::string_view kind;
  std::string_view object_field;
};
constexpr ResourceKind kResourceKinds[] = {{"TrustTier", "trust_tier"},
                                           {"Tenant", "tenant"},
                                           {"VirtualCluster", "virtual_cluster"},
                                           {"ApiToken", "api_token"}};

// What a secret would be called in an ApiToken's spec: refused with the
// reason, before the schema would call it merely unknown.
constexpr std::string_view kSecretKeys[] = {"token", "secret", "value", "secretValue", "secret_value", "password"};

// "a Tenant", "an ApiToken".
std::string Article(std::string_view noun) {
  return !noun.empty() && std::string_view("AEIOU").find(noun.front()) != std::string_view::npos ? "an " : "a ";
}

// The problems of one document, each a line naming it.
class DocumentErrors {
 public:
  DocumentErrors(std::vector<std::string>& lines, const DocumentPlace& place) : lines_(lines), place_(place) {}

  // `path` as the document spells it ("spec.quota.pods"); empty: the document itself.
  void Add(const std::string& path, const std::string& problem) {
    lines_.push_back(place_.Text() + ": " + (path.empty() ? "" : path + ": ") + problem);
    ++count_;
  }
  bool any() const { return count_ > 0; }

 private:
  std::vector<std::string>& lines_;
  const DocumentPlace& place_;
  int count_ = 0;
};

// One input's text, named as errors name it.
struct InputText {
  std::string name;
  std::string text;
  bool json = false;  // a .json file: one JSON document
};

bool IsDocumentFile(const std::filesystem::path& path) {
  const std::string extension = path.extension().string();
  return std::find(std::begin(kDocumentExtensions), std::end(kDocumentExtensions), extension) !=
         std::end(kDocumentExtensions);
}

std::string TooMuchInput(const std::string& name) {
  return name + ": the documents are more than " + std::to_string(kMaxApplyInputBytes) +
         " bytes in all, more than one apply reads: split them into several apply sets";
}

// Reads the texts of -f's inputs in order, within kMaxApplyInputBytes in
// all; what cannot be read is told in `errors`.
class InputReader {
 public:
  InputReader(std::istream* in, std::vector<std::string>& errors) : in_(in), errors_(errors) {}

  void Read(const std::string& input) {
    if (input == "-") return ReadStdin();
    std::error_code error;
    if (!std::filesystem::is_directory(input, error)) return ReadFile(input, input);
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(input, error)) {
      std::error_code type_error;
      if (entry.is_regular_file(type_error) && IsDocumentFile(entry.path())) files.push_back(entry.path().filename());
    }
    if (error) {
      errors_.push_back(input + ": cannot list the directory: " + error.message());
      return;
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) ReadFile((std::filesystem::path(input) / file).string(), input);
  }

  std::vector<InputText>& texts() { return texts_; }

 private:
  void ReadStdin() {
    if (in_ == nullptr || stdin_read_) {
      errors_.push_back(std::string("-f -: ") + (in_ == nullptr ? "there is no standard input" : "given twice"));
      return;
    }
    stdin_read_ = true;
    // One byte past what is left tells a stream that is too long.
    std::string text(Left() + 1, '\0');
    in_->read(text.data(), static_cast<std::streamsize>(text.size()));
    if (in_->bad()) {
      errors_.push_back(std::string(kStdinName) + ": cannot read the standard input");
      return;
    }
    text.resize(static_cast<std::size_t>(in_->gcount()));
    Add({.name = kStdinName, .text = std::move(text)});
  }

  void ReadFile(const std::string& name, const std::string& given) {
    if (read_whole_) return;
    std::error_code error;
    const auto size = std::filesystem::file_size(name, error);
    if (!error && size > Left()) return Refuse(name);
    auto text = base::ReadFile(name);
    if (!text.ok()) {
      errors_.push_back((name == given ? "" : name + ": ") + text.status().message());
      return;
    }
    Add({.name = name, .text = *std::move(text), .json = std::filesystem::path(name).extension() == ".json"});
  }

  void Add(InputText input) {
    if (input.text.size() > Left()) return Refuse(input.name);
    bytes_ += input.text.size();
    texts_.push_back(std::move(input));
  }

  // Past the bound nothing more is read: one error says why.
  void Refuse(const std::string& name) {
    errors_.push_back(TooMuchInput(name));
    read_whole_ = true;
  }

  std::size_t Left() const { return kMaxApplyInputBytes - bytes_; }

  std::istream* in_;
  std::vector<std::string>& errors_;
  std::vector<InputText> texts_;
  std::size_t bytes_ = 0;
  bool stdin_read_ = false;
  bool read_whole_ = false;  // the bound was reached
};

// google.protobuf's messages (Duration, Timestamp, ...) are values in JSON,
// not objects of fields.
bool IsWellKnownType(const Descriptor& type) { return type.file()->name().starts_with("google/protobuf/"); }

// The resource's fields a document writes under metadata: its identity,
// and labels.
bool IsMetadataField(const std::string& name) { return name == "name" || name == "tenant" || name == "labels"; }

// Why `value` cannot be `field`'s JSON at all (a list for a single value, a
// scalar for a message), or "": protobuf's reader judges the rest and
// names the field itself.
std::string ShapeProblem(const FieldDescriptor& field, const DocumentTree& value) {
  if (value.is_null()) return "";
  if (field.is_map()) return value.is_object() ? "" : "must be a mapping";
  if (field.is_repeated()) return value.is_array() ? "" : "must be a list";
  const Descriptor* message = field.message_type();
  if (message != nullptr && !IsWellKnownType(*message)) return value.is_object() ? "" : "must be a mapping";
  if (!value.is_structured()) return "";
  return std::string("must be a single value, not a ") + (value.is_array() ? "list" : "mapping");
}

// Walks `value`, the JSON of a message of `type` at `document_path` (as the
// document spells it: "spec.quota"), refusing keys that name no field, and
// adds to `declared` the paths it sets by .proto names: the leaves of
// messages ("quota.pods"), a map's keys ("labels.team"), a list, a scalar,
// an enum or a well-known type whole ("capacity.mig", "credential_ttl_max");
// an empty or null message or map declares itself ("quota": all of it to
// its default). `declared` null: inside a list, declared whole above.
// Durations may be written as Go's ("1h30m", as the API's other lifetimes
// are), and become protobuf's JSON ("5400s").
void DeclareFields(const Descriptor& type, DocumentTree& value, const std::string& proto_prefix,
                   const std::string& document_path, std::vector<std::string>* declared, DocumentErrors& errors) {
  auto declare = [declared](const std::string& path) {
    if (declared != nullptr) declared->push_back(path);
  };
  std::map<int, std::string> keys;  // field number -> the key that set it
  for (auto& [key, item] : value.items()) {
    const std::string at = document_path + "." + key;
    const FieldDescriptor* field = apiv1::FindFieldByAnyName(type, key);
    if (field == nullptr) {
      errors.Add(at, "unknown field");
      continue;
    }
    if (const auto [first, added] = keys.emplace(field->number(), key); !added) {
      errors.Add(at, "sets " + field->name() + " again (as " + first->second + " too)");
      continue;
    }
    if (const std::string problem = ShapeProblem(*field, item); !problem.empty()) {
      errors.Add(at, problem);
      continue;
    }
    const std::string path = proto_prefix + field->name();
    const Descriptor* message = field->message_type();
    if (field->is_map()) {
      if (item.empty()) declare(path);  // null or {}: the whole map, to empty
      for (const auto& [map_key, unused] : item.items()) declare(path + "." + map_key);
    } else if (field->is_repeated()) {
      declare(path);
      if (message != nullptr && !IsWellKnownType(*message) && item.is_array()) {
        for (std::size_t i = 0; i < item.size(); ++i) {
          if (item[i].is_object()) {
            DeclareFields(*message, item[i], "", at + "[" + std::to_string(i) + "]", nullptr, errors);
          }
        }
      }
    } else if (message != nullptr && !IsWellKnownType(*message) && item.is_object() && !item.empty()) {
      DeclareFields(*message, item, path + ".", at, declared, errors);
    } else {
      declare(path);
      if (message != nullptr && message->full_name() == "google.protobuf.Duration" && item.is_string()) {
        // Anything else ("1.5s") is left to protobuf's reader, which names what is wrong.
        if (auto seconds = ParseDuration(at, item.get<std::string>()); seconds.ok()) {
          item = std::to_string(seconds->count()) + "s";
        }
      }
    }
  }
}

// protobuf's reader names a bad value's field in parentheses, by its
// .proto name ("(quota.pods): invalid value ..."); `path` gets it under
// spec, or metadata where the document wrote it there.
std::string ProtobufProblem(std::string message, const Descriptor& type, std::string& path) {
  const std::size_t open = message.find('(');
  const std::size_t close = message.find("): ", open);
  if (open == std::string::npos || close == std::string::npos) {
    path = "spec";
    return message;
  }
  const std::string field = message.substr(open + 1, close - open - 1);
  const std::string top = field.substr(0, field.find('.'));
  const FieldDescriptor* named = apiv1::FindFieldByAnyName(type, top);
  path = (named != nullptr && IsMetadataField(named->name()) ? "metadata." : "spec.") + field;
  return message.substr(close + 3);
}

// One document's trees, read in order; the objects, the ApplySet and every
// problem go into `out`.
class DocumentReader {
 public:
  explicit DocumentReader(DeclaredObjects& out) : out_(out) {}

  void Read(DocumentTree& document, DocumentPlace place) {
    if (document.is_null()) return;  // an empty document, as kubectl skips it
    DocumentErrors errors(out_.errors, place);
    if (!document.is_object()) return errors.Add("", "must be a mapping of apiVersion, kind, metadata and spec");
    for (const auto& [key, unused] : document.items()) {
      if (key != "apiVersion" && key != "kind" && key != "metadata" && key != "spec") errors.Add(key, "unknown field");
    }
    const DocumentTree api_version = document.value("apiVersion", DocumentTree());
    if (api_version != kApplyApiVersion) {
      errors.Add("apiVersion", std::string("must be ") + kApplyApiVersion +
                                   (api_version.is_null() ? "" : ", not " + api_version.dump()));
    }
    const DocumentTree kind = document.value("kind", DocumentTree());
    const auto resource = std::find_if(std::begin(kResourceKinds), std::end(kResourceKinds),
                                       [&](const ResourceKind& k) { return kind == k.kind; });
    if (resource == std::end(kResourceKinds) && kind != kApplySetKind) {
      errors.Add("kind", "must be TrustTier, Tenant, VirtualCluster, ApiToken or ApplySet" +
                             (kind.is_null() ? std::string() : ", not " + kind.dump()));
    }
    if (errors.any()) return;  // the rest would be read against the wrong schema
    DocumentTree metadata = document.value("metadata", DocumentTree::object());
    DocumentTree spec = document.value("spec", DocumentTree::object());
    if (!metadata.is_object()) return errors.Add("metadata", "must be a mapping with name");
    if (spec.is_null()) spec = DocumentTree::object();
    if (!spec.is_object()) return errors.Add("spec", "must be a mapping of the object's fields");
    if (resource == std::end(kResourceKinds)) return ReadApplySet(metadata, spec, place, errors);
    ReadObject(*resource, metadata, spec, place, errors);
  }

 private:
  // `errors` tell `place`.
  void ReadApplySet(const DocumentTree& metadata, const DocumentTree& spec, const DocumentPlace& place,
                    DocumentErrors& errors) {
    ApplySetDocument set;
    set.place = place;
    for (const auto& [key, value] : metadata.items()) {
      if (key != "name") {
        errors.Add("metadata." + key, "unknown field");
      } else if (!value.is_string() || value.get<std::string>().empty()) {
        errors.Add("metadata.name", "must be a name, not " + value.dump());
      } else {
        set.name = value.get<std::string>();
      }
    }
    if (!metadata.contains("name")) errors.Add("metadata.name", "missing: the apply set's name");
    for (const auto& [key, value] : spec.items()) {
      if (key == "prune") {
        if (value.is_boolean()) {
          set.prune = value.get<bool>();
        } else {
          errors.Add("spec.prune", "must be true or false");
        }
      } else if (key == "onDrift" || key == "on_drift") {
        static constexpr std::pair<std::string_view, v1::ApplySetPolicy::DriftPolicy> kPolicies[] = {
            {"report", v1::ApplySetPolicy::REPORT},
            {"revert", v1::ApplySetPolicy::REVERT},
            {"lock", v1::ApplySetPolicy::LOCK}};
        // Compared as a string first: clang 14 captures no structured binding in a lambda.
        const std::string text = value.is_string() ? value.get<std::string>() : std::string();
        const auto* found = std::find_if(std::begin(kPolicies), std::end(kPolicies),
                                         [&text](const auto& p) { return !text.empty() && text == p.first; });
        if (found == std::end(kPolicies)) {
          errors.Add("spec." + key, "must be report, revert or lock, not " + value.dump());
        } else {
          set.policy.set_on_drift(found->second);
        }
      } else if (key == "protect") {  // beyond trust tiers and tenants, which always are
        if (!value.is_array()) errors.Add("spec.protect", "must be a list of kinds, as [VirtualCluster]");
        for (std::size_t i = 0; value.is_array() && i < value.size(); ++i) {
          if (!value[i].is_string()) {
            errors.Add("spec.protect[" + std::to_string(i) + "]", "must be a kind, not " + value[i].dump());
          } else {
            set.policy.add_protected_kinds(value[i].get<std::string>());
          }
        }
      } else {
        errors.Add("spec." + key, "unknown field");
      }
    }
    if (out_.apply_set) {
      return errors.Add(
          "", "a second ApplySet document (the first is " + out_.apply_set->place.Text() + "): give one per apply");
    }
    // Kept with a bad spec too (the error is told, nothing is sent): the
    // name is known, and missing it would be a second, wrong error.
    if (!set.name.empty()) out_.apply_set = std::move(set);
  }

  // metadata: name, and tenant and labels where the kind has those fields;
  // copied into `resource` (labels declared per key). The object's
  // identity ("acme/train"), or empty when it has none.
  std::string ReadMetadata(const Descriptor& type, std::string_view kind, const DocumentTree& metadata,
                           DocumentTree& resource, std::vector<std::string>& declared, DocumentErrors& errors) {
    const bool has_tenant = type.FindFieldByName("tenant") != nullptr;
    for (const auto& [key, value] : metadata.items()) {
      const std::string at = "metadata." + key;
      const FieldDescriptor* field = IsMetadataField(key) ? type.FindFieldByName(key) : nullptr;
      if (field == nullptr) {
        errors.Add(at, key == "tenant" || key == "labels" ? Article(kind) + std::string(kind) + " has no " + key
                                                          : "unknown field");
      } else if (key == "labels") {
        if (!value.is_object()) {
          errors.Add(at, "must be a mapping of label keys to values");
          continue;
        }
        for (const auto& [label, text] : value.items()) {
          if (!text.is_string()) errors.Add(at + "." + label, "must be a string (quote it: \"" + text.dump() + "\")");
          declared.push_back("labels." + label);
        }
        if (value.empty()) declared.push_back("labels");
        resource["labels"] = value;
      } else if (!value.is_string() || value.get<std::string>().empty()) {
        errors.Add(at, "must be a name, not " + value.dump());
      } else {
        resource[key] = value;
      }
    }
    if (!metadata.contains("name")) errors.Add("metadata.name", "missing");
    if (has_tenant && !metadata.contains("tenant")) errors.Add("metadata.tenant", "missing: the owning tenant");
    if (!resource.contains("name") || (has_tenant && !resource.contains("tenant"))) return "";
    return has_tenant ? resource["tenant"].get<std::string>() + "/" + resource["name"].get<std::string>()
                      : resource["name"].get<std::string>();
  }

  void ReadObject(const ResourceKind& resource_kind, const DocumentTree& metadata, DocumentTree& spec,
                  const DocumentPlace& place, DocumentErrors& errors) {
    v1::ApplyObject object;
    const FieldDescriptor* member =
        v1::ApplyObject::descriptor()->FindFieldByName(std::string(resource_kind.object_field));
    google::protobuf::Message& message = *object.GetReflection()->MutableMessage(&object, member);
    const Descriptor& type = *message.GetDescriptor();

    DocumentTree resource = DocumentTree::object();
    std::vector<std::string> declared;
    const std::string identity = ReadMetadata(type, resource_kind.kind, metadata, resource, declared, errors);
    DocumentPlace declaring = place;
    if (!identity.empty()) {
      declaring.object = std::string(resource_kind.kind) + " " + identity;
      const auto [first, added] = declared_at_.emplace(declaring.object, declaring);
      if (!added) errors.Add("", declaring.object + " is declared twice (also in " + first->second.Text() + ")");
    }
    // Identity and labels are metadata: refused in spec, where they would
    // be read but not declared. A token's secret is never declared.
    for (const auto& [key, unused] : spec.items()) {
      if (resource_kind.kind == "ApiToken" &&
          std::find(std::begin(kSecretKeys), std::end(kSecretKeys), key) != std::end(kSecretKeys)) {
        errors.Add("spec." + key,
                   "an ApiToken declares no secret: septad mints the token and writes it only to deliverTo "
                   "(a secret in Git is a leaked secret)");
        continue;
      }
      const FieldDescriptor* field = apiv1::FindFieldByAnyName(type, key);
      if (field != nullptr && IsMetadataField(field->name())) {
        errors.Add("spec." + key, "goes in metadata." + field->name());
      }
    }
    if (errors.any()) return;
    DeclareFields(type, spec, "", "spec", &declared, errors);
    if (errors.any()) return;
    if (declared.empty()) {
      // An empty declared_fields would stand for every writable field.
      return errors.Add("spec", "declares no field: give the fields the apply set is to own");
    }
    for (auto& [key, value] : spec.items()) resource[key] = std::move(value);

    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    const auto parsed = google::protobuf::util::JsonStringToMessage(resource.dump(), &message, options);
    if (!parsed.ok()) {
      std::string path;
      const std::string problem = ProtobufProblem(std::string(parsed.message()), type, path);
      return errors.Add(path, problem);
    }
    for (auto& path : declared) object.mutable_declared_fields()->add_paths(std::move(path));
    object.set_source(declaring.Source());
    out_.objects.push_back(std::move(object));
    out_.places.push_back(std::move(declaring));
  }

  DeclaredObjects& out_;
  std::map<std::string, DocumentPlace> declared_at_;  // "Tenant acme" -> where it was first declared
};

}  // namespace

std::string DocumentPlace::Text() const { return file + " document " + std::to_string(document); }

std::string DocumentPlace::Source() const { return file + "#" + std::to_string(document); }

DeclaredObjects ReadDeclaredObjects(const std::vector<std::string>& inputs, std::istream* in) {
  DeclaredObjects out;
  InputReader reader(in, out.errors);
  for (const auto& input : inputs) reader.Read(input);
  DocumentReader documents(out);
  for (InputText& input : reader.texts()) {
    std::vector<DocumentTree> trees;
    if (input.json) {
      auto tree = ParseJson(input.text, {.max_bytes = kMaxApplyInputBytes});
      if (!tree.ok()) {
        out.errors.push_back(input.name + ": " + tree.status().message());
        continue;
      }
      trees.push_back(*std::move(tree));
    } else {
      auto nodes = ParseYamlStream(input.text, kMaxStreamDocuments, {.max_bytes = kMaxApplyInputBytes});
      if (!nodes.ok()) {
        out.errors.push_back(input.name + ": " + nodes.status().message());
        continue;
      }
      for (std::size_t i = 0; i < nodes->size(); ++i) {
        try {
          trees.push_back(base::YamlToJson((*nodes)[i]));
        } catch (const YAML::Exception&) {  // a key that is a list or a mapping: JSON has none
          out.errors.push_back(input.name + " document " + std::to_string(i + 1) +
                               ": a mapping's key must be a single value");
          trees.emplace_back();  // null, skipped: the documents after it keep their numbers
        }
      }
    }
    for (std::size_t i = 0; i < trees.size(); ++i) {
      DocumentPlace place;
      place.file = input.name;
      place.document = static_cast<int>(i + 1);
      documents.Read(trees[i], std::move(place));
    }
  }
  if (out.objects.size() > kMaxApplyObjects) {
    out.errors.push_back(std::to_string(out.objects.size()) + " objects, more than the " +
                         std::to_string(kMaxApplyObjects) + " one apply takes: split them into several apply sets");
  }
  return out;
}

}  // namespace septa::cli
