// The portal as a browser meets it on septad's REST listener: its files at
// every path that is not the API's, under the content security policy, and
// the API's own answers unchanged beside them.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "services/base/file.h"
#include "services/rest/web_app.h"
#include "tests/integration/api/api_fixture.h"
#include "tests/support/temp_dir.h"

namespace septa::test {
namespace {

constexpr char kPortalIndex[] = "<!doctype html><title>Septa</title><script type=module src=/assets/app-1.js></script>";

class PortalTest : public ApiTest {
 protected:
  void Configure(config::Config& config) override {
    web_.Write("index.html", kPortalIndex);
    web_.Write("assets/app-1.js", "export {}");
    config.web_dir = web_.path();
  }
  TempDir web_;
};

TEST_F(PortalTest, TheAppIsServedAtItsRoutesUnderThePolicy) {
  for (const std::string path : {"/", "/vclusters/train", "/sign-in?next=%2Fvclusters"}) {
    HttpResult r = http_->Send("GET", path);
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.body, kPortalIndex) << path;
    EXPECT_EQ(r.header("content-type"), "text/html; charset=utf-8") << path;
    EXPECT_EQ(r.header("content-security-policy"), rest::kWebContentSecurityPolicy) << path;
    EXPECT_EQ(r.header("x-content-type-options"), "nosniff") << path;
    EXPECT_EQ(r.header("cache-control"), "no-cache") << path;
  }
  HttpResult js = http_->Send("GET", "/assets/app-1.js");
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.header("cache-control"), "public, max-age=31536000, immutable");
  HttpResult again = http_->Send("GET", "/assets/app-1.js", "", {{"If-None-Match", js.header("etag")}});
  EXPECT_EQ(again.status, 304);
  EXPECT_EQ(http_->Send("GET", "/assets/app-0.js").status, 404);
}

// The API keeps its own answers: a mistyped API path is the API's 404 in
// problem+json, never the app's page, and only GET reaches the app.
TEST_F(PortalTest, TheApiIsNeverAnsweredWithTheApp) {
  for (const std::string path : {"/v1/nothing", "/v1", "/v1/tenants/acme/nothing"}) {
    HttpResult r = Call(admin_, "GET", path);
    ExpectProblem(r, 404, "", path);
    EXPECT_EQ(r.header("content-type"), "application/problem+json") << path;
    EXPECT_EQ(r.header("x-content-type-options"), "nosniff") << path;
  }
  ExpectProblem(http_->Send("POST", "/", "{}", {{"Content-Type", "application/json"}}), 404, "", "POST /");
  EXPECT_EQ(http_->Send("GET", "/healthz").body, "{\"status\":\"ok\"}\n");
  EXPECT_EQ(http_->Send("GET", "/v1/tenants").status, 401);
}

TEST_F(PortalTest, StartRefusesADirectoryThatIsNotABuiltPortal) {
  TempDir empty;
  config::Config config;
  config.data_dir = data_dir_;  // the first one's: its key-encryption key
  config.database_url = db_->url();
  config.http_addr = "127.0.0.1:0";
  config.grpc_addr = "127.0.0.1:0";
  config.provisioner = false;
  config.web_dir = empty.path();
  app_.reset();  // one septad per data directory at a time
  auto second = app::SeptadApp::Start(config);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kInvalidArgument);
  EXPECT_NE(second.status().ToString().find("web_dir"), std::string::npos) << second.status().ToString();
  EXPECT_NE(second.status().message().find("has no index.html"), std::string::npos) << second.status().ToString();
}

// Sessions over the real listener, as the portal's pages use them: signed in
// by an API token or a one-time code, a cookie the page cannot read, and no
// state change from another site.
class SessionTest : public PortalTest {
 protected:
  void Configure(config::Config& config) override {
    PortalTest::Configure(config);
    config.sign_in_link = true;
  }

  // What a browser on a page of this server sends besides the cookie.
  std::map<std::string, std::string> Browser(const std::string& cookie, const std::string& csrf = "") const {
    std::map<std::string, std::string> h = {{"Host", Host()}, {"Origin", "http://" + Host()}};
    if (!cookie.empty()) h["Cookie"] = "theme=dark; " + cookie + "; other=1";
    if (!csrf.empty()) h["X-Septa-CSRF"] = csrf;
    h["Content-Type"] = "application/json";
    return h;
  }
  std::string Host() const { return "127.0.0.1:" + std::to_string(app_->http_port()); }

  struct SignedIn {
    std::string cookie;  // "septa_session=..."
    std::string set_cookie;
    nlohmann::json session;
  };
  SignedIn SignIn(const nlohmann::json& body) {
    HttpResult r = http_->Send("POST", "/v1/sessions", body.dump(), Browser(""));
    EXPECT_EQ(r.status, 201) << r.body;
    SignedIn out;
    out.set_cookie = r.header("set-cookie");
    out.cookie = out.set_cookie.substr(0, out.set_cookie.find(';'));
    out.session = nlohmann::json::parse(r.body, nullptr, false);
    return out;
  }
  static std::string TokenIdOf(const std::string& token) { return token.substr(6, 16); }
};

TEST_F(SessionTest, SignInSetsACookieThePageCannotRead) {
  CreateTenant("acme");
  const std::string token = CreateToken("tenant:acme", "owner");
  HttpResult r = http_->Send("POST", "/v1/sessions", nlohmann::json{{"token", token}}.dump(), Browser(""));
  ASSERT_EQ(r.status, 201) << r.body;
  const std::string set_cookie = r.header("set-cookie");
  EXPECT_TRUE(set_cookie.starts_with("septa_session=septa_")) << set_cookie;
  for (const char* flag : {"; Path=/", "; HttpOnly", "; SameSite=Strict", "; Max-Age=43200"}) {
    EXPECT_NE(set_cookie.find(flag), std::string::npos) << flag << " in " << set_cookie;
  }
  EXPECT_EQ(set_cookie.find("Secure"), std::string::npos) << "plain HTTP: a Secure cookie would never come back";
  EXPECT_EQ(r.header("cache-control"), "no-store");
  const nlohmann::json session = nlohmann::json::parse(r.body);
  EXPECT_EQ(session["principal"], "tenant:acme");
  EXPECT_EQ(session["tenant"], "acme");
  EXPECT_EQ(session["role"], "owner");
  EXPECT_EQ(session["csrf_token"].get<std::string>().size(), 43u);
  EXPECT_TRUE(session["expire_time"].get<std::string>().ends_with("Z")) << session;
  EXPECT_EQ(r.body.find(token), std::string::npos);

  const std::string cookie = set_cookie.substr(0, set_cookie.find(';'));
  HttpResult current = http_->Send("GET", "/v1/sessions/current", "", Browser(cookie));
  ASSERT_EQ(current.status, 200) << current.body;
  EXPECT_EQ(nlohmann::json::parse(current.body), session);
  // Bearer callers keep their way in; a session is not one of them.
  ExpectProblem(Call(token, "GET", "/v1/sessions/current"), 401, "", "a bearer token has no session");
  const std::string cookie_value = cookie.substr(cookie.find('=') + 1);
  ExpectProblem(Call(cookie_value, "GET", "/v1/tenants/acme"), 401, "", "the cookie's value as a bearer token");
}

TEST_F(SessionTest, TheCookieActsAsItsTenantAndNoOther) {
  CreateTenant("acme");
  CreateTenant("victim");
  const SignedIn acme = SignIn({{"token", CreateToken("tenant:acme", "owner")}});
  EXPECT_EQ(http_->Send("GET", "/v1/tenants/acme", "", Browser(acme.cookie)).status, 200);
  ExpectProblem(http_->Send("GET", "/v1/tenants/victim", "", Browser(acme.cookie)), 404, "", "another tenant");
  ExpectProblem(http_->Send("GET", "/v1/tenants/victim/vclusters", "", Browser(acme.cookie)), 404, "",
                "another tenant's clusters");
  ExpectProblem(
      http_->Send("POST", "/v1/tokens", nlohmann::json{{"principal", "tenant:victim"}, {"role", "owner"}}.dump(),
                  Browser(acme.cookie, acme.session["csrf_token"])),
      404, "", "a token for another tenant");
}

// A page of another site can make the browser send the cookie (a form, a
// fetch without CORS); none of that may change anything.
TEST_F(SessionTest, AStateChangeNeedsThisOriginAndTheCsrfToken) {
  CreateTenant("acme");
  const SignedIn acme = SignIn({{"token", CreateToken("tenant:acme", "owner")}});
  const std::string csrf = acme.session["csrf_token"];
  const std::string body = nlohmann::json{{"principal", "tenant:acme"}, {"role", "viewer"}}.dump();
  auto without = [&](const std::string& header) {
    auto h = Browser(acme.cookie, csrf);
    h.erase(header);
    return h;
  };
  ExpectProblem(http_->Send("POST", "/v1/tokens", body, without("X-Septa-CSRF")), 403, "", "no CSRF token");
  ExpectProblem(http_->Send("POST", "/v1/tokens", body, without("Origin")), 403, "", "no Origin");
  auto wrong = Browser(acme.cookie, std::string(43, 'a'));
  ExpectProblem(http_->Send("POST", "/v1/tokens", body, wrong), 403, "", "a wrong CSRF token");
  auto other_site = Browser(acme.cookie, csrf);
  other_site["Origin"] = "http://evil.example";
  HttpResult refused = http_->Send("POST", "/v1/tokens", body, other_site);
  ExpectProblem(refused, 403, "", "another origin");
  EXPECT_NE(refused.body.find("cross-site request refused"), std::string::npos) << refused.body;
  auto listed = Call(admin_, "GET", "/v1/tokens");  // the bootstrap admin's and acme's
  EXPECT_EQ(nlohmann::json::parse(listed.body)["tokens"].size(), 2u) << "nothing was issued: " << listed.body;

  EXPECT_EQ(http_->Send("POST", "/v1/tokens", body, Browser(acme.cookie, csrf)).status, 201);
  // Another site may not sign its visitor in either (login CSRF).
  auto login = Browser("");
  login["Origin"] = "http://evil.example";
  ExpectProblem(
      http_->Send("POST", "/v1/sessions", nlohmann::json{{"token", CreateToken("tenant:acme", "owner")}}.dump(), login),
      403, "", "sign-in from another origin");
}

TEST_F(SessionTest, SigningOutOrRevokingTheTokenEndsTheSession) {
  CreateTenant("acme");
  const std::string token = CreateToken("tenant:acme", "owner");
  const SignedIn first = SignIn({{"token", token}});
  const SignedIn second = SignIn({{"token", token}});
  ExpectProblem(http_->Send("DELETE", "/v1/sessions/current", "", Browser(first.cookie)), 403, "",
                "sign-out needs CSRF");
  HttpResult out =
      http_->Send("DELETE", "/v1/sessions/current", "", Browser(first.cookie, first.session["csrf_token"]));
  ASSERT_EQ(out.status, 204) << out.body;
  EXPECT_TRUE(out.header("set-cookie").starts_with("septa_session=; Path=/; Max-Age=0")) << out.header("set-cookie");
  HttpResult ended = http_->Send("GET", "/v1/tenants/acme", "", Browser(first.cookie));
  ExpectProblem(ended, 401, "", "a signed-out session");
  EXPECT_NE(ended.header("set-cookie").find("Max-Age=0"), std::string::npos) << "the dead cookie is cleared";
  EXPECT_EQ(http_->Send("GET", "/v1/tenants/acme", "", Browser(second.cookie)).status, 200);

  ASSERT_EQ(Call(admin_, "DELETE", "/v1/tokens/" + TokenIdOf(token)).status, 204);
  HttpResult revoked = http_->Send("GET", "/v1/tenants/acme", "", Browser(second.cookie));
  ExpectProblem(revoked, 401, "", "the token's session after it was revoked");
  EXPECT_NE(revoked.body.find("the API token it was made from was revoked"), std::string::npos) << revoked.body;
}

TEST_F(SessionTest, TheSignInLinkWorksOnce) {
  auto link = base::ReadFile(std::filesystem::path(data_dir_) / "sign-in-link");
  ASSERT_TRUE(link.ok()) << link.status().ToString();
  const std::string prefix = "http://127.0.0.1:" + std::to_string(app_->http_port()) + "/sign-in#code=";
  ASSERT_TRUE(link->starts_with(prefix)) << *link;
  std::string code = link->substr(prefix.size());
  while (!code.empty() && code.back() == '\n') code.pop_back();
  const SignedIn admin = SignIn({{"sign_in_code", code}});
  EXPECT_EQ(admin.session["principal"], "admin");
  EXPECT_EQ(http_->Send("GET", "/v1/tenants", "", Browser(admin.cookie)).status, 200);
  HttpResult again = http_->Send("POST", "/v1/sessions", nlohmann::json{{"sign_in_code", code}}.dump(), Browser(""));
  ExpectProblem(again, 401, "", "the code a second time");
  EXPECT_NE(again.body.find("has been used"), std::string::npos) << again.body;
}

TEST_F(SessionTest, BadSignInsAreNamedAndSignNobodyIn) {
  CreateTenant("acme");
  const std::string token = CreateToken("tenant:acme", "owner");
  struct Case {
    std::string body;
    int status;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"", 400, ""},
      {"[]", 400, ""},
      {"{}", 400, ""},
      {"{\"token\": 5}", 400, "token"},
      {"{\"token\": \"\"}", 400, "token"},
      {"{\"password\": \"x\"}", 400, "password"},
      {nlohmann::json{{"token", token}, {"sign_in_code", token}}.dump(), 400, "token"},
      {"{\"token\": \"septa_0000000000000000_" + std::string(43, 'A') + "\"}", 401, ""},
      {"{\"sign_in_code\": \"" + token + "\"}", 401, ""},
      {"not json", 400, ""},
      {std::string(2000, '[') + std::string(2000, ']'), 400, ""},  // deeper than any document may be
      {"{\"token\": \"\xff\xfe\"}", 400, ""},                      // not UTF-8
      {std::string("{\"token\": \"a\0b\"}", 16), 400, ""},         // a raw NUL
      {"{\"tok\\u0007en\": \"x\"}", 400, "tok\\u0007en"},          // a control character in a name
  };
  for (const Case& c : cases) {
    HttpResult r = http_->Send("POST", "/v1/sessions", c.body, Browser(""));
    ExpectProblem(r, c.status, c.field, c.body);
    EXPECT_EQ(r.header("set-cookie"), "") << c.body;
  }
  auto text = Browser("");
  text["Content-Type"] = "text/plain";
  ExpectProblem(http_->Send("POST", "/v1/sessions", nlohmann::json{{"token", token}}.dump(), text), 400, "Content-Type",
                "text/plain");
  ExpectProblem(http_->Send("GET", "/v1/sessions/current", "", Browser("septa_session=garbage")), 401, "",
                "a forged cookie");
  // The bearer header alone signs in too (curl, scripts).
  HttpResult bearer = http_->Send("POST", "/v1/sessions", "", Bearer(token));
  EXPECT_EQ(bearer.status, 201) << bearer.body;
}

}  // namespace
}  // namespace septa::test
