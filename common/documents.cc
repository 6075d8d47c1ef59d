#include "common/documents.h"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/text.h"

namespace septa {

using nlohmann::json;

namespace {

// How a syntax error's message starts (IsMalformedDocument).
constexpr std::string_view kMalformedJson = "malformed JSON";
constexpr std::string_view kMalformedYaml = "malformed YAML";

Status TooLarge(std::size_t bytes, std::size_t max_bytes) {
  return InvalidArgument("the document is " + std::to_string(bytes) + " bytes, more than " + std::to_string(max_bytes));
}

Status TooDeep(std::size_t max_depth, const std::string& where = "") {
  return InvalidArgument("the document nests deeper than " + std::to_string(max_depth) + " levels" + where);
}

// "line L, column C" (1-based) of a byte offset.
std::string Position(std::string_view text, std::size_t byte) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// Builds the tree as nlohmann's own SAX DOM parser does, but refuses the
// first level past the limit, so nothing deeper is ever allocated, and keeps
// the keys that lead to the current value to name a bad one.
class JsonBuilder final : public json::json_sax_t {
 public:
  JsonBuilder(std::string_view text, std::size_t max_depth) : text_(text), max_depth_(max_depth) {}

  bool null() override { return Place(nullptr) != nullptr; }
  bool boolean(bool value) override { return Place(value) != nullptr; }
  bool number_integer(number_integer_t value) override { return Place(value) != nullptr; }
  bool number_unsigned(number_unsigned_t value) override { return Place(value) != nullptr; }
  bool number_float(number_float_t value, const string_t&) override { return Place(value) != nullptr; }
  bool string(string_t& value) override { return Place(std::move(value)) != nullptr; }
  bool binary(binary_t& value) override { return Place(json::binary(std::move(value))) != nullptr; }
  bool start_object(std::size_t) override { return Open(json::object()); }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(json::array()); }
  bool end_array() override { return Close(); }
  bool key(string_t& key) override {
    keys_.back() = key;
    slot_ = &open_.back()->get_ref<json::object_t&>()[key];
    return true;
  }

  bool parse_error(std::size_t byte, const std::string& token, const json::exception& e) override {
    // nlohmann reports the offset one past the offending byte.
    const std::string at = Position(text_, byte > 0 ? byte - 1 : 0);
    if (e.id == 406) return Refuse("number " + token + " is out of range (at " + at + ")");  // beyond a double
    std::string what = e.what();
    if (what.find("ill-formed UTF-8") != std::string::npos) return Refuse("is not valid UTF-8 (at " + at + ")");
    const std::size_t cut = what.rfind(": ");
    error_ = InvalidArgument(std::string(kMalformedJson) + " at " + at + ": " +
                             (cut == std::string::npos ? what : what.substr(cut + 2)));
    return false;
  }

  const Status& error() const { return error_; }
  json& root() { return root_; }

 private:
  // Puts a value where the parser is (the root, the end of the open array or
  // the open object's current key) and returns where it went.
  json* Place(json value) {
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    json& parent = *open_.back();
    if (parent.is_array()) {
      // Earlier elements may move; none of them is open any more.
      auto& elements = parent.get_ref<json::array_t&>();
      elements.push_back(std::move(value));
      return &elements.back();
    }
    *slot_ = std::move(value);
    return slot_;
  }
  bool Open(json container) {
    if (open_.size() >= max_depth_) {
      error_ = TooDeep(max_depth_);
      return false;
    }
    open_.push_back(Place(std::move(container)));
    keys_.emplace_back();
    return true;
  }
  bool Close() {
    open_.pop_back();
    keys_.pop_back();
    return true;
  }
  // A bad value: named by the keys that lead to it when there are some.
  bool Refuse(std::string description) {
    std::string field;
    for (const std::string& key : keys_) {
      if (key.empty()) continue;  // an array level
      field += field.empty() ? key : "." + key;
    }
    error_ = field.empty() ? InvalidArgument(std::move(description)) : InvalidField(field, std::move(description));
    return false;
  }

  std::string_view text_;
  std::size_t max_depth_;
  json root_;
  std::vector<json*> open_;        // the open objects and arrays, outermost first
  std::vector<std::string> keys_;  // per open level, its current key (empty in an array)
  json* slot_ = nullptr;           // the open object's value for its current key
  Status error_;
};

// Why a YAML document was refused, thrown out of the parser's callbacks.
struct YamlRefused {
  Status status;
};

std::string YamlPosition(const YAML::Mark& mark) {
  return " at line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1);
}

// go-yaml's bound on alias expansion (decode.go, allowedAliasRatio): the
// share of decoded nodes that may come from aliases, by the count so far.
double AllowedAliasRatio(std::uint64_t decoded) {
  constexpr double kLow = 400'000, kHigh = 4'000'000;
  if (decoded <= kLow) return 0.99;
  if (decoded >= kHigh) return 0.10;
  return 0.99 - 0.89 * ((static_cast<double>(decoded) - kLow) / (kHigh - kLow));
}

// Follows yaml-cpp's parse events and counts the document as its tree will
// be, every alias expanded, from each anchored node's size and height
// (recorded when the node ends), without expanding anything. Refuses by
// throwing YamlRefused, which stops the parser there.
class YamlBounds final : public YAML::EventHandler {
 public:
  explicit YamlBounds(std::size_t max_depth) : max_depth_(max_depth) {}

  // Anchors are numbered anew in each document of a stream.
  void OnDocumentStart(const YAML::Mark&) override { anchors_.clear(); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { Leaf(mark, anchor); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    // yaml-cpp passes any bytes; JSON's writer refuses them later (a 500).
    if (!IsValidUtf8(value)) throw YamlRefused{InvalidArgument("a string is not valid UTF-8" + YamlPosition(mark))};
    Leaf(mark, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (anchor >= anchors_.size() || !anchors_[anchor].complete) {
      throw YamlRefused{InvalidArgument("an alias refers to a node that contains it" + YamlPosition(mark))};
    }
    const Anchored& target = anchors_[anchor];
    if (open_.size() + target.height > max_depth_) throw YamlRefused{TooDeep(max_depth_, YamlPosition(mark))};
    Count(mark, target.nodes, /*aliased=*/true);
    ChildOfHeight(target.height);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Start(mark, anchor);
  }
  void OnSequenceEnd() override { End(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Start(mark, anchor);
  }
  void OnMapEnd() override { End(); }

 private:
  struct Open {
    YAML::anchor_t anchor;
    std::uint64_t decoded_before;  // the count before this node
    std::size_t height;            // of its tallest child so far
  };
  struct Anchored {
    bool complete = false;
    std::uint64_t nodes = 0;  // with its own aliases expanded
    std::size_t height = 0;   // 0 for a scalar
  };

  void Count(const YAML::Mark& mark, std::uint64_t nodes, bool aliased) {
    decoded_ += nodes;
    if (aliased) aliased_ += nodes;
    if (aliased_ > 100 && decoded_ > 1000 &&
        static_cast<double>(aliased_) / static_cast<double>(decoded_) > AllowedAliasRatio(decoded_)) {
      throw YamlRefused{InvalidArgument("the document expands excessively through aliases (" +
                                        std::to_string(aliased_) + " of its first " + std::to_string(decoded_) +
                                        " nodes come from aliases)" + YamlPosition(mark))};
    }
  }
  void ChildOfHeight(std::size_t height) {
    if (!open_.empty()) open_.back().height = std::max(open_.back().height, height);
  }
  void Record(YAML::anchor_t anchor, Anchored anchored) {
    if (anchor == YAML::NullAnchor) return;
    if (anchor >= anchors_.size()) anchors_.resize(anchor + 1);
    anchors_[anchor] = anchored;
  }
  void Leaf(const YAML::Mark& mark, YAML::anchor_t anchor) {
    Count(mark, 1, /*aliased=*/false);
    ChildOfHeight(0);
    Record(anchor, {true, 1, 0});
  }
  void Start(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (open_.size() >= max_depth_) throw YamlRefused{TooDeep(max_depth_, YamlPosition(mark))};
    open_.push_back({anchor, decoded_, 0});
    Count(mark, 1, /*aliased=*/false);
    Record(anchor, {});  // open: an alias to it now would be a cycle
  }
  void End() {
    const Open done = open_.back();
    open_.pop_back();
    ChildOfHeight(done.height + 1);
    Record(done.anchor, {true, decoded_ - done.decoded_before, done.height + 1});
  }

  std::size_t max_depth_;
  std::vector<Open> open_;
  std::vector<Anchored> anchors_;  // by yaml-cpp's anchor number
  std::uint64_t decoded_ = 0, aliased_ = 0;
};

Status MalformedYaml(const YAML::Exception& e) {
  return InvalidArgument(std::string(kMalformedYaml) + (e.mark.is_null() ? std::string() : YamlPosition(e.mark)) +
                         ": " + e.msg);
}

}  // namespace

Result<json> ParseJson(std::string_view text, const DocumentLimits& limits) {
  if (text.size() > limits.max_bytes) return TooLarge(text.size(), limits.max_bytes);
  JsonBuilder builder(text, limits.max_depth);
  const bool parsed = json::sax_parse(text.begin(), text.end(), &builder);
  if (!builder.error().ok()) return builder.error();
  if (!parsed) return InvalidArgument(std::string(kMalformedJson));
  return std::move(builder.root());
}

bool IsMalformedDocument(const Status& status) {
  return status.violations().empty() &&
         (status.message().starts_with(kMalformedJson) || status.message().starts_with(kMalformedYaml));
}

namespace {

// The bounds pass over `text`'s events (YamlBounds), then `build` over the
// text by the same parser, for a document that passed. `max_documents`:
// every document of the stream, refused past that many; none: the first
// document only, as YAML::Load reads it.
template <typename Build>
auto LoadBoundedYaml(std::string_view text, const DocumentLimits& limits, std::optional<std::size_t> max_documents,
                     const Build& build) -> Result<decltype(build(std::string()))> {
  if (text.size() > limits.max_bytes) return TooLarge(text.size(), limits.max_bytes);
  const std::string copy(text);
  try {
    std::istringstream in(copy);
    YAML::Parser parser(in);
    YamlBounds bounds(limits.max_depth);
    if (!max_documents) {
      parser.HandleNextDocument(bounds);
    } else {
      for (std::size_t documents = 0; parser.HandleNextDocument(bounds);) {
        if (++documents > *max_documents) {
          return InvalidArgument("the stream holds more than " + std::to_string(*max_documents) + " documents");
        }
      }
    }
    return build(copy);
  } catch (const YamlRefused& refused) {
    return refused.status;
  } catch (const YAML::Exception& e) {
    return MalformedYaml(e);
  }
}

}  // namespace

Result<YAML::Node> ParseYaml(std::string_view text, const DocumentLimits& limits) {
  return LoadBoundedYaml(text, limits, std::nullopt, [](const std::string& copy) { return YAML::Load(copy); });
}

Result<std::vector<YAML::Node>> ParseYamlStream(std::string_view text, std::size_t max_documents,
                                                const DocumentLimits& limits) {
  return LoadBoundedYaml(text, limits, max_documents, [](const std::string& copy) { return YAML::LoadAll(copy); });
}

std::size_t JsonDepth(const json& value, std::size_t limit) {
  // (value, its depth counting itself) pairs still to visit.
  std::vector<std::pair<const json*, std::size_t>> pending;
  std::size_t deepest = 0;
  if (value.is_structured()) pending.emplace_back(&value, 1);
  while (!pending.empty()) {
    const auto [node, depth] = pending.back();
    pending.pop_back();
    deepest = std::max(deepest, depth);
    if (deepest > limit) break;
    for (const json& child : *node) {
      if (child.is_structured()) pending.emplace_back(&child, depth + 1);
    }
  }
  return deepest;
}

}  // namespace septa
