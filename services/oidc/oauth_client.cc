#include "services/oidc/oauth_client.h"

#include <cctype>

#include "common/documents.h"
#include "common/http_url.h"
#include "common/text.h"
#include "services/base/base64.h"
#include "services/oidc/claims.h"
#include "services/oidc/jws.h"

namespace septa::oidc {

namespace {

// A POST of `fields` to `url` as `client`: a public client names itself in
// the form, a confidential one authenticates with HTTP Basic (RFC 6749
// 2.3.1, which every provider must accept), its id and secret form-encoded.
Result<ProviderReply> PostAsClient(ProviderHttp& http, const std::string& url, const OauthClient& client,
                                   std::vector<std::pair<std::string, std::string>> fields) {
  if (client.secret.empty()) {
    fields.emplace_back("client_id", client.id);
    return http.PostForm(url, FormEncode(fields));
  }
  const std::string credentials = FormEncode({{client.id, client.secret}});  // "id=secret", both encoded
  std::string basic = credentials;
  basic[basic.find('=')] = ':';
  return http.PostForm(url, FormEncode(fields), "Basic " + base::Base64Encode(basic));
}

}  // namespace

std::string Member(const nlohmann::json& object, const char* name) {
  const auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Result<nlohmann::json> JsonObject(const ProviderReply& reply, const std::string& what) {
  auto json = ParseJson(reply.body);
  if (!json.ok() || !json->is_object()) {
    return Unavailable(what + " answered HTTP " + std::to_string(reply.status) + " without a JSON object" +
                       (reply.body.empty() ? "" : ": " + QuotedExcerpt(reply.body)));
  }
  return *std::move(json);
}

std::string OauthError(const nlohmann::json& answer) {
  const std::string error = Member(answer, "error");
  const std::string description = Member(answer, "error_description");
  return QuotedExcerpt(error) + (description.empty() ? "" : " (" + EscapeControlCharacters(description) + ")");
}

Result<Tokens> TokensFrom(const nlohmann::json& answer, const ProviderEndpoints& provider, const std::string& client_id,
                          TimePoint now) {
  const std::string id_token = Member(answer, "id_token");
  if (id_token.empty()) {
    return Unauthenticated("the token endpoint gave no id_token: does the scope include openid?");
  }
  SEPTA_ASSIGN_OR_RETURN(Tokens tokens, ReadIdToken(id_token, provider.issuer, client_id, now));
  tokens.refresh_token = Member(answer, "refresh_token");
  return tokens;
}

std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& fields) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const auto& [name, value] : fields) {
    if (!out.empty()) out += '&';
    for (const std::string* part : {&name, &value}) {
      for (const char c : *part) {
        const auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) || c == '-' || c == '.' || c == '_' || c == '~') {
          out += c;
        } else if (c == ' ') {
          out += '+';
        } else {
          out += '%';
          out += kHex[u >> 4];
          out += kHex[u & 15];
        }
      }
      if (part == &name) out += '=';
    }
  }
  return out;
}

Status CheckProviderUrl(std::string_view url, std::string_view what) {
  const std::optional<HttpUrl> parts = ParseHttpUrl(url);
  if (!parts || parts->authority.empty()) {
    return InvalidArgument(std::string(what) + " is not an http(s) URL: " + QuotedExcerpt(url));
  }
  if (!parts->https && !IsLoopbackAuthority(parts->authority)) {
    return InvalidArgument(std::string(what) + " must be https (http only on a loopback host): " + QuotedExcerpt(url));
  }
  return Status::Ok();
}

Result<ProviderEndpoints> Discover(ProviderHttp& http, const std::string& issuer) {
  SEPTA_RETURN_IF_ERROR(CheckProviderUrl(issuer, "the issuer"));
  std::string base = issuer;
  while (base.ends_with('/')) base.pop_back();
  const std::string url = base + "/.well-known/openid-configuration";
  SEPTA_ASSIGN_OR_RETURN(const ProviderReply reply, http.Get(url));
  if (reply.status != 200) return Unavailable("discovery at " + url + " answered HTTP " + std::to_string(reply.status));
  SEPTA_ASSIGN_OR_RETURN(const nlohmann::json document, JsonObject(reply, "discovery at " + url));
  ProviderEndpoints endpoints;
  endpoints.issuer = Member(document, "issuer");
  if (endpoints.issuer != issuer) {
    return FailedPrecondition("the discovery document at " + url + " names the issuer " +
                              QuotedExcerpt(endpoints.issuer) + ", not " + QuotedExcerpt(issuer) +
                              " (name the issuer exactly as the provider spells it)");
  }
  endpoints.authorization_endpoint = Member(document, "authorization_endpoint");
  endpoints.device_authorization_endpoint = Member(document, "device_authorization_endpoint");
  endpoints.token_endpoint = Member(document, "token_endpoint");
  endpoints.revocation_endpoint = Member(document, "revocation_endpoint");
  endpoints.end_session_endpoint = Member(document, "end_session_endpoint");
  if (endpoints.token_endpoint.empty()) return FailedPrecondition("the provider names no token_endpoint");
  for (const auto& [value, what] :
       {std::pair{&endpoints.authorization_endpoint, "authorization_endpoint"},
        std::pair{&endpoints.device_authorization_endpoint, "device_authorization_endpoint"},
        std::pair{&endpoints.token_endpoint, "token_endpoint"},
        std::pair{&endpoints.revocation_endpoint, "revocation_endpoint"},
        std::pair{&endpoints.end_session_endpoint, "end_session_endpoint"}}) {
    if (!value->empty()) SEPTA_RETURN_IF_ERROR(CheckProviderUrl(*value, std::string("the provider's ") + what));
  }
  return endpoints;
}

Result<Tokens> RedeemCode(ProviderHttp& http, const ProviderEndpoints& provider, const OauthClient& client,
                          const std::string& code, const std::string& code_verifier, const std::string& redirect_uri,
                          const Clock& clock) {
  SEPTA_ASSIGN_OR_RETURN(const ProviderReply reply, PostAsClient(http, provider.token_endpoint, client,
                                                                 {{"grant_type", "authorization_code"},
                                                                  {"code", code},
                                                                  {"code_verifier", code_verifier},
                                                                  {"redirect_uri", redirect_uri}}));
  if (reply.status >= 500) {
    return Unavailable("the token endpoint answered HTTP " + std::to_string(reply.status) + " to the code");
  }
  SEPTA_ASSIGN_OR_RETURN(const nlohmann::json answer, JsonObject(reply, "the token endpoint"));
  if (reply.status != 200) {
    return Unauthenticated("the token endpoint refused the authorization code: HTTP " + std::to_string(reply.status) +
                           " " + OauthError(answer));
  }
  return TokensFrom(answer, provider, client.id, clock.Now());
}

Result<Tokens> Refresh(ProviderHttp& http, const ProviderEndpoints& provider, const OauthClient& client,
                       const std::string& refresh_token, const Clock& clock) {
  SEPTA_ASSIGN_OR_RETURN(const ProviderReply reply,
                         PostAsClient(http, provider.token_endpoint, client,
                                      {{"grant_type", "refresh_token"}, {"refresh_token", refresh_token}}));
  if (reply.status >= 500) {
    return Unavailable("the token endpoint answered HTTP " + std::to_string(reply.status) + " to the refresh");
  }
  SEPTA_ASSIGN_OR_RETURN(const nlohmann::json answer, JsonObject(reply, "the token endpoint"));
  if (reply.status != 200) {
    const std::string error = Member(answer, "error");
    if (error == "invalid_grant") {
      return Unauthenticated("the sign-in at " + provider.issuer +
                             " has expired or was revoked (the refresh token was refused: " + OauthError(answer) + ")");
    }
    return Unauthenticated("the token endpoint refused the refresh: HTTP " + std::to_string(reply.status) + " " +
                           OauthError(answer));
  }
  SEPTA_ASSIGN_OR_RETURN(Tokens tokens, TokensFrom(answer, provider, client.id, clock.Now()));
  if (tokens.refresh_token.empty()) tokens.refresh_token = refresh_token;  // not rotated
  return tokens;
}

Status RevokeRefreshToken(ProviderHttp& http, const ProviderEndpoints& provider, const OauthClient& client,
                          const std::string& refresh_token) {
  if (provider.revocation_endpoint.empty()) {
    return FailedPrecondition("the provider has no revocation_endpoint");
  }
  SEPTA_ASSIGN_OR_RETURN(const ProviderReply reply,
                         PostAsClient(http, provider.revocation_endpoint, client,
                                      {{"token", refresh_token}, {"token_type_hint", "refresh_token"}}));
  // RFC 7009 2.2: 200 whether or not the token was valid.
  if (reply.status == 200) return Status::Ok();
  auto answer = ParseJson(reply.body);
  return Unavailable("the revocation endpoint answered HTTP " + std::to_string(reply.status) +
                     (answer.ok() && answer->is_object() ? " " + OauthError(*answer) : ""));
}

Result<Tokens> ReadIdToken(const std::string& id_token, const std::string& issuer, const std::string& client_id,
                           TimePoint now) {
  auto jws = oidc::ParseJws(id_token);
  if (!jws.ok()) return Unauthenticated("the provider's ID token: " + jws.status().message());
  oidc::ClaimChecks checks;
  checks.issuer = issuer;
  checks.audience = client_id;
  checks.now = now;
  const Status claims = oidc::CheckClaims(jws->claims, checks);
  if (!claims.ok()) return Unauthenticated("the provider's ID token: " + claims.message());
  Tokens tokens;
  tokens.id_token = id_token;
  tokens.id_token_expiry = oidc::ExpireTime(jws->claims);
  tokens.subject = Member(jws->claims, "email");
  if (tokens.subject.empty()) tokens.subject = Member(jws->claims, "sub");
  tokens.subject = EscapeControlCharacters(tokens.subject);
  return tokens;
}

std::optional<TimePoint> IdTokenExpiry(const std::string& id_token) {
  auto jws = oidc::ParseJws(id_token);
  if (!jws.ok()) return std::nullopt;
  const auto exp = jws->claims.find("exp");
  if (exp == jws->claims.end() || !exp->is_number()) return std::nullopt;
  const double seconds = exp->get<double>();
  if (!(seconds > 0 && seconds < 1e11)) return std::nullopt;
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(std::chrono::duration<double>(seconds)));
}

}  // namespace septa::oidc
