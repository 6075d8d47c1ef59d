// The TokenRequest subresource (serviceaccounts/<name>/token), the users
// its tokens authenticate as, and TokenReview, with kube-apiserver's
// validation and wording (pkg/apis/authentication/validation,
// pkg/registry/core/serviceaccount, pkg/registry/authentication/tokenreview).
#include <algorithm>
#include <limits>

#include "services/kubesim/api_internal.h"
#include "services/kubesim/objects.h"
#include "services/kubesim/service_account_tokens.h"
#include "services/kubesim/workload_util.h"

namespace septa::kubesim {

using nlohmann::json;

namespace {

constexpr std::int64_t kDefaultExpirationSeconds = 3600;
constexpr std::int64_t kMinExpirationSeconds = 600;
constexpr std::int64_t kMaxExpirationSeconds = std::int64_t{1} << 32;

std::int64_t UnixSeconds(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

ApiError Invalid(const std::string& name, const std::string& field, const std::string& message) {
  return InvalidError("TokenRequest", "authentication.k8s.io", name, {{"FieldValueInvalid", message, field}});
}

struct TokenSpec {
  std::vector<std::string> audiences;
  std::int64_t expiration_seconds = kDefaultExpirationSeconds;
  std::string pod, pod_uid;  // boundObjectRef
};

ApiResult<TokenSpec> ParseSpec(const std::string& name, const json& request) {
  if (request.contains("kind") && request["kind"] != "TokenRequest") {
    return BadRequestError("the body of the request must be a TokenRequest, not " + request["kind"].dump());
  }
  const json spec = request.value("spec", json::object());
  if (!spec.is_object()) return Invalid(name, "spec", "must be an object");
  TokenSpec out;
  if (spec.contains("expirationSeconds") && !spec["expirationSeconds"].is_null()) {
    if (!spec["expirationSeconds"].is_number_integer()) {
      return Invalid(name, "spec.expirationSeconds", "must be an integer");
    }
    out.expiration_seconds = spec["expirationSeconds"].get<std::int64_t>();
    if (out.expiration_seconds < kMinExpirationSeconds) {
      return Invalid(name, "spec.expirationSeconds", "may not specify a duration less than 10 minutes");
    }
    if (out.expiration_seconds > kMaxExpirationSeconds) {
      return Invalid(name, "spec.expirationSeconds", "may not specify a duration larger than 2^32 seconds");
    }
  }
  json audiences = spec.value("audiences", json::array());
  if (audiences.is_null()) audiences = json::array();  // kubectl create token sends null for none
  if (!audiences.is_array()) return Invalid(name, "spec.audiences", "must be a list of strings");
  for (std::size_t i = 0; i < audiences.size(); ++i) {
    if (!audiences[i].is_string() || audiences[i].get<std::string>().empty()) {
      return Invalid(name, "spec.audiences[" + std::to_string(i) + "]", "must be a non-empty string");
    }
    out.audiences.push_back(audiences[i].get<std::string>());
  }
  if (out.audiences.empty()) out.audiences.emplace_back(kApiAudience);  // the API server's own
  if (spec.contains("boundObjectRef") && !spec["boundObjectRef"].is_null()) {
    const json& ref = spec["boundObjectRef"];
    if (!ref.is_object()) return Invalid(name, "spec.boundObjectRef", "must be an object");
    // kube-apiserver also binds to a Secret or a Node; nothing here asks for those.
    if (ref.value("kind", "") != "Pod") {
      return Invalid(name, "spec.boundObjectRef.kind", "supported values: \"Pod\"");
    }
    if (ref.contains("apiVersion") && ref["apiVersion"] != "v1") {
      return Invalid(name, "spec.boundObjectRef.apiVersion", "supported values: \"v1\"");
    }
    out.pod = ref.value("name", "");
    if (out.pod.empty()) return Invalid(name, "spec.boundObjectRef.name", "Required value");
    out.pod_uid = ref.value("uid", "");
  }
  return out;
}

}  // namespace

void ApiServer::Impl::TokenRequest(Call& call) {
  http::Exchange& ex = *call.exchange;
  if (cluster.service_account_key.empty()) {
    return ReplyError(ex, ServiceUnavailableError("this API server has no service account signing key"));
  }
  auto body = ParseBody(call);
  if (!body.ok()) return ReplyError(ex, body.error());
  auto spec = ParseSpec(call.name, *body);
  if (!spec.ok()) return ReplyError(ex, spec.error());
  TokenSpec& token_spec = *spec;

  ObjectPtr account = cluster.storage.Get("serviceaccounts", call.ns, call.name);
  if (!account) return ReplyError(ex, NotFoundError("serviceaccounts", "", call.name));
  json bound = nullptr;
  if (!token_spec.pod.empty()) {
    ObjectPtr pod = cluster.storage.Get("pods", call.ns, token_spec.pod);
    if (!pod) return ReplyError(ex, NotFoundError("pods", "", token_spec.pod));
    const std::string uid = workload::Uid(*pod);
    if (!token_spec.pod_uid.empty() && token_spec.pod_uid != uid) {
      return ReplyError(ex, ConflictError("pods", "", token_spec.pod,
                                          "the UID in the bound object reference (" + token_spec.pod_uid +
                                              ") does not match the UID in record. The object might have been "
                                              "deleted and then recreated"));
    }
    token_spec.pod_uid = uid;
    bound = {{"kind", "Pod"}, {"apiVersion", "v1"}, {"name", token_spec.pod}, {"uid", uid}};
  }
  // As kube-apiserver's --service-account-max-token-expiration: shortened,
  // never refused. Its --service-account-extend-token-expiration (a pod's
  // 3607 s token made to last a year) has no counterpart here.
  std::string warning;
  if (cluster.max_token_expiration_seconds) {
    auto cap = cluster.max_token_expiration_seconds();
    if (!cap.ok()) return ReplyError(ex, ServiceUnavailableError("the token's maximum lifetime cannot be read now"));
    if (*cap > 0 && token_spec.expiration_seconds > *cap) {
      warning = "requested expiration of " + std::to_string(token_spec.expiration_seconds) + " seconds shortened to " +
                std::to_string(*cap) + " seconds";
      token_spec.expiration_seconds = *cap;
    }
  }

  auto id = NewUid(cluster.random);
  if (!id.ok()) return ReplyError(ex, id.error());
  const TimePoint now = cluster.clock.Now();
  ServiceAccountClaims claims;
  claims.ns = call.ns;
  claims.service_account = call.name;
  claims.service_account_uid = workload::Uid(*account);
  claims.pod = token_spec.pod;
  claims.pod_uid = token_spec.pod_uid;
  claims.id = *std::move(id);
  claims.audiences = token_spec.audiences;
  claims.issued_at = UnixSeconds(now);
  claims.expires_at = claims.issued_at + token_spec.expiration_seconds;

  json spec_out = {{"audiences", token_spec.audiences}, {"expirationSeconds", token_spec.expiration_seconds}};
  if (!bound.is_null()) spec_out["boundObjectRef"] = std::move(bound);
  const json response = {
      {"apiVersion", "authentication.k8s.io/v1"},
      {"kind", "TokenRequest"},
      {"metadata", {{"name", call.name}, {"namespace", call.ns}, {"creationTimestamp", FormatRfc3339(now)}}},
      {"spec", std::move(spec_out)},
      {"status",
       {{"token", SignServiceAccountToken(claims, cluster.service_account_key)},
        {"expirationTimestamp", FormatRfc3339(now + std::chrono::seconds(token_spec.expiration_seconds))}}}};
  ReplyJson(ex, 201, response.dump(), warning);
}

namespace {

// A service account token that is valid now for one of `audiences`: its
// claims and the audiences it was accepted for.
struct ReviewedToken {
  ServiceAccountClaims claims;
  std::vector<std::string> audiences;
};

UserInfo ServiceAccountUserOf(const ServiceAccountClaims& claims) {
  return UserInfo{"system:serviceaccount:" + claims.ns + ":" + claims.service_account,
                  {"system:serviceaccounts", "system:serviceaccounts:" + claims.ns, "system:authenticated"}};
}

std::optional<ReviewedToken> Review(const Cluster& cluster, std::string_view token,
                                    const std::vector<std::string>& audiences) {
  auto claims = VerifiedServiceAccountClaims(token, cluster.service_account_key);
  if (!claims) return std::nullopt;
  const std::int64_t now = UnixSeconds(cluster.clock.Now());
  if (now >= claims->expires_at || now < claims->issued_at) return std::nullopt;
  // A token for another audience (a Vault role, say) is not for this reviewer.
  ReviewedToken reviewed{*claims, {}};
  for (const std::string& audience : audiences) {
    if (std::find(claims->audiences.begin(), claims->audiences.end(), audience) != claims->audiences.end()) {
      reviewed.audiences.push_back(audience);
    }
  }
  if (reviewed.audiences.empty()) return std::nullopt;
  // Bound tokens die with what they are bound to, even before they expire.
  ObjectPtr account = cluster.storage.Get("serviceaccounts", claims->ns, claims->service_account);
  if (!account || workload::Uid(*account) != claims->service_account_uid) return std::nullopt;
  if (!claims->pod.empty()) {
    ObjectPtr pod = cluster.storage.Get("pods", claims->ns, claims->pod);
    if (!pod || workload::Uid(*pod) != claims->pod_uid) return std::nullopt;
  }
  return reviewed;
}

}  // namespace

std::optional<UserInfo> ApiServer::Impl::ServiceAccountUser(std::string_view token) const {
  auto reviewed = Review(cluster, token, {std::string(kApiAudience)});
  if (!reviewed) return std::nullopt;
  return ServiceAccountUserOf(reviewed->claims);
}

// As kube-apiserver's authentication.k8s.io/v1 TokenReview for service
// account tokens (the only bearer tokens a workload holds): the answer is
// in the status, 201 whether or not the token is good.
void ApiServer::Impl::TokenReview(Call& call) {
  http::Exchange& ex = *call.exchange;
  auto body = ParseBody(call);
  if (!body.ok()) return ReplyError(ex, body.error());
  const json& request = *body;
  if (request.contains("kind") && request["kind"] != "TokenReview") {
    return ReplyError(ex,
                      BadRequestError("the body of the request must be a TokenReview, not " + request["kind"].dump()));
  }
  const json spec = request.value("spec", json::object());
  if (!spec.is_object() || !spec.contains("token") || !spec["token"].is_string() ||
      spec["token"].get<std::string>().empty()) {
    return ReplyError(ex, InvalidError("TokenReview", "authentication.k8s.io", "",
                                       {{"FieldValueRequired", "Required value", "spec.token"}}));
  }
  std::vector<std::string> audiences;
  json asked = spec.value("audiences", json::array());
  if (asked.is_null()) asked = json::array();
  if (!asked.is_array()) {
    return ReplyError(ex, InvalidError("TokenReview", "authentication.k8s.io", "",
                                       {{"FieldValueInvalid", "must be a list of strings", "spec.audiences"}}));
  }
  for (const json& audience : asked) {
    if (audience.is_string() && !audience.get<std::string>().empty()) audiences.push_back(audience);
  }
  if (audiences.empty()) audiences.emplace_back(kApiAudience);  // the API server's own

  json status;
  if (auto reviewed = cluster.service_account_key.empty()
                          ? std::nullopt
                          : Review(cluster, spec["token"].get<std::string>(), audiences)) {
    const ServiceAccountClaims& claims = reviewed->claims;
    const UserInfo user = ServiceAccountUserOf(claims);
    json extra = {{"authentication.kubernetes.io/credential-id", {"JTI=" + claims.id}}};
    if (!claims.pod.empty()) {
      extra["authentication.kubernetes.io/pod-name"] = {claims.pod};
      extra["authentication.kubernetes.io/pod-uid"] = {claims.pod_uid};
    }
    status = {{"authenticated", true},
              {"user",
               {{"username", user.name},
                {"uid", claims.service_account_uid},
                {"groups", user.groups},
                {"extra", std::move(extra)}}},
              {"audiences", reviewed->audiences}};
  } else {
    status = {{"user", json::object()}, {"error", "invalid bearer token"}};
  }
  const json response = {{"apiVersion", "authentication.k8s.io/v1"},
                         {"kind", "TokenReview"},
                         {"metadata", {{"creationTimestamp", nullptr}}},
                         {"spec", spec},
                         {"status", std::move(status)}};
  ReplyJson(ex, 201, response.dump());
}

}  // namespace septa::kubesim
