#include "services/vaultsim/policy.h"

#include <cctype>
#include <optional>

namespace septa::vaultsim {
namespace {

const std::set<std::string> kKnownCapabilities = {"create", "read", "update", "delete",
                                                  "list",   "sudo", "deny",   "patch"};

// Tokens of the HCL subset policies use: strings, identifiers, = [ ] { } ,
struct Lexer {
  const std::string& text;
  std::size_t pos = 0;

  void SkipSpace() {
    while (pos < text.size()) {
      char c = text[pos];
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos;
      } else if (c == '#' || (c == '/' && pos + 1 < text.size() && text[pos + 1] == '/')) {
        while (pos < text.size() && text[pos] != '\n') ++pos;
      } else {
        break;
      }
    }
  }
  // "" at the end; a string token keeps its quotes so it differs from a word.
  std::optional<std::string> Next() {
    SkipSpace();
    if (pos >= text.size()) return std::string();
    char c = text[pos];
    if (c == '"') {
      std::size_t end = text.find('"', pos + 1);
      if (end == std::string::npos) return std::nullopt;
      std::string out = text.substr(pos, end - pos + 1);
      pos = end + 1;
      return out;
    }
    if (std::string_view("={}[],").find(c) != std::string_view::npos) {
      ++pos;
      return std::string(1, c);
    }
    std::size_t start = pos;
    while (pos < text.size() && (std::isalnum(static_cast<unsigned char>(text[pos])) || text[pos] == '_')) ++pos;
    if (start == pos) return std::nullopt;
    return text.substr(start, pos - start);
  }
};

bool IsString(const std::string& token) { return token.size() >= 2 && token.front() == '"'; }
std::string Unquote(const std::string& token) { return token.substr(1, token.size() - 2); }

Status Syntax(const std::string& name, const std::string& what) {
  return InvalidArgument("failed to parse policy \"" + name + "\": " + what);
}

// Skips a value: a string, a word, a list or a block.
bool SkipValue(Lexer& lex) {
  auto t = lex.Next();
  if (!t || t->empty()) return false;
  if (*t == "[" || *t == "{") {
    int depth = 1;
    while (depth > 0) {
      auto u = lex.Next();
      if (!u || u->empty()) return false;
      if (*u == "[" || *u == "{") ++depth;
      if (*u == "]" || *u == "}") --depth;
    }
  }
  return true;
}

bool Matches(const std::string& pattern, const std::string& path) {
  bool glob = !pattern.empty() && pattern.back() == '*';
  std::string_view body(pattern.data(), glob ? pattern.size() - 1 : pattern.size());
  std::size_t p = 0, i = 0;
  while (i < body.size()) {
    if (body[i] == '+') {
      if (p >= path.size() || path[p] == '/') return false;  // + is one non-empty segment
      std::size_t seg_end = path.find('/', p);
      p = seg_end == std::string::npos ? path.size() : seg_end;
      ++i;
      continue;
    }
    if (p >= path.size() || path[p] != body[i]) return false;
    ++p;
    ++i;
  }
  return glob || p == path.size();
}

// Higher is more specific.
std::pair<int, std::size_t> Specificity(const std::string& pattern) {
  bool glob = !pattern.empty() && pattern.back() == '*';
  bool plus = pattern.find('+') != std::string::npos;
  return {glob ? 0 : (plus ? 1 : 2), pattern.size()};
}

}  // namespace

Result<Policy> ParsePolicy(const std::string& name, const std::string& hcl) {
  Policy policy{name, hcl, {}};
  Lexer lex{hcl};
  while (true) {
    auto t = lex.Next();
    if (!t) return Syntax(name, "unexpected character");
    if (t->empty()) break;
    if (*t != "path") {
      auto eq = lex.Next();  // other top-level keys (e.g. name = "x") are ignored
      if (!eq || *eq != "=" || !SkipValue(lex)) return Syntax(name, "unexpected \"" + *t + "\"");
      continue;
    }
    auto pattern = lex.Next();
    auto open = lex.Next();
    if (!pattern || !IsString(*pattern) || !open || *open != "{") {
      return Syntax(name, "expected path \"<pattern>\" {");
    }
    PathRule rule{Unquote(*pattern), {}};
    while (true) {
      auto key = lex.Next();
      if (!key || key->empty()) return Syntax(name, "unterminated path block for \"" + rule.pattern + "\"");
      if (*key == "}") break;
      auto eq = lex.Next();
      if (!eq || *eq != "=") return Syntax(name, "expected = after " + *key);
      if (*key != "capabilities") {
        if (!SkipValue(lex)) return Syntax(name, "bad value of " + *key);
        continue;
      }
      auto open_list = lex.Next();
      if (!open_list || *open_list != "[") return Syntax(name, "capabilities must be a list");
      while (true) {
        auto item = lex.Next();
        if (!item || item->empty()) return Syntax(name, "unterminated capabilities list");
        if (*item == "]") break;
        if (*item == ",") continue;
        if (!IsString(*item) || !kKnownCapabilities.contains(Unquote(*item))) {
          return Syntax(name, "invalid capability " + *item + " on path \"" + rule.pattern + "\"");
        }
        rule.capabilities.insert(Unquote(*item));
      }
    }
    policy.rules.push_back(std::move(rule));
  }
  return policy;
}

std::set<std::string> Capabilities(const std::map<std::string, Policy>& known, const std::vector<std::string>& policies,
                                   const std::string& path) {
  std::set<std::string> granted;
  bool denied = false;
  for (const auto& name : policies) {
    if (name == "root") return {"create", "read", "update", "delete", "list", "sudo", "patch"};
    auto it = known.find(name);
    if (it == known.end()) continue;
    const PathRule* best = nullptr;
    for (const auto& rule : it->second.rules) {
      if (!Matches(rule.pattern, path)) continue;
      if (best == nullptr || Specificity(rule.pattern) > Specificity(best->pattern)) best = &rule;
    }
    if (best == nullptr) continue;
    if (best->capabilities.contains("deny")) denied = true;
    granted.insert(best->capabilities.begin(), best->capabilities.end());
  }
  if (denied) return {"deny"};
  return granted;
}

Policy DefaultPolicy() {
  static const std::string kText = R"(path "auth/token/lookup-self" { capabilities = ["read"] }
path "auth/token/renew-self" { capabilities = ["update"] }
path "auth/token/revoke-self" { capabilities = ["update"] }
path "sys/leases/lookup" { capabilities = ["update"] }
path "sys/leases/renew" { capabilities = ["update"] }
)";
  return *ParsePolicy("default", kText);
}

}  // namespace septa::vaultsim
