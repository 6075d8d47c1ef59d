#include "services/kubesim/selectors.h"

#include <algorithm>
#include <cctype>

namespace septa::kubesim {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits on commas that are not inside parentheses.
std::vector<std::string_view> SplitTerms(std::string_view text) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      auto term = Trim(text.substr(start, i - start));
      if (!term.empty()) out.push_back(term);
      start = i + 1;
    } else if (text[i] == '(') {
      ++depth;
    } else if (text[i] == ')') {
      --depth;
    }
  }
  return out;
}

bool ValidLabelKey(std::string_view key) {
  if (key.empty() || key.size() > 317) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/';
  });
}

ApiError SelectorError(std::string_view text, std::string_view why) {
  return BadRequestError("unable to parse requirement: " + std::string(why) + " in \"" + std::string(text) + "\"");
}

ApiResult<LabelRequirement> ParseRequirement(std::string_view term) {
  LabelRequirement r;
  if (term.front() == '!') {
    r.key = std::string(Trim(term.substr(1)));
    r.op = LabelRequirement::Op::kDoesNotExist;
    if (!ValidLabelKey(r.key)) return SelectorError(term, "invalid label key");
    return r;
  }
  auto paren = term.find('(');
  if (paren != std::string_view::npos) {
    if (term.back() != ')') return SelectorError(term, "missing ')'");
    std::string_view head = Trim(term.substr(0, paren));
    auto space = head.find_last_of(" \t");
    if (space == std::string_view::npos) return SelectorError(term, "expected 'in' or 'notin'");
    std::string_view op = Trim(head.substr(space + 1));
    r.key = std::string(Trim(head.substr(0, space)));
    if (op == "in") {
      r.op = LabelRequirement::Op::kIn;
    } else if (op == "notin") {
      r.op = LabelRequirement::Op::kNotIn;
    } else {
      return SelectorError(term, "expected 'in' or 'notin'");
    }
    for (auto v : SplitTerms(term.substr(paren + 1, term.size() - paren - 2))) r.values.emplace_back(Trim(v));
    if (!ValidLabelKey(r.key)) return SelectorError(term, "invalid label key");
    return r;
  }
  auto neq = term.find("!=");
  auto eq = term.find('=');
  if (neq != std::string_view::npos) {
    r.key = std::string(Trim(term.substr(0, neq)));
    r.op = LabelRequirement::Op::kNotEquals;
    r.values.emplace_back(Trim(term.substr(neq + 2)));
  } else if (eq != std::string_view::npos) {
    bool double_eq = eq + 1 < term.size() && term[eq + 1] == '=';
    r.key = std::string(Trim(term.substr(0, eq)));
    r.op = LabelRequirement::Op::kEquals;
    r.values.emplace_back(Trim(term.substr(eq + (double_eq ? 2 : 1))));
  } else {
    r.key = std::string(term);
    r.op = LabelRequirement::Op::kExists;
  }
  if (!ValidLabelKey(r.key)) return SelectorError(term, "invalid label key");
  return r;
}

}  // namespace

ApiResult<LabelSelector> LabelSelector::Parse(std::string_view text) {
  LabelSelector s;
  for (auto term : SplitTerms(text)) {
    KUBESIM_ASSIGN_OR_RETURN(LabelRequirement r, ParseRequirement(term));
    s.requirements_.push_back(std::move(r));
  }
  return s;
}

ApiResult<LabelSelector> LabelSelector::FromJson(const nlohmann::json& selector) {
  LabelSelector s;
  if (!selector.is_object()) return s;
  if (auto ml = selector.find("matchLabels"); ml != selector.end() && ml->is_object()) {
    for (auto& [k, v] : ml->items()) {
      if (!v.is_string()) return BadRequestError("matchLabels values must be strings");
      s.requirements_.push_back({k, LabelRequirement::Op::kEquals, {v.get<std::string>()}});
    }
  }
  if (auto me = selector.find("matchExpressions"); me != selector.end() && me->is_array()) {
    for (const auto& e : *me) {
      LabelRequirement r;
      r.key = e.value("key", "");
      std::string op = e.value("operator", "");
      if (op == "In") r.op = LabelRequirement::Op::kIn;
      else if (op == "NotIn") r.op = LabelRequirement::Op::kNotIn;
      else if (op == "Exists") r.op = LabelRequirement::Op::kExists;
      else if (op == "DoesNotExist") r.op = LabelRequirement::Op::kDoesNotExist;
      else return BadRequestError("unknown label selector operator \"" + op + "\"");
      if (auto vals = e.find("values"); vals != e.end() && vals->is_array()) {
        for (const auto& v : *vals) r.values.push_back(v.is_string() ? v.get<std::string>() : v.dump());
      }
      s.requirements_.push_back(std::move(r));
    }
  }
  return s;
}

bool LabelSelector::Matches(const nlohmann::json& labels) const {
  for (const auto& r : requirements_) {
    const nlohmann::json* value = nullptr;
    if (labels.is_object()) {
      auto it = labels.find(r.key);
      if (it != labels.end() && it->is_string()) value = &*it;
    }
    auto in_values = [&] {
      return value != nullptr &&
             std::find(r.values.begin(), r.values.end(), value->get<std::string>()) != r.values.end();
    };
    bool ok = true;
    switch (r.op) {
      case LabelRequirement::Op::kEquals:
      case LabelRequirement::Op::kIn: ok = in_values(); break;
      case LabelRequirement::Op::kNotEquals:
      case LabelRequirement::Op::kNotIn: ok = !in_values(); break;
      case LabelRequirement::Op::kExists: ok = value != nullptr; break;
      case LabelRequirement::Op::kDoesNotExist: ok = value == nullptr; break;
    }
    if (!ok) return false;
  }
  return true;
}

ApiResult<FieldSelector> FieldSelector::Parse(std::string_view text) {
  FieldSelector s;
  for (auto term : SplitTerms(text)) {
    Term t;
    auto neq = term.find("!=");
    auto eq = term.find('=');
    if (neq != std::string_view::npos) {
      t.path = std::string(Trim(term.substr(0, neq)));
      t.equals = false;
      t.value = std::string(Trim(term.substr(neq + 2)));
    } else if (eq != std::string_view::npos) {
      bool double_eq = eq + 1 < term.size() && term[eq + 1] == '=';
      t.path = std::string(Trim(term.substr(0, eq)));
      t.value = std::string(Trim(term.substr(eq + (double_eq ? 2 : 1))));
    } else {
      return BadRequestError("invalid selector: '" + std::string(text) + "'; can't understand '" + std::string(term) +
                             "'");
    }
    if (t.path.empty()) return BadRequestError("invalid field selector \"" + std::string(text) + "\"");
    s.terms_.push_back(std::move(t));
  }
  return s;
}

bool FieldSelector::Matches(const nlohmann::json& object) const {
  for (const auto& t : terms_) {
    if ((FieldValue(object, t.path) == t.value) != t.equals) return false;
  }
  return true;
}

std::string FieldValue(const nlohmann::json& object, std::string_view path) {
  const nlohmann::json* cur = &object;
  while (!path.empty()) {
    auto dot = path.find('.');
    std::string part(path.substr(0, dot));
    if (!cur->is_object()) return "";
    auto it = cur->find(part);
    if (it == cur->end()) return "";
    cur = &*it;
    path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
  }
  if (cur->is_string()) return cur->get<std::string>();
  if (cur->is_null()) return "";
  return cur->dump();
}

}  // namespace septa::kubesim
