// Label and field selectors as the API server parses them from
// `labelSelector=` and `fieldSelector=`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "services/kubesim/api_error.h"

namespace septa::kubesim {

struct LabelRequirement {
  enum class Op { kEquals, kNotEquals, kIn, kNotIn, kExists, kDoesNotExist };
  std::string key;
  Op op = Op::kExists;
  std::vector<std::string> values;
};

class LabelSelector {
 public:
  // "a=b,c!=d,e in (x,y),f notin (z),g,!h"; empty selects everything.
  static ApiResult<LabelSelector> Parse(std::string_view text);
  // From a LabelSelector object ({matchLabels, matchExpressions}).
  static ApiResult<LabelSelector> FromJson(const nlohmann::json& selector);
  bool Matches(const nlohmann::json& labels) const;  // labels: object or null
  bool empty() const { return requirements_.empty(); }

 private:
  std::vector<LabelRequirement> requirements_;
};

class FieldSelector {
 public:
  // "metadata.name=x,spec.nodeName!=,status.phase==Running"
  static ApiResult<FieldSelector> Parse(std::string_view text);
  bool Matches(const nlohmann::json& object) const;

 private:
  struct Term {
    std::string path;
    bool equals = true;
    std::string value;
  };
  std::vector<Term> terms_;
};

// The string value at a dotted path ("spec.nodeName"); "" when absent.
std::string FieldValue(const nlohmann::json& object, std::string_view path);

}  // namespace septa::kubesim
