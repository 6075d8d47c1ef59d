// Bindings that cannot be served or documented are refused, naming the RPC
// and what is wrong: each case is a small .proto built in its own pool.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "services/apiv1/http_bindings.h"
#include "services/apiv1/openapi.h"
#include "tests/support/proto_test_pool.h"

namespace septa::apiv1 {
namespace {

using ::testing::HasSubstr;

// t.S with one method per entry of `rules` (the text of an HttpRule), all
// taking t.Req {name, thing: t.Thing {name, etag}, tags: repeated string}.
class TestPool {
 public:
  explicit TestPool(const std::vector<std::string>& rules) : pool_(Options(rules)) {}
  Result<std::vector<HttpBinding>> Load() const { return LoadHttpBindings(pool_.pool(), {"t.proto"}); }

 private:
  static std::vector<std::string> Options(const std::vector<std::string>& rules) {
    std::vector<std::string> options;
    for (const std::string& rule : rules) options.push_back("[septa.v1.http] { " + rule + " }");
    return options;
  }
  test::ProtoTestPool pool_;
};

std::string Error(const std::vector<std::string>& rules) {
  TestPool pool(rules);
  auto bindings = pool.Load();
  return bindings.ok() ? "loaded" : bindings.status().message();
}

std::string DocumentError(const std::vector<std::string>& rules) {
  TestPool pool(rules);
  auto bindings = pool.Load();
  if (!bindings.ok()) return "bindings: " + bindings.status().message();
  auto doc = OpenApiDocument(*bindings, ProtoComments());
  return doc.ok() ? "documented" : doc.status().message();
}

TEST(BadBindings, AreRefusedNamingTheRpcAndTheProblem) {
  EXPECT_THAT(Error({""}), HasSubstr("t.S.M0: has no (septa.v1.http) option"));
  EXPECT_THAT(Error({R"(get: "things")"}), HasSubstr("must start with /v1/"));
  EXPECT_THAT(Error({R"(get: "/v1//things")"}), HasSubstr("empty segment"));
  EXPECT_THAT(Error({R"(get: "/v1/things/{nope}")"}), HasSubstr("\"nope\" names no field of t.Req"));
  EXPECT_THAT(Error({R"(get: "/v1/things/x{name}")"}), HasSubstr("must be a whole {field}"));
  EXPECT_THAT(Error({R"(get: "/v1/things/{thing}")"}), HasSubstr("must be a singular scalar field"));
  EXPECT_THAT(Error({R"(get: "/v1/things/{tags}")"}), HasSubstr("must be a singular scalar field"));
  EXPECT_THAT(Error({R"(get: "/v1/things/{thing.nope}")"}), HasSubstr("\"thing.nope\" names no field"));
  EXPECT_THAT(Error({R"(post: "/v1/things" body: "name")"}), HasSubstr("body \"name\" must name a message field"));
  EXPECT_THAT(Error({R"(post: "/v1/things" body: "thing" headers { header: "If-Match" field: "thing.nope" })"}),
              HasSubstr("\"thing.nope\" names no field"));
  EXPECT_THAT(Error({R"(get: "/v1/things" body: "thing")"}), HasSubstr("GET takes no body"));
  EXPECT_THAT(Error({R"(delete: "/v1/things" body: "*")"}), HasSubstr("DELETE takes no body"));
  EXPECT_THAT(Error({R"(get: "/v1/a")", R"(get: "/v1/b/{nope}")"}), HasSubstr("t.S.M1:"));
  EXPECT_THAT(Error({R"(post: "/v1/things/{name}:")"}), HasSubstr("the custom verb must be lowercase letters"));
  EXPECT_THAT(Error({R"(post: "/v1/things/{name}:Do-It")"}), HasSubstr("the custom verb must be lowercase letters"));
  EXPECT_THAT(Error({R"(post: "/v1/things/{nope}:sleep")"}), HasSubstr("\"nope\" names no field of t.Req"));
}

TEST(BadBindings, ACustomMethodBindsItsVariableAndAnswers200) {
  TestPool pool({R"(post: "/v1/things/{name}:sleep" headers { header: "If-Match" field: "thing.etag" })"});
  auto bindings = pool.Load();
  ASSERT_TRUE(bindings.ok()) << bindings.status().ToString();
  const HttpBinding& b = (*bindings)[0];
  EXPECT_EQ(b.custom_verb, "sleep");
  ASSERT_EQ(b.path_variables.size(), 1u);
  EXPECT_EQ(b.path_variables[0].field.text, "name");
  EXPECT_EQ(b.success_status, 200);
  EXPECT_EQ(PathShape(b.path), "/v1/things/{}:sleep");
}

TEST(BadBindings, AGoodOneBindsEveryField) {
  TestPool pool(
      {R"(patch: "/v1/things/{thing.name}" body: "thing" headers { header: "If-Match" field: "thing.etag" })"});
  auto bindings = pool.Load();
  ASSERT_TRUE(bindings.ok()) << bindings.status().ToString();
  ASSERT_EQ(bindings->size(), 1u);
  const HttpBinding& b = (*bindings)[0];
  EXPECT_EQ(b.verb, "PATCH");
  ASSERT_EQ(b.query.size(), 2u);  // name and tags: neither path, body nor header
  EXPECT_EQ(b.query[0]->name(), "name");
  EXPECT_EQ(b.query[1]->name(), "tags");
}

TEST(BadBindings, DocumentRefusesWhatOpenApiCannotSay) {
  // A message-typed query parameter (thing is bound by nothing).
  EXPECT_THAT(DocumentError({R"(get: "/v1/things")"}), HasSubstr("query parameter thing must be a scalar"));
  // One path whose variables two RPCs name differently.
  EXPECT_THAT(DocumentError(
                  {R"(patch: "/v1/things/{name}" body: "thing")", R"(post: "/v1/things/{thing.etag}" body: "thing")"}),
              HasSubstr("names its variables unlike /v1/things/{name}"));
  // Two RPCs on one method and path.
  EXPECT_THAT(DocumentError({R"(post: "/v1/things" body: "thing")", R"(post: "/v1/things" body: "thing")"}),
              HasSubstr("another RPC is bound to POST /v1/things"));
  EXPECT_EQ(DocumentError({R"(post: "/v1/things" body: "*")"}), "documented");
}

}  // namespace
}  // namespace septa::apiv1
