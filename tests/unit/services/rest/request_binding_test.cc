// REST's binding of a request into an RPC's message and of its response
// back (services/rest/request_binding.h), by the rules http.proto states,
// on the API's own bindings: what the integration tests see through a
// server, case by case here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "septa/v1/member.pb.h"
#include "septa/v1/tenant.pb.h"
#include "septa/v1/token.pb.h"
#include "septa/v1/vcluster.pb.h"
#include "services/rest/request_binding.h"
#include "tests/support/proto_test_pool.h"

namespace septa::rest {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace bh = boost::beast::http;

const apiv1::HttpBinding& BindingOf(std::string_view rpc) {
  static const std::vector<apiv1::HttpBinding> bindings = *apiv1::ApiHttpBindings();
  for (const apiv1::HttpBinding& b : bindings) {
    if (b.method->name() == rpc) return b;
  }
  throw std::invalid_argument("no RPC " + std::string(rpc));
}

struct Sent {
  Sent(std::string t, std::string b = "", std::map<std::string, std::string> h = {})
      : target(std::move(t)), body(std::move(b)), headers(std::move(h)) {}
  std::string target;
  std::string body;
  std::map<std::string, std::string> headers;
};

// Binds `sent` as REST does: the path's variables (`params`), then the rest.
Status Bind(const apiv1::HttpBinding& b, const Sent& sent, const std::map<std::string, std::string>& params,
            google::protobuf::Message& request) {
  http::Request req(bh::string_to_verb(b.verb), sent.target, 11);
  for (const auto& [name, value] : sent.headers) req.set(name, value);
  req.body() = sent.body;
  BindPath(b, params, request);
  return BindRequest(b, req, *http::ParseTarget(sent.target), request);
}

std::string FieldOf(const Status& st) { return st.violations().empty() ? "" : st.violations()[0].field; }

TEST(RestBinding, APatchChangesTheFieldsTheBodySentButNotThoseTheUrlOrAHeaderBind) {
  const auto& update = BindingOf("UpdateTenant");
  v1::UpdateTenantRequest r;
  ASSERT_TRUE(Bind(update, {"/v1/tenants/acme", R"({"name":"acme","display_name":"","etag":"3","labels":{}})"},
                   {{"tenant.name", "acme"}}, r)
                  .ok());
  EXPECT_EQ(r.tenant().name(), "acme");
  EXPECT_EQ(r.tenant().etag(), "3");  // no If-Match: the body's counts
  EXPECT_THAT(r.update_mask().paths(), ElementsAre("display_name", "labels"));

  v1::UpdateTenantRequest masked;
  ASSERT_TRUE(Bind(update, {"/v1/tenants/acme?update_mask=labels,quota.pods", R"({"display_name":"x"})"},
                   {{"tenant.name", "acme"}}, masked)
                  .ok());
  EXPECT_THAT(masked.update_mask().paths(), ElementsAre("labels", "quota.pods"));
  EXPECT_EQ(masked.tenant().display_name(), "x");
}

TEST(RestBinding, IfMatchWinsOverTheBodyAndAnEmptyPreconditionIsRefused) {
  const auto& update = BindingOf("UpdateTenant");
  v1::UpdateTenantRequest r;
  ASSERT_TRUE(
      Bind(update, {"/v1/tenants/acme", R"({"etag":"3"})", {{"If-Match", "W/\"5\""}}}, {{"tenant.name", "acme"}}, r)
          .ok());
  EXPECT_EQ(r.tenant().etag(), "5");
  v1::UpdateTenantRequest any;
  ASSERT_TRUE(
      Bind(update, {"/v1/tenants/acme", R"({"etag":"3"})", {{"If-Match", "*"}}}, {{"tenant.name", "acme"}}, any).ok());
  EXPECT_EQ(any.tenant().etag(), "");  // any version

  v1::UpdateTenantRequest empty;
  const Status sent_empty = Bind(update, {"/v1/tenants/acme", R"({"etag":""})"}, {{"tenant.name", "acme"}}, empty);
  EXPECT_EQ(FieldOf(sent_empty), "etag");
  EXPECT_THAT(sent_empty.message(), HasSubstr("is empty"));
  const Status header_empty =
      Bind(update, {"/v1/tenants/acme", "{}", {{"If-Match", "\"\""}}}, {{"tenant.name", "acme"}}, empty);
  EXPECT_EQ(FieldOf(header_empty), "If-Match");
}

TEST(RestBinding, TheBodyMayRepeatTheUrlsIdentifiersOnlyWithTheUrlsValue) {
  v1::UpdateTenantRequest patch;
  const Status renamed =
      Bind(BindingOf("UpdateTenant"), {"/v1/tenants/acme", R"({"name":"other"})"}, {{"tenant.name", "acme"}}, patch);
  EXPECT_EQ(FieldOf(renamed), "name");
  EXPECT_THAT(renamed.message(), HasSubstr("is immutable and must match the URL (\"acme\")"));

  // A variable outside the body, repeated by the body's field of its name.
  v1::CreateVirtualClusterRequest create;
  const Status moved =
      Bind(BindingOf("CreateVirtualCluster"), {"/v1/tenants/acme/vclusters", R"({"name":"train","tenant":"globex"})"},
           {{"tenant", "acme"}}, create);
  EXPECT_EQ(FieldOf(moved), "tenant");
  EXPECT_EQ(moved.violations()[0].description, "must match the URL (\"acme\")");

  // The whole request as the body ("*"): its fields are the path's.
  v1::IssueKubeconfigRequest issue;
  const Status other = Bind(BindingOf("IssueKubeconfig"),
                            {"/v1/tenants/acme/vclusters/train:kubeconfig", R"({"vcluster":"eval","role":"view"})"},
                            {{"tenant", "acme"}, {"vcluster", "train"}}, issue);
  EXPECT_EQ(FieldOf(other), "vcluster");
  v1::IssueKubeconfigRequest same;
  ASSERT_TRUE(Bind(BindingOf("IssueKubeconfig"),
                   {"/v1/tenants/acme/vclusters/train:kubeconfig", R"({"tenant":"acme","role":"view"})"},
                   {{"tenant", "acme"}, {"vcluster", "train"}}, same)
                  .ok());
  EXPECT_EQ(same.vcluster(), "train");
  EXPECT_EQ(same.role(), "view");
}

TEST(RestBinding, HeadersAndQueryParametersFillTheirFieldsAndBadNumbersNameTheParameter) {
  v1::CreateVirtualClusterRequest create;
  ASSERT_TRUE(Bind(BindingOf("CreateVirtualCluster"),
                   {"/v1/tenants/acme/vclusters", R"({"name":"train"})", {{"Idempotency-Key", "k-1"}}},
                   {{"tenant", "acme"}}, create)
                  .ok());
  EXPECT_EQ(create.idempotency_key(), "k-1");
  EXPECT_EQ(create.tenant(), "acme");
  EXPECT_EQ(create.virtual_cluster().name(), "train");

  const auto& list = BindingOf("ListTenants");
  v1::ListTenantsRequest page;
  ASSERT_TRUE(Bind(list, {"/v1/tenants?page_size=5&page_token=abc&filter=state%3DACTIVE"}, {}, page).ok());
  EXPECT_EQ(page.page_size(), 5);
  EXPECT_EQ(page.page_token(), "abc");
  EXPECT_EQ(page.filter(), "state=ACTIVE");
  for (const std::string bad : {"abc", "5x", "-", "1.5"}) {
    v1::ListTenantsRequest r;
    const Status st = Bind(list, {"/v1/tenants?page_size=" + bad}, {}, r);
    EXPECT_EQ(FieldOf(st), "page_size") << bad;
    EXPECT_THAT(st.message(), HasSubstr("must be an integer")) << bad;
  }
  v1::ListTenantsRequest huge;
  EXPECT_THAT(Bind(list, {"/v1/tenants?page_size=99999999999"}, {}, huge).message(), HasSubstr("is out of range"));
  v1::ListTenantsRequest blank;
  EXPECT_TRUE(Bind(list, {"/v1/tenants?page_size="}, {}, blank).ok());  // the default
  EXPECT_EQ(blank.page_size(), 0);
}

TEST(RestBinding, ARepeatedQueryParameterTakesEveryOccurrence) {
  test::ProtoTestPool pool({R"([septa.v1.http] { get: "/v1/things/{name}" })"});
  auto bindings = apiv1::LoadHttpBindings(pool.pool(), {"t.proto"});
  ASSERT_TRUE(bindings.ok()) << bindings.status().ToString();
  std::unique_ptr<google::protobuf::Message> r = pool.New("t.Req");
  ASSERT_TRUE(Bind((*bindings)[0], {"/v1/things/x?tags=a&tags=b%20c"}, {{"name", "x"}}, *r).ok());
  const auto* tags = r->GetDescriptor()->FindFieldByName("tags");
  ASSERT_EQ(r->GetReflection()->FieldSize(*r, tags), 2);
  EXPECT_EQ(r->GetReflection()->GetRepeatedString(*r, tags, 0), "a");
  EXPECT_EQ(r->GetReflection()->GetRepeatedString(*r, tags, 1), "b c");
}

// A parameter the route does not take is refused naming it, never ignored:
// `?validate_only=true` on a route without it must not write.
TEST(RestBinding, AnUnknownQueryParameterIsRefusedNamingIt) {
  v1::ListVirtualClustersRequest list;
  const Status unknown = Bind(BindingOf("ListVirtualClusters"), {"/v1/tenants/acme/vclusters?validate_only=true"},
                              {{"tenant", "acme"}}, list);
  EXPECT_EQ(unknown.code(), Code::kInvalidArgument);
  EXPECT_EQ(FieldOf(unknown), "validate_only");
  EXPECT_THAT(unknown.message(), HasSubstr("this route takes page_size, page_token, filter"));
  v1::GetTenantRequest get;
  const Status none = Bind(BindingOf("GetTenant"), {"/v1/tenants/acme?x=1"}, {{"name", "acme"}}, get);
  EXPECT_EQ(FieldOf(none), "x");
  EXPECT_THAT(none.message(), HasSubstr("takes none"));
  v1::ListVirtualClustersRequest known;
  EXPECT_TRUE(
      Bind(BindingOf("ListVirtualClusters"), {"/v1/tenants/acme/vclusters?page_size=3"}, {{"tenant", "acme"}}, known)
          .ok());
}

// A token endpoint's form (RFC 6749 §3.2): each parameter sets the string
// field of its name, %-escapes and '+' decoded; one the request has no field
// for is ignored, as OAuth says; a repeated one is refused.
TEST(RestBinding, AFormBodyFillsTheTopLevelStringFieldsAsOAuthSays) {
  const auto& exchange = BindingOf("ExchangeToken");
  const std::map<std::string, std::string> form = {
      {"Content-Type", "application/x-www-form-urlencoded; charset=UTF-8"}};
  v1::ExchangeTokenRequest r;
  ASSERT_TRUE(Bind(exchange,
                   {"/v1/tokens:exchange",
                    "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token=a.b.c"
                    "&subject_token_type=urn:ietf:params:oauth:token-type:jwt&scope=read+write&audience=x&&",
                    form},
                   {}, r)
                  .ok());
  EXPECT_EQ(r.grant_type(), "urn:ietf:params:oauth:grant-type:token-exchange");
  EXPECT_EQ(r.subject_token(), "a.b.c");
  EXPECT_EQ(r.subject_token_type(), "urn:ietf:params:oauth:token-type:jwt");

  v1::ExchangeTokenRequest twice;
  const Status repeated = Bind(exchange, {"/v1/tokens:exchange", "subject_token=a&subject_token=b", form}, {}, twice);
  EXPECT_EQ(repeated.code(), Code::kInvalidArgument);
  EXPECT_THAT(repeated.message(), HasSubstr("\"subject_token\" is sent more than once"));
  v1::ExchangeTokenRequest malformed;
  EXPECT_EQ(Bind(exchange, {"/v1/tokens:exchange", "subject_token=%zz", form}, {}, malformed).code(),
            Code::kInvalidArgument);
  v1::ExchangeTokenRequest not_utf8;
  EXPECT_EQ(FieldOf(Bind(exchange, {"/v1/tokens:exchange", "subject_token=%ff", form}, {}, not_utf8)), "subject_token");
  // The same RPC still takes JSON, by the JSON rules (an unknown field is refused there).
  v1::ExchangeTokenRequest json;
  EXPECT_TRUE(Bind(exchange,
                   {"/v1/tokens:exchange", R"({"subject_token":"a.b.c"})", {{"Content-Type", "application/json"}}}, {},
                   json)
                  .ok());
  EXPECT_EQ(json.subject_token(), "a.b.c");
  // A form is only taken where the binding says so.
  v1::CreateTokenRequest create;
  EXPECT_FALSE(Bind(BindingOf("CreateToken"), {"/v1/tokens", "principal=admin&role=owner", form}, {}, create).ok());
}

TEST(RestBinding, TheResponseCarriesItsStatusEtagLocationAndCachePolicy) {
  v1::ApiToken token;
  token.set_id("00ff");
  token.set_token("septa_00ff_secret");
  const http::Response created = RpcResponse(BindingOf("CreateToken"), token, false);
  EXPECT_EQ(created.result_int(), 201);
  EXPECT_EQ(created[bh::field::location], "/v1/tokens/00ff");
  EXPECT_EQ(created[bh::field::cache_control], "no-store");
  EXPECT_EQ(created[bh::field::content_type], "application/json");

  v1::VirtualCluster vc;
  vc.set_tenant("acme");
  vc.set_name("train");
  vc.set_etag("7");
  const http::Response made = RpcResponse(BindingOf("CreateVirtualCluster"), vc, false);
  EXPECT_EQ(made[bh::field::location], "/v1/tenants/acme/vclusters/train");
  EXPECT_EQ(made[bh::field::etag], "\"7\"");
  EXPECT_EQ(made.find(bh::field::cache_control), made.end());

  // validate_only (AIP-163): what would be made, made nowhere.
  const http::Response checked = RpcResponse(BindingOf("CreateVirtualCluster"), vc, true);
  EXPECT_EQ(checked.result_int(), 200);
  EXPECT_EQ(checked.find(bh::field::location), checked.end());
  EXPECT_EQ(checked.find(bh::field::etag), checked.end());
  v1::CreateVirtualClusterRequest request;
  EXPECT_FALSE(IsValidateOnly(request));
  request.set_validate_only(true);
  EXPECT_TRUE(IsValidateOnly(request));
  EXPECT_FALSE(IsValidateOnly(vc));  // no such field

  const http::Response got = RpcResponse(BindingOf("GetVirtualCluster"), vc, false);
  EXPECT_EQ(got.result_int(), 200);
  EXPECT_EQ(got.find(bh::field::location), got.end());

  const http::Response deleted = RpcResponse(BindingOf("DeleteTenant"), google::protobuf::Empty(), false);
  EXPECT_EQ(deleted.result_int(), 204);
  EXPECT_TRUE(deleted.body().empty());
}

// A member is one path segment whatever it holds: its Location escapes what
// a segment cannot carry, and the body may name it only as the URL does.
TEST(RestBinding, AMembersLocationIsOneEscapedSegmentAndItsPatchTakesTheRoleAndEtag) {
  v1::TenantMember member;
  member.set_tenant("acme");
  member.set_member("group:/eng/ml team");
  member.set_etag("1");
  const http::Response created = RpcResponse(BindingOf("CreateTenantMember"), member, false);
  EXPECT_EQ(created.result_int(), 201);
  EXPECT_EQ(created[bh::field::location], "/v1/tenants/acme/members/group:%2Feng%2Fml%20team");
  EXPECT_EQ(created[bh::field::etag], "\"1\"");

  const auto& patch = BindingOf("UpdateTenantMember");
  const std::map<std::string, std::string> params{{"tenant", "acme"}, {"member", "user:alice@acme.test"}};
  v1::UpdateTenantMemberRequest request;
  ASSERT_TRUE(
      Bind(patch, Sent("/v1/tenants/acme/members/user:alice@acme.test", R"({"role":"owner"})", {{"If-Match", "\"4\""}}),
           params, request)
          .ok());
  EXPECT_EQ(request.tenant(), "acme");
  EXPECT_EQ(request.member(), "user:alice@acme.test");
  EXPECT_EQ(request.role(), "owner");
  EXPECT_EQ(request.etag(), "4");
  v1::UpdateTenantMemberRequest renamed;
  const Status refused =
      Bind(patch, Sent("/v1/tenants/acme/members/user:alice@acme.test", R"({"member":"user:bob"})"), params, renamed);
  EXPECT_EQ(FieldOf(refused), "member") << refused.ToString();
  EXPECT_THAT(refused.message(), HasSubstr("is immutable and must match the URL"));
}

}  // namespace
}  // namespace septa::rest
