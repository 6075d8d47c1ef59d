#include "services/kube/object.h"

// simdjson.h is a 1.2 MB header: only this file includes it.
#include <simdjson.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "common/documents.h"

namespace septa::kube {

using nlohmann::json;

struct DecodedPage {
  simdjson::dom::document doc;  // owns the tape and the unescaped strings
  std::vector<simdjson::dom::element> items;

  static Result<ListPage> Decode(std::string_view body);
  static Object MakeObject(std::shared_ptr<const DecodedPage> page, std::size_t i) {
    return Object(std::move(page), i);
  }
};

namespace {

Status BadList(std::string_view why) {
  return Internal("kube: the server sent a list that is not valid: " + std::string(why));
}

std::string_view StringOr(simdjson::simdjson_result<simdjson::dom::element> e, std::string_view fallback = {}) {
  std::string_view s;
  return e.get(s) == simdjson::SUCCESS ? s : fallback;
}

json ToNlohmann(simdjson::dom::element e) {
  switch (e.type()) {
    case simdjson::dom::element_type::OBJECT: {
      json out(json::value_t::object);
      auto& fields = out.get_ref<json::object_t&>();
      for (auto [key, value] : simdjson::dom::object(e)) fields.insert_or_assign(std::string(key), ToNlohmann(value));
      return out;
    }
    case simdjson::dom::element_type::ARRAY: {
      json out(json::value_t::array);
      auto& elements = out.get_ref<json::array_t&>();
      simdjson::dom::array array(e);
      elements.reserve(array.size());
      for (auto value : array) elements.push_back(ToNlohmann(value));
      return out;
    }
    case simdjson::dom::element_type::STRING: return std::string(std::string_view(e));
    case simdjson::dom::element_type::INT64: return std::int64_t(e);
    case simdjson::dom::element_type::UINT64: return std::uint64_t(e);
    case simdjson::dom::element_type::DOUBLE: return double(e);
    case simdjson::dom::element_type::BOOL: return bool(e);
    case simdjson::dom::element_type::NULL_VALUE: return nullptr;
  }
  return nullptr;
}

// A list nests its items two levels down: {"items": [item, ...]}.
constexpr std::size_t kListEnvelope = 2;
// The deepest a real API server stores (Go's JSON decoder stops at 10,000).
constexpr std::size_t kMaxServedDepth = 10'000;

// How deep `root` nests, counting itself, without recursion; at most
// `limit` + 1 (nothing below is visited).
std::size_t Depth(simdjson::dom::element root, std::size_t limit) {
  std::vector<std::pair<simdjson::dom::element, std::size_t>> pending{{root, 1}};
  std::size_t deepest = 0;
  while (!pending.empty()) {
    const auto [e, depth] = pending.back();
    pending.pop_back();
    deepest = std::max(deepest, depth);
    if (deepest > limit) break;
    const auto push = [&, depth = depth](simdjson::dom::element child) {
      if (child.is_array() || child.is_object()) pending.emplace_back(child, depth + 1);
    };
    if (e.is_array()) {
      for (simdjson::dom::element child : simdjson::dom::array(e)) push(child);
    } else {
      for (auto field : simdjson::dom::object(e)) push(field.value);
    }
  }
  return deepest;
}

// Parses a page with the document bound on its items (common/documents.h),
// and only when an item is deeper, once more with a real server's bound.
simdjson::error_code ParsePage(std::string_view body, std::size_t max_depth, simdjson::dom::document& doc,
                               simdjson::dom::element& root) {
  simdjson::dom::parser parser;
  if (auto error = parser.allocate(body.size(), max_depth)) return error;
  // The body is copied into a padded buffer: simdjson reads past the end.
  return parser.parse_into_document(doc, body.data(), body.size()).get(root);
}

}  // namespace

Result<ListPage> DecodedPage::Decode(std::string_view body) {
  auto page = std::make_shared<DecodedPage>();
  simdjson::dom::element root;
  auto error = ParsePage(body, kMaxDocumentDepth + kListEnvelope, page->doc, root);
  const bool deep = error == simdjson::DEPTH_ERROR;
  if (deep) error = ParsePage(body, kMaxServedDepth + kListEnvelope, page->doc, root);
  if (error) return BadList(simdjson::error_message(error));
  simdjson::dom::object list;
  if (root.get(list)) return BadList("the body is not a JSON object");
  ListPage out;
  out.resource_version = StringOr(list.at_pointer("/metadata/resourceVersion"));
  out.continue_token = StringOr(list.at_pointer("/metadata/continue"));
  simdjson::dom::element items_field;
  if (list["items"].get(items_field) == simdjson::SUCCESS && !items_field.is_null()) {
    simdjson::dom::array items;
    if (items_field.get(items)) return BadList("\"items\" is not an array");
    page->items.reserve(items.size());
    std::size_t index = 0;
    for (simdjson::dom::element item : items) {
      if (!item.is_object()) return BadList("items[" + std::to_string(index) + "] is not an object");
      ++index;
      if (deep && Depth(item, kMaxDocumentDepth) > kMaxDocumentDepth) {
        out.left_out.push_back(std::string(StringOr(item.at_pointer("/metadata/namespace"))) + "/" +
                               std::string(StringOr(item.at_pointer("/metadata/name"))) + ": nests deeper than " +
                               std::to_string(kMaxDocumentDepth) + " levels");
        continue;
      }
      page->items.push_back(item);
    }
  }
  std::shared_ptr<const DecodedPage> shared = std::move(page);
  out.items.reserve(shared->items.size());
  for (std::size_t i = 0; i < shared->items.size(); ++i) out.items.push_back(MakeObject(shared, i));
  return out;
}

Result<ListPage> DecodeListBody(std::string_view body) { return DecodedPage::Decode(body); }

std::string_view Object::Name() const { return StringOr(page_->items[index_].at_pointer("/metadata/name")); }
std::string_view Object::Namespace() const { return StringOr(page_->items[index_].at_pointer("/metadata/namespace")); }
std::string_view Object::ResourceVersion() const {
  return StringOr(page_->items[index_].at_pointer("/metadata/resourceVersion"));
}
std::string_view Object::Uid() const { return StringOr(page_->items[index_].at_pointer("/metadata/uid")); }

std::optional<std::string_view> Object::StringAt(std::string_view pointer) const {
  std::string_view s;
  if (page_->items[index_].at_pointer(pointer).get(s) != simdjson::SUCCESS) return std::nullopt;
  return s;
}

bool Object::Has(std::string_view pointer) const {
  return page_->items[index_].at_pointer(pointer).error() == simdjson::SUCCESS;
}

json Object::ToJson() const { return ToNlohmann(page_->items[index_]); }

std::string Object::Dump() const { return simdjson::minify(page_->items[index_]); }

}  // namespace septa::kube
