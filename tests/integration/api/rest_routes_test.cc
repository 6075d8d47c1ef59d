// The REST server's routes against the protos' (septa.v1.http) options on a
// running septad. Routes are derived from the options (services/apiv1/api.h:
// an RPC without a handler stops septad from starting), so what is left to
// check is that nothing under /v1/ is served beside them and that each
// binding answers at its path. Also: the errors it writes have the shape
// api/openapi.yaml documents.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "services/apiv1/auth_rule.h"
#include "services/apiv1/http_bindings.h"
#include "services/base/file.h"
#include "services/base/yaml_json.h"
#include "services/rest/rest_api.h"
#include "tests/integration/api/api_fixture.h"

namespace septa::test {
namespace {

// `path` with every {variable} replaced by `value`.
std::string Concrete(std::string path, const std::string& value) {
  for (std::size_t open; (open = path.find('{')) != std::string::npos;) {
    path.replace(open, path.find('}', open) - open + 1, value);
  }
  return path;
}

class RestRoutesTest : public ApiTest {
 protected:
  std::vector<apiv1::HttpBinding> Bindings() {
    auto bindings = apiv1::ApiHttpBindings();
    EXPECT_TRUE(bindings.ok()) << bindings.status().ToString();
    return bindings.ok() ? *bindings : std::vector<apiv1::HttpBinding>{};
  }
};

TEST_F(RestRoutesTest, EveryV1RouteIsTheBindingOfAnRpc) {
  const auto bindings = Bindings();
  int v1_routes = 0;
  std::vector<std::string> own;
  for (const rest::RouteInfo& route : app_->rest_api().Routes()) {
    if (!route.pattern.starts_with("/v1/")) continue;
    if (!route.rpc) {
      own.push_back(route.method + " " + route.pattern);
      continue;
    }
    ++v1_routes;
    int matches = 0;
    for (const apiv1::HttpBinding& b : bindings) {
      matches += b.verb == route.method && apiv1::PathShape(b.path) == apiv1::PathShape(route.pattern);
    }
    EXPECT_EQ(matches, 1) << route.method << " " << route.pattern
                          << " is served over REST but is the (septa.v1.http) binding of no RPC "
                             "(or of several): annotate the RPC in api/proto/septa/v1/";
  }
  EXPECT_GE(v1_routes, 10);  // tenants 5, trust tiers 2, tokens 3
  // REST's own, for the portal's cookie (services/rest/session_routes.h)
  // and people's sign-in to it (person_sign_in_routes.h).
  EXPECT_THAT(own, ::testing::ElementsAre("POST /v1/sessions", "GET /v1/sessions/current",
                                          "DELETE /v1/sessions/current", "GET /v1/sessions/providers",
                                          "GET /v1/sessions/oidc/start", "GET /v1/sessions/oidc/callback"));
}

// The routes answer at the paths the protos give: without a token, every
// RPC's path asks for one (401), but an anonymous RPC's, which takes the
// request's own credential, reads the request (an empty body: 400).
TEST_F(RestRoutesTest, ServedPathsAnswerAsTheProtosSay) {
  int anonymous = 0;
  for (const apiv1::HttpBinding& b : Bindings()) {
    const std::string target = Concrete(b.path, "x");
    HttpResult r = Call("", b.verb, target);
    auto rule = apiv1::LoadAuthRule(*b.method);
    ASSERT_TRUE(rule.ok()) << rule.status().ToString();
    const bool open = rule->caller == apiv1::Caller::kAnonymous;
    anonymous += open;
    EXPECT_EQ(r.status, open ? 400 : 401) << b.verb << " " << target << ": " << r.body;
  }
  EXPECT_EQ(anonymous, 1) << "the token exchange alone";
}

TEST_F(RestRoutesTest, ErrorsHaveTheDocumentedProblemShape) {
  auto text = base::ReadFile(SEPTA_OPENAPI_YAML);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  const nlohmann::json problem = base::YamlToJson(YAML::Load(*text))["components"]["schemas"]["Problem"];
  ASSERT_TRUE(problem.is_object());
  const nlohmann::json& properties = problem.at("properties");
  auto check = [&](const HttpResult& r) {
    EXPECT_EQ(r.header("content-type"), "application/problem+json");
    const auto body = nlohmann::json::parse(r.body);
    for (const auto& [key, value] : body.items()) EXPECT_TRUE(properties.contains(key)) << "undocumented " << key;
    for (const auto& key : problem.at("required")) EXPECT_TRUE(body.contains(key)) << "missing " << key;
    EXPECT_EQ(body.at("status"), r.status);
    const auto& codes = properties.at("code").at("enum");
    EXPECT_NE(std::find(codes.begin(), codes.end(), body.at("code")), codes.end()) << body.at("code");
    for (const auto& v : body.value("violations", nlohmann::json::array())) {
      for (const auto& [key, value] : v.items()) {
        EXPECT_TRUE(properties.at("violations").at("items").at("properties").contains(key)) << key;
      }
    }
    return body;
  };
  check(Call("", "GET", "/v1/tenants"));
  const auto invalid = check(Call(admin_, "POST", "/v1/tenants", R"({"name": "Not A Label", "trust_tier": "shared"})"));
  EXPECT_FALSE(invalid.value("violations", nlohmann::json::array()).empty()) << invalid;
}

}  // namespace
}  // namespace septa::test
