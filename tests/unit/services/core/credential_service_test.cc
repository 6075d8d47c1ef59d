// CredentialService on the FakeStore with a fake issuer: what the issuer is
// asked for (user, groups, ttl and the tier's cap), and that nothing is
// returned or kept when the issuer or the recording transaction fails.
#include "services/core/credential_service.h"

#include <set>

#include "tests/support/fake_issuer.h"
#include "tests/unit/services/core/core_fixture.h"

namespace septa::core {
namespace {

using namespace std::chrono_literals;

class CredentialServiceTest : public CoreTest {
 protected:
  void SetUp() override {
    MustCreate("acme", "isolated");  // cap: 8h
    tenancy::VirtualCluster vc;
    vc.tenant = "acme";
    vc.name = "train";
    vc.capacity.tier = gpu::Tier::kIsolated;
    vc.state = tenancy::VirtualClusterState::kReady;
    vc.endpoint = "https://127.0.0.1:6444/vc/acme/train";
    vc.create_time = vc.update_time = clock.Now();
    ASSERT_TRUE(store.Transact(TxMode::kReadWrite, [&](Tx& tx) { return tx.VirtualClusters().Insert(vc); }).ok());
  }

  std::vector<VclusterCredential> Rows() {
    std::vector<VclusterCredential> rows;
    EXPECT_TRUE(store
                    .Transact(TxMode::kReadOnly,
                              [&](Tx& tx) -> Status {
                                auto all = tx.Credentials().List({.tenant = "acme", .vcluster = "train", .limit = 100});
                                SEPTA_RETURN_IF_ERROR(all);
                                rows = *all;
                                return Status::Ok();
                              })
                    .ok());
    return rows;
  }

  RequestContext Owner() {
    RequestContext ctx = TenantCtx("acme");
    ctx.principal.token_id = "0a1b2c3d";
    return ctx;
  }

  test::FakeIssuer issuer{clock};
  CredentialService credentials{
      store, clock, issuer,
      [](const std::string&, const std::string&) -> Result<std::string> { return std::string("listener CA"); }};
};

TEST_F(CredentialServiceTest, AsksTheIssuerForThePrincipalsUserTheRolesGroupAndTheTiersCap) {
  auto issued = credentials.IssueKubeconfig(Owner(), "acme", "train", {"", "edit"});
  ASSERT_TRUE(issued.ok()) << issued.status().ToString();
  ASSERT_EQ(issuer.requests.size(), 1u);
  const auto& asked = issuer.requests[0];
  EXPECT_EQ(asked.user, "acme:0a1b2c3d");
  EXPECT_EQ(asked.groups, std::vector<std::string>{"septa:edit"});
  EXPECT_EQ(asked.role, "edit");
  EXPECT_EQ(asked.ttl, 8h);  // none asked: the cap
  EXPECT_EQ(asked.max_ttl, 8h);
  EXPECT_EQ(issued->credential.expire_time - issued->credential.issue_time, 8h);
  EXPECT_NE(issued->kubeconfig.find("server: https://127.0.0.1:6444/vc/acme/train"), std::string::npos)
      << issued->kubeconfig;

  auto capped = credentials.IssueKubeconfig(Admin(), "acme", "train", {"24h", "admin"});
  ASSERT_TRUE(capped.ok()) << capped.status().ToString();
  EXPECT_TRUE(capped->ttl_capped);
  EXPECT_EQ(issuer.requests[1].ttl, 24h);
  EXPECT_EQ(issuer.requests[1].user, "admin");  // no token id in this context
  EXPECT_EQ(Rows().size(), 2u);
}

TEST_F(CredentialServiceTest, NothingIsReturnedOrKeptWhenTheRecordingTransactionFails) {
  issuer.on_issue = [this] { store.FailNext(Unavailable("database down")); };
  auto issued = credentials.IssueKubeconfig(Owner(), "acme", "train", {"1h", "view"});
  EXPECT_EQ(issued.status().code(), Code::kUnavailable);
  EXPECT_EQ(issuer.requests.size(), 1u);
  EXPECT_TRUE(Rows().empty());
  EXPECT_TRUE(Audit("tenants/acme/vclusters/train/credentials/" + std::string(31, '0') + "1").empty());
}

TEST_F(CredentialServiceTest, AnIssuerErrorWritesNothing) {
  issuer.failure = NotFound("the virtual cluster has no CA");
  EXPECT_EQ(credentials.IssueKubeconfig(Owner(), "acme", "train", {"1h", "view"}).status().code(), Code::kNotFound);
  EXPECT_TRUE(Rows().empty());
}

TEST_F(CredentialServiceTest, BadInputNeverReachesTheIssuer) {
  EXPECT_EQ(credentials.IssueKubeconfig(Owner(), "acme", "train", {"1h", ""}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(credentials.IssueKubeconfig(Owner(), "acme", "train", {"8761h", "view"}).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(
      credentials.IssueKubeconfig(TenantCtx("acme", Role::kViewer), "acme", "train", {"", "admin"}).status().code(),
      Code::kPermissionDenied);
  EXPECT_EQ(credentials.IssueKubeconfig(Admin(Role::kViewer), "acme", "train", {"", "edit"}).status().code(),
            Code::kPermissionDenied);
  EXPECT_EQ(credentials.IssueKubeconfig(TenantCtx("beta"), "acme", "train", {"", "view"}).status().code(),
            Code::kNotFound);
  EXPECT_TRUE(issuer.requests.empty());
}

// Issue 28 L1: no kubeconfig is issued for a suspended tenant's virtual
// clusters, whoever asks (its own tokens: 403; an admin: 412), and a
// suspension that commits between the checking read and the recording
// transaction leaves nothing recorded. Resumed, issuing works again.
TEST_F(CredentialServiceTest, NoKubeconfigIsIssuedForASuspendedTenant) {
  TenantUpdate suspend;
  suspend.state = TenantState::kSuspended;
  ASSERT_TRUE(tenants.Update(Admin(), "acme", suspend, "").ok());
  RequestContext suspended_owner = Owner();
  suspended_owner.principal.suspended = true;  // as Authenticate says while acme is suspended
  auto by_owner = credentials.IssueKubeconfig(suspended_owner, "acme", "train", {"1h", "view"});
  EXPECT_EQ(by_owner.status().code(), Code::kPermissionDenied) << by_owner.status().ToString();
  EXPECT_NE(by_owner.status().message().find("tenant \"acme\" is suspended"), std::string::npos);
  auto by_admin = credentials.IssueKubeconfig(Admin(), "acme", "train", {"1h", "admin"});
  EXPECT_EQ(by_admin.status().code(), Code::kFailedPrecondition) << by_admin.status().ToString();
  EXPECT_NE(by_admin.status().message().find("no credentials are issued"), std::string::npos);
  EXPECT_TRUE(issuer.requests.empty());

  TenantUpdate resume;
  resume.state = TenantState::kActive;
  ASSERT_TRUE(tenants.Update(Admin(), "acme", resume, "").ok());
  // Suspended again while the certificate is being issued: nothing is kept.
  issuer.on_issue = [&] { ASSERT_TRUE(tenants.Update(Admin(), "acme", suspend, "").ok()); };
  auto raced = credentials.IssueKubeconfig(Owner(), "acme", "train", {"1h", "view"});
  EXPECT_EQ(raced.status().code(), Code::kFailedPrecondition) << raced.status().ToString();
  EXPECT_TRUE(Rows().empty());
  issuer.on_issue = nullptr;
  ASSERT_TRUE(tenants.Update(Admin(), "acme", resume, "").ok());
  EXPECT_TRUE(credentials.IssueKubeconfig(Owner(), "acme", "train", {"1h", "view"}).ok());
  EXPECT_EQ(Rows().size(), 1u);
}

TEST_F(CredentialServiceTest, RevokingTwiceAuditsOnceAndKeepsTheFirstTime) {
  auto issued = credentials.IssueKubeconfig(Owner(), "acme", "train", {"1h", "view"});
  ASSERT_TRUE(issued.ok());
  const std::string serial = issued->credential.serial;
  auto first = credentials.Revoke(Owner(), "acme", "train", serial);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  clock.Advance(10s);
  auto again = credentials.Revoke(Admin(), "acme", "train", serial);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->revoke_time, first->revoke_time);
  EXPECT_EQ(Audit("tenants/acme/vclusters/train/credentials/" + serial).size(), 2u);  // issue, one revoke
  EXPECT_EQ(credentials.Revoke(TenantCtx("acme", Role::kViewer), "acme", "train", serial).status().code(),
            Code::kPermissionDenied);
}

// What an issuer's revocation list must hold: revoked and not yet expired.
TEST_F(CredentialServiceTest, TheRevokedUnexpiredSerialsAreThoseAnIssuerMustList) {
  auto kept = credentials.IssueKubeconfig(Owner(), "acme", "train", {"1h", "view"});
  auto revoked = credentials.IssueKubeconfig(Owner(), "acme", "train", {"1h", "view"});
  auto short_lived = credentials.IssueKubeconfig(Owner(), "acme", "train", {"10m", "view"});
  ASSERT_TRUE(kept.ok() && revoked.ok() && short_lived.ok());
  for (const auto* issued : {&*revoked, &*short_lived}) {
    ASSERT_TRUE(credentials.Revoke(Owner(), "acme", "train", issued->credential.serial).ok());
  }
  auto serials = credentials.RevokedUnexpiredSerials("acme", "train");
  ASSERT_TRUE(serials.ok()) << serials.status().ToString();
  EXPECT_EQ(std::set<std::string>(serials->begin(), serials->end()),
            (std::set<std::string>{revoked->credential.serial, short_lived->credential.serial}));
  clock.Advance(30min);
  serials = credentials.RevokedUnexpiredSerials("acme", "train");
  ASSERT_TRUE(serials.ok());
  EXPECT_EQ(*serials, std::vector<std::string>{revoked->credential.serial}) << "the expired one needs no listing";
  EXPECT_TRUE(credentials.RevokedUnexpiredSerials("acme", "none")->empty());
}

}  // namespace
}  // namespace septa::core
