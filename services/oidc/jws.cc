#include "services/oidc/jws.h"

#include <optional>
#include <string>
#include <utility>

#include "common/documents.h"
#include "common/text.h"
#include "services/base/base64.h"

namespace septa::oidc {

using nlohmann::json;

namespace {

// A token's header and claims nest a few levels (Keycloak's
// resource_access.<client>.roles is three); a deep one is refused before
// nlohmann's recursive code walks it.
constexpr DocumentLimits kTokenPartLimits{.max_bytes = kMaxTokenBytes, .max_depth = 16};

std::optional<JwsAlgorithm> AcceptedAlgorithm(std::string_view name) {
  for (JwsAlgorithm algorithm : {JwsAlgorithm::kRs256, JwsAlgorithm::kEs256, JwsAlgorithm::kEdDsa}) {
    if (name == AlgorithmName(algorithm)) return algorithm;
  }
  return std::nullopt;
}

// The JSON object that a base64url part of the token encodes; `part_name`
// ("header", "payload") names it in the message.
Result<json> DecodeJsonObjectPart(std::string_view part, std::string_view part_name) {
  const std::optional<std::string> decoded = base::Base64UrlDecode(part);
  if (!decoded) return Unauthenticated("token " + std::string(part_name) + " is not unpadded base64url");
  Result<json> parsed = ParseJson(*decoded, kTokenPartLimits);
  if (!parsed.ok()) {
    // The parser's message may quote the token: only an excerpt of it.
    return Unauthenticated("token " + std::string(part_name) +
                           " is not JSON: " + QuotedExcerpt(parsed.status().message()));
  }
  if (!parsed->is_object()) return Unauthenticated("token " + std::string(part_name) + " is not a JSON object");
  return parsed;
}

// The header member `name` when it is a string; "" when absent.
Result<std::string> OptionalHeaderString(const json& header, const char* name) {
  const auto found = header.find(name);
  if (found == header.end()) return std::string();
  if (!found->is_string()) return Unauthenticated("token header's \"" + std::string(name) + "\" is not a string");
  return found->get<std::string>();
}

}  // namespace

std::string_view AlgorithmName(JwsAlgorithm algorithm) {
  switch (algorithm) {
    case JwsAlgorithm::kRs256: return "RS256";
    case JwsAlgorithm::kEs256: return "ES256";
    case JwsAlgorithm::kEdDsa: return "EdDSA";
  }
  return "unknown";
}

Result<Jws> ParseJws(std::string_view compact) {
  if (compact.size() > kMaxTokenBytes) {
    return Unauthenticated("token is " + std::to_string(compact.size()) + " bytes, more than " +
                           std::to_string(kMaxTokenBytes));
  }
  const std::size_t header_end = compact.find('.');
  const std::size_t payload_end = header_end == std::string_view::npos ? header_end : compact.find('.', header_end + 1);
  if (payload_end == std::string_view::npos || compact.find('.', payload_end + 1) != std::string_view::npos) {
    return Unauthenticated("token is not three base64url parts separated by '.' (JWS compact serialization)");
  }
  SEPTA_ASSIGN_OR_RETURN(const json header, DecodeJsonObjectPart(compact.substr(0, header_end), "header"));

  // The algorithm before anything else is read: "none" and HMAC never go on.
  const auto alg = header.find("alg");
  if (alg == header.end()) return Unauthenticated("token header has no \"alg\"");
  if (!alg->is_string()) return Unauthenticated("token header's \"alg\" is not a string");
  const std::optional<JwsAlgorithm> algorithm = AcceptedAlgorithm(alg->get_ref<const std::string&>());
  if (!algorithm) {
    return Unauthenticated("token algorithm " + QuotedExcerpt(alg->get_ref<const std::string&>()) +
                           " is not accepted (RS256, ES256, EdDSA)");
  }
  if (header.contains("crit")) {
    return Unauthenticated("token header has \"crit\": no JWS extension is understood (RFC 7515 section 4.1.11)");
  }

  Jws jws;
  jws.algorithm = *algorithm;
  SEPTA_ASSIGN_OR_RETURN(jws.key_id, OptionalHeaderString(header, "kid"));
  SEPTA_ASSIGN_OR_RETURN(jws.type, OptionalHeaderString(header, "typ"));
  const std::string_view payload = compact.substr(header_end + 1, payload_end - header_end - 1);
  SEPTA_ASSIGN_OR_RETURN(jws.claims, DecodeJsonObjectPart(payload, "payload"));
  std::optional<std::string> signature = base::Base64UrlDecode(compact.substr(payload_end + 1));
  if (!signature) return Unauthenticated("token signature is not unpadded base64url");
  if (signature->empty()) return Unauthenticated("token has no signature");
  jws.signature = *std::move(signature);
  jws.signing_input = std::string(compact.substr(0, payload_end));
  return jws;
}

}  // namespace septa::oidc
