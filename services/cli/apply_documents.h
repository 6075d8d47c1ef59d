// The documents of `septactl diff` and `septactl apply` (docs/gitops.md): a
// kind-tagged YAML stream (JSON accepted) from files, directories and
// stdin, read into the objects of a v1::ApplyRequest, each with the fields
// its document sets. Every problem is found in one pass and told by file,
// document and path, so that nothing half-read is ever sent.
#pragma once

#include <cstddef>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "common/documents.h"
#include "septa/v1/declarative.pb.h"
#include "services/core/apply_limits.h"

namespace septa::cli {

inline constexpr char kApplyApiVersion[] = "septa.dev/v1";

using core::kMaxApplyObjects;  // ApplyRequest's bound on its objects

// All the text one apply reads, over every file: the request it becomes
// must fit gRPC's default message limit (4 MiB).
inline constexpr std::size_t kMaxApplyInputBytes = kMaxDocumentBytes;

// Where a document is: the file as -f named it (or found it in a
// directory; "<stdin>" for -f -) and its 1-based index in that file.
struct DocumentPlace {
  std::string file;
  int document = 0;
  // What it declares, "VirtualCluster acme/train"; empty until known.
  std::string object;

  // "platform/tenants.yaml document 2".
  std::string Text() const;
  // "platform/tenants.yaml#2": ApplyObject.source.
  std::string Source() const;
};

// The settings of the stream's ApplySet document. Its policy is sent
// whole (keys left out are the defaults), so Git says what the set keeps;
// without an ApplySet document the set keeps its own.
struct ApplySetDocument {
  std::string name;
  bool prune = false;
  v1::ApplySetPolicy policy;  // spec.onDrift: report|revert|lock; spec.protect: [VirtualCluster]
  DocumentPlace place;
};

struct DeclaredObjects {
  // In the order read, each with declared_fields and source.
  std::vector<v1::ApplyObject> objects;
  // places[i]: the document of objects[i].
  std::vector<DocumentPlace> places;
  std::optional<ApplySetDocument> apply_set;
  // Every problem found, one line each ("<file> document 2: spec.foo:
  // unknown field"); when there is one, nothing may be sent.
  std::vector<std::string> errors;
};

// `inputs` as -f gives them: a file, a directory (its *.yaml, *.yml and
// *.json files in name order; sub-directories are not read) or "-" for
// `in` (null: there is no standard input to read). A .json file holds one
// JSON document; anything else is a YAML stream. More than
// kMaxApplyInputBytes in all, or more than kMaxApplyObjects objects, is
// refused.
DeclaredObjects ReadDeclaredObjects(const std::vector<std::string>& inputs, std::istream* in);

}  // namespace septa::cli
