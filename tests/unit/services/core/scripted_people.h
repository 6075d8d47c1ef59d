// A PersonTokenVerifier whose answers a test sets, by token text: people's
// ID tokens without a provider (the real one: tests/e2e/oidc).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "services/core/people.h"

namespace septa::test {

class ScriptedPeople final : public core::PersonTokenVerifier {
 public:
  Result<core::Person> VerifyPerson(std::string_view token) override {
    ++calls;
    const auto found = answers.find(std::string(token));
    if (found == answers.end()) return Unauthenticated("the token's signature does not verify (scripted)");
    return found->second;
  }
  // As VerifyPerson; a token given a nonce in `nonces` verifies only with it.
  Result<core::Person> VerifySignIn(std::string_view token, std::string_view nonce) override {
    const auto wanted = nonces.find(std::string(token));
    if (wanted != nonces.end() && wanted->second != nonce) return Unauthenticated("\"nonce\" is not the sign-in's");
    return VerifyPerson(token);
  }
  std::map<std::string, Result<core::Person>> answers;
  std::map<std::string, std::string> nonces;
  int calls = 0;
};

}  // namespace septa::test
