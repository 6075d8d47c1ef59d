// Vault ACL policies as vaultsim enforces them: the HCL text is stored as
// given; `path "<pattern>" { capabilities = [...] }` blocks are parsed and
// matched. A pattern is exact, ends in `*` (prefix) or has `+` segments (one
// any segment). In each policy the most specific matching block counts
// (Vault's priority, simplified: exact over glob, then the longer pattern);
// the capabilities of all of a token's policies add up, and `deny` in any of
// them wins.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"

namespace septa::vaultsim {

struct PathRule {
  std::string pattern;
  std::set<std::string> capabilities;  // create read update delete list sudo deny patch
};

struct Policy {
  std::string name;
  std::string text;  // as written
  std::vector<PathRule> rules;
};

Result<Policy> ParsePolicy(const std::string& name, const std::string& hcl);

// The capabilities `policies` grant on `path` (no leading slash, without
// "v1/"). "root" grants everything.
std::set<std::string> Capabilities(const std::map<std::string, Policy>& known, const std::vector<std::string>& policies,
                                   const std::string& path);

// The policy every token has unless created with no_default_policy: its own
// token endpoints.
Policy DefaultPolicy();

}  // namespace septa::vaultsim
