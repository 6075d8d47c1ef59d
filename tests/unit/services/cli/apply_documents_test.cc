// The documents of septactl diff and apply: what each kind becomes in the
// request, which fields it declares, and every way a document is refused.
#include "services/cli/apply_documents.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/hostile_documents.h"

namespace septa::cli {
namespace {

namespace fs = std::filesystem;
using testing::ElementsAre;
using testing::UnorderedElementsAre;

DeclaredObjects ReadStdin(const std::string& text) {
  std::istringstream in(text);
  return ReadDeclaredObjects({"-"}, &in);
}

std::vector<std::string> Declared(const v1::ApplyObject& object) {
  return {object.declared_fields().paths().begin(), object.declared_fields().paths().end()};
}

constexpr char kStream[] = R"(apiVersion: septa.dev/v1
kind: ApplySet
metadata: {name: platform-prod}
spec: {prune: true, protect: [Tenant, TrustTier]}
---
apiVersion: septa.dev/v1
kind: TrustTier
metadata: {name: isolated}
spec:
  gpuSharing: MIG
  co_tenancy: others
  credentialTtlMax: 8h
  apiLimits: {objects: 100}
---
apiVersion: septa.dev/v1
kind: Tenant
metadata:
  name: acme
  labels: {team: ml, cost-center: "4711"}
spec:
  displayName: ACME Research
  trust_tier: isolated
  quota: {gpuMilli: 8000, pods: 2000}
---
apiVersion: septa.dev/v1
kind: VirtualCluster
metadata: {name: train, tenant: acme}
spec:
  capacity: {mig: [{profile: 3g.40gb, count: 2}, {profile: 1g.10gb, count: 4}]}
  quota: {pods: 50}
  queue: {over_quota_weight: 2}
)";

TEST(ApplyDocuments, AStreamOfEveryKindBecomesTheObjectsAndTheFieldsTheyDeclare) {
  const DeclaredObjects read = ReadStdin(kStream);
  ASSERT_THAT(read.errors, ElementsAre());
  ASSERT_TRUE(read.apply_set.has_value());
  EXPECT_EQ(read.apply_set->name, "platform-prod");
  EXPECT_TRUE(read.apply_set->prune);
  EXPECT_EQ(read.apply_set->place.Text(), "<stdin> document 1");
  ASSERT_EQ(read.objects.size(), 3u);

  const v1::ApplyObject& tier = read.objects[0];
  ASSERT_TRUE(tier.has_trust_tier());
  EXPECT_EQ(tier.trust_tier().name(), "isolated");
  EXPECT_EQ(tier.trust_tier().gpu_sharing(), v1::TrustTier::MIG);
  EXPECT_EQ(tier.trust_tier().co_tenancy(), "others");
  EXPECT_EQ(tier.trust_tier().credential_ttl_max().seconds(), 8 * 3600);  // Go's "8h", as the API's lifetimes
  EXPECT_EQ(tier.trust_tier().api_limits().objects(), 100);
  EXPECT_THAT(Declared(tier),
              UnorderedElementsAre("gpu_sharing", "co_tenancy", "credential_ttl_max", "api_limits.objects"));
  EXPECT_EQ(tier.source(), "<stdin>#2");

  const v1::ApplyObject& tenant = read.objects[1];
  ASSERT_TRUE(tenant.has_tenant());
  EXPECT_EQ(tenant.tenant().name(), "acme");
  EXPECT_EQ(tenant.tenant().display_name(), "ACME Research");
  EXPECT_EQ(tenant.tenant().trust_tier(), "isolated");
  EXPECT_EQ(tenant.tenant().labels().at("cost-center"), "4711");
  EXPECT_EQ(tenant.tenant().quota().gpu_milli(), 8000);
  EXPECT_FALSE(tenant.tenant().quota().has_cpu_milli());
  EXPECT_THAT(Declared(tenant), UnorderedElementsAre("labels.team", "labels.cost-center", "display_name", "trust_tier",
                                                     "quota.gpu_milli", "quota.pods"));

  const v1::ApplyObject& vc = read.objects[2];
  ASSERT_TRUE(vc.has_virtual_cluster());
  EXPECT_EQ(vc.virtual_cluster().name(), "train");
  EXPECT_EQ(vc.virtual_cluster().tenant(), "acme");
  ASSERT_EQ(vc.virtual_cluster().capacity().mig_size(), 2);
  EXPECT_EQ(vc.virtual_cluster().capacity().mig(1).profile(), "1g.10gb");
  EXPECT_EQ(vc.virtual_cluster().queue().over_quota_weight(), 2);
  // A list is declared whole; identity (name, tenant) never is.
  EXPECT_THAT(Declared(vc), UnorderedElementsAre("capacity.mig", "quota.pods", "queue.over_quota_weight"));
  EXPECT_FALSE(vc.adopt());

  ASSERT_EQ(read.places.size(), 3u);
  EXPECT_EQ(read.places[2].Text(), "<stdin> document 4");
  EXPECT_EQ(read.places[2].object, "VirtualCluster acme/train");
}

TEST(ApplyDocuments, CamelCaseAndSnakeCaseKeysReadAlike) {
  const std::string head = "apiVersion: septa.dev/v1\nkind: VirtualCluster\nmetadata: {name: a, tenant: t}\nspec:\n";
  const DeclaredObjects camel =
      ReadStdin(head + "  displayName: A\n  queue: {overQuotaWeight: 3}\n  apiLimits: {requestsInFlight: 7}\n");
  const DeclaredObjects snake =
      ReadStdin(head + "  display_name: A\n  queue: {over_quota_weight: 3}\n  api_limits: {requests_in_flight: 7}\n");
  ASSERT_THAT(camel.errors, ElementsAre());
  ASSERT_THAT(snake.errors, ElementsAre());
  EXPECT_EQ(camel.objects[0].SerializeAsString(), snake.objects[0].SerializeAsString());
  EXPECT_THAT(Declared(camel.objects[0]),
              UnorderedElementsAre("display_name", "queue.over_quota_weight", "api_limits.requests_in_flight"));

  const DeclaredObjects both = ReadStdin(head + "  displayName: A\n  display_name: B\n");
  EXPECT_THAT(both.errors,
              ElementsAre("<stdin> document 1: spec.display_name: sets display_name again (as displayName too)"));
}

TEST(ApplyDocuments, DurationsAndEmptyMessages) {
  const std::string head = "apiVersion: septa.dev/v1\nkind: TrustTier\nmetadata: {name: gold}\nspec:\n";
  for (const auto& [text, seconds] : {std::pair{"1h30m", 5400}, std::pair{"3600s", 3600}, std::pair{"45s", 45}}) {
    const DeclaredObjects read = ReadStdin(head + "  credentialTtlMax: " + text + "\n");
    ASSERT_THAT(read.errors, ElementsAre()) << text;
    EXPECT_EQ(read.objects[0].trust_tier().credential_ttl_max().seconds(), seconds) << text;
  }
  // An empty message declares itself: all of it to its default.
  const DeclaredObjects empty = ReadStdin(head + "  apiLimits: {}\n  description:\n");
  ASSERT_THAT(empty.errors, ElementsAre());
  EXPECT_THAT(Declared(empty.objects[0]), UnorderedElementsAre("api_limits", "description"));
}

class DocumentFiles : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(testing::TempDir()) /
           ("septactl-documents-" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path.string();
  }

  static std::string Tenant(const std::string& name) {
    return "apiVersion: septa.dev/v1\nkind: Tenant\nmetadata: {name: " + name + "}\nspec: {trustTier: gold}\n";
  }

  fs::path dir_;
};

TEST_F(DocumentFiles, AnUnknownFieldIsNamedByFileDocumentAndPath) {
  const std::string file = Write("bad.yaml", Tenant("acme") +
                                                 "---\napiVersion: septa.dev/v1\nkind: VirtualCluster\n"
                                                 "metadata: {name: a, tenant: acme}\n"
                                                 "spec:\n  foo: 1\n  quota: {pods: 1, bar: 2}\n"
                                                 "  capacity: {mig: [{profile: x, count: 1, size: 3}]}\n");
  const DeclaredObjects read = ReadDeclaredObjects({file}, nullptr);
  EXPECT_THAT(read.errors, ElementsAre(file + " document 2: spec.capacity.mig[0].size: unknown field",
                                       file + " document 2: spec.foo: unknown field",
                                       file + " document 2: spec.quota.bar: unknown field"));
}

TEST(ApplyDocuments, AMistypedValueIsNamedByItsPathNotByProtobufAlone) {
  const DeclaredObjects read = ReadStdin(
      "apiVersion: septa.dev/v1\nkind: VirtualCluster\nmetadata: {name: a, tenant: t}\nspec: {quota: {pods: many}}\n");
  ASSERT_EQ(read.errors.size(), 1u);
  EXPECT_TRUE(read.errors[0].starts_with("<stdin> document 1: spec.quota.pods: ")) << read.errors[0];
  EXPECT_TRUE(read.objects.empty());
  // A value of the wrong shape is told before protobuf reads any.
  const DeclaredObjects shapes = ReadStdin(
      "apiVersion: septa.dev/v1\nkind: VirtualCluster\nmetadata: {name: a, tenant: t}\n"
      "spec: {quota: [1], capacity: {mig: {profile: x}}, displayName: [a], queue: 5}\n");
  EXPECT_THAT(shapes.errors, ElementsAre("<stdin> document 1: spec.capacity.mig: must be a list",
                                         "<stdin> document 1: spec.displayName: must be a single value, not a list",
                                         "<stdin> document 1: spec.queue: must be a mapping",
                                         "<stdin> document 1: spec.quota: must be a mapping"));
}

TEST(ApplyDocuments, ApiVersionKindAndTheDocumentsShape) {
  const DeclaredObjects read = ReadStdin(
      "apiVersion: v1\nkind: Tenant\nmetadata: {name: a}\n"
      "---\napiVersion: septa.dev/v1\nkind: Credential\nmetadata: {name: a}\n"
      "---\nkind: Tenant\n"
      "---\n[1, 2]\n"
      "---\napiVersion: septa.dev/v1\nkind: Tenant\nmetadata: {name: a}\nspec: {trustTier: g}\nstatus: {}\n");
  EXPECT_THAT(read.errors,
              ElementsAre("<stdin> document 1: apiVersion: must be septa.dev/v1, not \"v1\"",
                          "<stdin> document 2: kind: must be TrustTier, Tenant, VirtualCluster, ApiToken or ApplySet, "
                          "not \"Credential\"",
                          "<stdin> document 3: apiVersion: must be septa.dev/v1",
                          "<stdin> document 4: must be a mapping of apiVersion, kind, metadata and spec",
                          "<stdin> document 5: status: unknown field"));
  EXPECT_THAT(ReadStdin("---\n? [a, b]\n: 1\n---\napiVersion: septa.dev/v1\nkind: Tenant\nmetadata: {name: 7}\n"
                        "spec: {trustTier: g}\n")
                  .errors,
              ElementsAre("<stdin> document 1: a mapping's key must be a single value",
                          "<stdin> document 2: metadata.name: must be a name, not 7"));
  EXPECT_TRUE(read.objects.empty());
}

TEST(ApplyDocuments, MetadataHoldsIdentityAndOnlyWhatTheKindHas) {
  const std::string v = "apiVersion: septa.dev/v1\n";
  const DeclaredObjects read =
      ReadStdin(v + "kind: VirtualCluster\nmetadata: {name: a}\nspec: {quota: {pods: 1}}\n---\n" +               // 1
                v + "kind: Tenant\nmetadata: {name: b, tenant: x}\nspec: {trustTier: g}\n---\n" +                // 2
                v + "kind: TrustTier\nmetadata: {name: c, labels: {a: b}}\nspec: {coTenancy: x}\n---\n" +        // 3
                v + "kind: Tenant\nmetadata: {name: d, labels: {n: 4711}}\nspec: {trustTier: g}\n---\n" +        // 4
                v + "kind: Tenant\nmetadata: {name: e}\nspec: {name: f, labels: {a: b}, trustTier: g}\n---\n" +  // 5
                v + "kind: Tenant\nmetadata: {namespace: x}\nspec: {trustTier: g}\n---\n" +                      // 6
                v + "kind: Tenant\nmetadata: {name: g}\n");                                                      // 7
  EXPECT_THAT(
      read.errors,
      ElementsAre("<stdin> document 1: metadata.tenant: missing: the owning tenant",
                  "<stdin> document 2: metadata.tenant: a Tenant has no tenant",
                  "<stdin> document 3: metadata.labels: a TrustTier has no labels",
                  "<stdin> document 4: metadata.labels.n: must be a string (quote it: \"4711\")",
                  "<stdin> document 5: spec.labels: goes in metadata.labels",
                  "<stdin> document 5: spec.name: goes in metadata.name",
                  "<stdin> document 6: metadata.namespace: unknown field", "<stdin> document 6: metadata.name: missing",
                  "<stdin> document 7: spec: declares no field: give the fields the apply set is to own"));
}

TEST_F(DocumentFiles, TheSameObjectTwiceIsNamedWithBothPlaces) {
  const std::string a = Write("a.yaml", Tenant("acme") + "---\n" + Tenant("globex"));
  const std::string b = Write("b.yaml", Tenant("initech") + "---\n" + Tenant("acme"));
  // The same name in another tenant is another virtual cluster.
  const std::string vcs = Write("vcs.yaml",
                                "apiVersion: septa.dev/v1\nkind: VirtualCluster\nmetadata: {name: x, tenant: acme}\n"
                                "spec: {quota: {pods: 1}}\n---\n"
                                "apiVersion: septa.dev/v1\nkind: VirtualCluster\nmetadata: {name: x, tenant: globex}\n"
                                "spec: {quota: {pods: 1}}\n");
  const DeclaredObjects read = ReadDeclaredObjects({a, b, vcs}, nullptr);
  EXPECT_THAT(read.errors,
              ElementsAre(b + " document 2: Tenant acme is declared twice (also in " + a + " document 1)"));
  EXPECT_EQ(read.objects.size(), 5u);
}

TEST(ApplyDocuments, EmptyDocumentsAreSkippedButCounted) {
  const DeclaredObjects read = ReadStdin(
      "---\n---\n# nothing\n---\napiVersion: septa.dev/v1\nkind: Tenant\nmetadata: {name: a}\nspec: {trustTier: g}\n"
      "---\n");
  ASSERT_THAT(read.errors, ElementsAre());
  ASSERT_EQ(read.objects.size(), 1u);
  EXPECT_EQ(read.objects[0].source(), "<stdin>#3");
  EXPECT_FALSE(read.apply_set.has_value());
}

TEST(ApplyDocuments, ASecondApplySetIsRefused) {
  const std::string set = "apiVersion: septa.dev/v1\nkind: ApplySet\nmetadata: {name: s}\n";
  const DeclaredObjects read = ReadStdin(set + "---\n" + set + "spec: {prune: yes, drift: revert}\n");
  EXPECT_THAT(read.errors, ElementsAre("<stdin> document 2: spec.drift: unknown field",
                                       "<stdin> document 2: spec.prune: must be true or false",
                                       "<stdin> document 2: a second ApplySet document (the first is <stdin> "
                                       "document 1): give one per apply"));
}

TEST(ApplyDocuments, AnAliasBombIsRefusedBeforeItIsExpanded) {
  const std::string bomb =
      "apiVersion: septa.dev/v1\nkind: Tenant\nmetadata: {name: a}\nspec:\n" + test::YamlAliasBomb(7, "  ");
  const auto start = std::chrono::steady_clock::now();
  const DeclaredObjects read = ReadStdin(bomb);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  ASSERT_EQ(read.errors.size(), 1u);
  EXPECT_TRUE(read.errors[0].starts_with("<stdin>: the document expands excessively through aliases"))
      << read.errors[0];
}

TEST_F(DocumentFiles, InputBeyondTheBoundIsRefusedUnread) {
  const std::string padding = "# " + std::string(kMaxApplyInputBytes, 'x') + "\n";
  const std::string big = Write("big.yaml", Tenant("a") + padding);
  DeclaredObjects read = ReadDeclaredObjects({big}, nullptr);
  EXPECT_THAT(read.errors, ElementsAre(big + ": the documents are more than 3145728 bytes in all, more than one "
                                             "apply reads: split them into several apply sets"));
  // The bound is for all inputs together, stdin too.
  const std::string half = Write("half.yaml", Tenant("a") + "# " + std::string(kMaxApplyInputBytes / 2, 'x') + "\n");
  std::istringstream in(Tenant("b") + "# " + std::string(kMaxApplyInputBytes / 2, 'x') + "\n");
  read = ReadDeclaredObjects({half, "-"}, &in);
  EXPECT_THAT(read.errors, ElementsAre("<stdin>: the documents are more than 3145728 bytes in all, more than one "
                                       "apply reads: split them into several apply sets"));
}

TEST(ApplyDocuments, MoreObjectsThanOneApplyTakesAreRefused) {
  std::string stream;
  for (std::size_t i = 0; i <= kMaxApplyObjects; ++i) {
    stream += "---\n{apiVersion: septa.dev/v1, kind: Tenant, metadata: {name: t" + std::to_string(i) +
              "}, spec: {trustTier: g}}\n";
  }
  const DeclaredObjects read = ReadStdin(stream);
  EXPECT_THAT(read.errors,
              ElementsAre("2001 objects, more than the 2000 one apply takes: split them into several apply sets"));
}

TEST_F(DocumentFiles, ADirectoryIsReadInNameOrderWithoutItsSubdirectories) {
  Write("platform/b.yaml", Tenant("from-b"));
  Write("platform/a.yml", Tenant("from-a"));
  Write(
      "platform/c.json",
      R"({"apiVersion": "septa.dev/v1", "kind": "Tenant", "metadata": {"name": "from-c"}, "spec": {"trust_tier": "g"}})");
  Write("platform/README.md", "not a document");
  Write("platform/sub/d.yaml", Tenant("from-sub"));
  const std::string dir = (dir_ / "platform").string();
  const DeclaredObjects read = ReadDeclaredObjects({dir}, nullptr);
  ASSERT_THAT(read.errors, ElementsAre());
  std::vector<std::string> names;
  for (const auto& object : read.objects) names.push_back(object.tenant().name());
  EXPECT_THAT(names, ElementsAre("from-a", "from-b", "from-c"));
  EXPECT_EQ(read.objects[2].source(), dir + "/c.json#1");
}

TEST(ApplyDocuments, StdinOnlyWhenThereIsOneAndOnce) {
  EXPECT_THAT(ReadDeclaredObjects({"-"}, nullptr).errors, ElementsAre("-f -: there is no standard input"));
  std::istringstream in("");
  EXPECT_THAT(ReadDeclaredObjects({"-", "-"}, &in).errors, ElementsAre("-f -: given twice"));
  EXPECT_THAT(ReadDeclaredObjects({"/no/such/file.yaml"}, nullptr).errors,
              ElementsAre("cannot read /no/such/file.yaml: No such file or directory"));
}

TEST(ApplyDocuments, TheApplySetDocumentDeclaresTheSetsPolicyWhole) {
  const std::string head = "apiVersion: septa.dev/v1\nkind: ApplySet\nmetadata: {name: s}\n";
  const DeclaredObjects locked = ReadStdin(head + "spec: {onDrift: lock, protect: [VirtualCluster]}\n");
  ASSERT_THAT(locked.errors, ElementsAre());
  ASSERT_TRUE(locked.apply_set.has_value());
  EXPECT_EQ(locked.apply_set->policy.on_drift(), v1::ApplySetPolicy::LOCK);
  EXPECT_THAT(locked.apply_set->policy.protected_kinds(), ElementsAre("VirtualCluster"));
  const DeclaredObjects plain = ReadStdin(head + "spec: {prune: true}\n");
  ASSERT_THAT(plain.errors, ElementsAre());
  EXPECT_EQ(plain.apply_set->policy.on_drift(), v1::ApplySetPolicy::DRIFT_POLICY_UNSPECIFIED) << "the default";

  const DeclaredObjects bad = ReadStdin(head + "spec: {onDrift: sometimes, protect: Tenant}\n");
  EXPECT_THAT(bad.errors,
              ElementsAre("<stdin> document 1: spec.onDrift: must be report, revert or lock, not "
                          "\"sometimes\"",
                          "<stdin> document 1: spec.protect: must be a list of kinds, as [VirtualCluster]"));
}

TEST(ApplyDocuments, AnApiTokenDeclaresWhereItsSecretGoesAndNeverTheSecret) {
  const DeclaredObjects read = ReadStdin(
      "apiVersion: septa.dev/v1\nkind: ApiToken\nmetadata: {name: ci}\n"
      "spec: {principal: 'tenant:acme', role: viewer, ttl: 8h,\n"
      "       deliverTo: {kubernetesSecret: {namespace: ci, name: septa-token}}}\n");
  ASSERT_THAT(read.errors, ElementsAre());
  ASSERT_EQ(read.objects.size(), 1u);
  const v1::ApiTokenDeclaration& token = read.objects[0].api_token();
  EXPECT_EQ(token.name(), "ci");
  EXPECT_EQ(token.principal(), "tenant:acme");
  EXPECT_EQ(token.deliver_to().kubernetes_secret().name(), "septa-token");
  EXPECT_THAT(read.objects[0].declared_fields().paths(),
              UnorderedElementsAre("principal", "role", "ttl", "deliver_to.kubernetes_secret.namespace",
                                   "deliver_to.kubernetes_secret.name"));

  const DeclaredObjects leaked = ReadStdin(
      "apiVersion: septa.dev/v1\nkind: ApiToken\nmetadata: {name: ci, tenant: acme}\n"
      "spec: {role: owner, token: septa_0123_abc}\n");
  EXPECT_THAT(leaked.errors,
              ElementsAre("<stdin> document 1: metadata.tenant: an ApiToken has no tenant",
                          "<stdin> document 1: spec.token: an ApiToken declares no secret: septad mints the token "
                          "and writes it only to deliverTo (a secret in Git is a leaked secret)"));
  EXPECT_TRUE(leaked.objects.empty());
}

}  // namespace
}  // namespace septa::cli
