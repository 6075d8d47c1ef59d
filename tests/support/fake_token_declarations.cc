#include "tests/support/fake_token_declarations.h"

namespace septa::core {
namespace {

Status CheckRow(const TokenDeclaration& d) {
  if (!IsDnsLabel(d.name, 63)) return InvalidField("name", "must be a DNS label");
  if (d.principal != "admin" && !(d.principal.starts_with("tenant:") && IsDnsLabel(d.principal.substr(7), 63))) {
    return InvalidField("principal", "must be admin or tenant:<name>");
  }
  if (d.ttl_seconds < 0) return InvalidField("ttl_seconds", "must not be negative");
  if (d.sink.ns.empty() || d.sink.name.empty() || d.sink.key.empty()) return InvalidField("sink", "is incomplete");
  if (d.version <= 0) return InvalidField("version", "must be positive");
  return Status::Ok();
}

TokenDeclaration Stored(TokenDeclaration d) {
  d.create_time = Truncated(d.create_time);
  d.update_time = Truncated(d.update_time);
  d.token_expire_time = Truncated(d.token_expire_time);
  return d;
}

}  // namespace

Result<std::optional<TokenDeclaration>> FakeTokenDeclarations::Get(const std::string& name) {
  const auto it = w_.s.token_declarations.find(name);
  if (it == w_.s.token_declarations.end()) return std::optional<TokenDeclaration>();
  return std::optional<TokenDeclaration>(it->second);
}

Status FakeTokenDeclarations::Insert(const TokenDeclaration& d) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  SEPTA_RETURN_IF_ERROR(CheckRow(d));
  if (w_.s.token_declarations.contains(d.name)) {
    return AlreadyExists("api token declaration \"" + d.name + "\" already exists");
  }
  w_.s.token_declarations.emplace(d.name, Stored(d));
  return Status::Ok();
}

Status FakeTokenDeclarations::Update(const TokenDeclaration& d, std::int64_t expected_version) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  SEPTA_RETURN_IF_ERROR(CheckRow(d));
  const auto it = w_.s.token_declarations.find(d.name);
  if (it == w_.s.token_declarations.end()) return NotFound("api token declaration \"" + d.name + "\" not found");
  if (it->second.version != expected_version) {
    return Aborted("api token declaration \"" + d.name + "\" is at version " + std::to_string(it->second.version) +
                   ", not " + std::to_string(expected_version));
  }
  TokenDeclaration stored = Stored(d);
  stored.create_time = it->second.create_time;  // as the UPDATE leaves it
  it->second = std::move(stored);
  return Status::Ok();
}

Status FakeTokenDeclarations::Delete(const std::string& name) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  w_.s.token_declarations.erase(name);
  return Status::Ok();
}

Result<std::vector<TokenDeclaration>> FakeTokenDeclarations::List() {
  std::vector<TokenDeclaration> out;
  for (const auto& [name, d] : w_.s.token_declarations) out.push_back(d);
  return out;
}

}  // namespace septa::core
