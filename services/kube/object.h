// Kubernetes objects as a list returns them: decoded once into a compact,
// read-only form.
//
// Why not nlohmann::json here: a generic mutable tree costs about 120 heap
// blocks per pod, and allocating and then freeing 1.2 million of them made
// listing 10,000 pods take ~300 ms, most of it inside malloc and free
// (docs/BENCHMARKS.md). simdjson parses a whole page into one tape that the
// page's objects share, so a list costs a handful of allocations per page and
// any field is still one lookup away. ToJson() gives a mutable copy to edit.
#pragma once

#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace septa::kube {

struct DecodedPage;  // the parsed document of one list reply (object.cc)

class Object {
 public:
  // metadata.name, metadata.namespace, ...; empty when absent.
  std::string_view Name() const;
  std::string_view Namespace() const;
  std::string_view ResourceVersion() const;
  std::string_view Uid() const;
  // The string at an RFC 6901 JSON pointer such as "/spec/nodeName"; nullopt
  // when there is nothing there or it is not a string.
  std::optional<std::string_view> StringAt(std::string_view pointer) const;
  bool Has(std::string_view pointer) const;

  nlohmann::json ToJson() const;  // a mutable deep copy
  std::string Dump() const;       // minified JSON text

 private:
  friend struct DecodedPage;
  Object(std::shared_ptr<const DecodedPage> page, std::size_t index) : page_(std::move(page)), index_(index) {}

  // Objects of one page share its document: holding one keeps the page alive.
  std::shared_ptr<const DecodedPage> page_;
  std::size_t index_;
};

struct ListPage {
  std::vector<Object> items;
  std::string resource_version;
  std::string continue_token;
  // Items left out of `items`, each "<namespace>/<name>: <why>": nested
  // deeper than the document bound (common/documents.h), which a real API
  // server does not enforce (it stores up to 10,000 levels). The rest of the
  // list is served as usual, so that one such object does not stop a list.
  std::vector<std::string> left_out;
};

// Decodes a list reply ({"metadata": {...}, "items": [...]}). The whole body
// is validated; an error says what is wrong with it.
Result<ListPage> DecodeListBody(std::string_view body);

}  // namespace septa::kube
