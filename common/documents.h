// Documents from outside: request bodies, what an API server or Vault
// answers, configuration files, objects a tenant stored earlier. Every place
// where such bytes become a JSON or YAML tree parses them here, with one set
// of bounds, because the tree is then walked by recursive code (nlohmann's
// copies, comparisons and dump(), the YAML conversions, merges and patches)
// whose stack a deep enough document overflows, and because YAML's aliases
// let a few hundred bytes stand for millions of nodes.
//
// Pure: nlohmann-json (header-only) and yaml-cpp's parser, no I/O.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace septa {

// How many levels of objects and arrays a document may nest. No Kubernetes
// object comes near: the built-in kinds nest at most about 16 levels
// (kube-apiserver's CBOR decoder saw 16 in fuzzed CronJobLists), and a
// CustomResourceDefinition whose schema embeds a whole pod template
// (spec.versions[].schema.openAPIV3Schema, then two levels per field of
// the object it describes) about 40; managedFields add 4. 128 leaves three
// times that. It is also what the stack affords: the deepest recursive walk
// of a tree this deep (nlohmann's dump() under ASan at -O0, ~9.3 KB a level;
// JsonToYaml, ~0.7 KB a level in the release build) takes 1.2 MB, within
// the 8 MiB of every thread of septad (std::thread takes the process's stack
// limit) and the 2 MiB glibc gives threads when that limit is unlimited,
// where 256 levels would take 2.4 MB. yaml-cpp's own parser stops at 500.
inline constexpr std::size_t kMaxDocumentDepth = 128;

// kube-apiserver's bound on a request body since CVE-2019-11253.
inline constexpr std::size_t kMaxDocumentBytes = 3 * 1024 * 1024;

struct DocumentLimits {
  std::size_t max_bytes = kMaxDocumentBytes;
  std::size_t max_depth = kMaxDocumentDepth;
};

// One JSON value, the whole of `text`. Refused (INVALID_ARGUMENT), before
// anything deeper or larger is built: more than max_bytes; a value nested
// deeper than max_depth; malformed JSON (naming the line and column). A
// string that is not UTF-8 and a number beyond a double name the field too
// ("labels.team"; array levels are left out), as a FieldViolation when the
// value is inside an object.
Result<nlohmann::json> ParseJson(std::string_view text, const DocumentLimits& limits = {});

// Whether ParseJson or ParseYaml refused `status` because the text does not
// parse as that format at all (rather than for a bound or a bad value): a
// caller that accepts either format tries the other one only then.
bool IsMalformedDocument(const Status& status);

// The first YAML document of `text`, as yaml-cpp's node graph (which shares
// an anchored node among its aliases). Refused (INVALID_ARGUMENT) before
// the graph is built, naming the line and column: more than max_bytes; a
// document nested deeper than max_depth, counted with its aliases expanded;
// an alias inside the node it names (a cycle: `&a [*a]`); a string that is
// not UTF-8 (JSON cannot hold it; the JSON reader refuses it too); and excessive
// aliasing, by go-yaml's rule (gopkg.in/yaml.v2 decode.go, Kubernetes' fix
// for CVE-2019-11253): past 1,000 nodes with more than 100 from aliases, the
// share that aliases add may not pass 99% (up to 400,000 nodes, falling to
// 10% at 4,000,000). A tree built from the node (base::YamlToJson) is
// therefore as bounded as the JSON that ParseJson returns.
Result<YAML::Node> ParseYaml(std::string_view text, const DocumentLimits& limits = {});

// Every document of a YAML stream (documents separated by "---"), each
// read as ParseYaml reads one; an empty document is a null node. The bounds
// are the stream's: max_bytes for all of its text, the share of nodes from
// aliases over all of its documents (an anchor names a node of its own
// document only), max_depth in each document, and at most max_documents
// documents; all are checked before any graph is built.
Result<std::vector<YAML::Node>> ParseYamlStream(std::string_view text, std::size_t max_documents,
                                                const DocumentLimits& limits = {});

// The depth of `value` (0 for a scalar, 1 for [] or {"a":1}, ...), counted
// without recursion. At most `limit` + 1: nothing below that level is
// visited, so a tree of any depth is measured safely.
std::size_t JsonDepth(const nlohmann::json& value, std::size_t limit = kMaxDocumentDepth);

}  // namespace septa
