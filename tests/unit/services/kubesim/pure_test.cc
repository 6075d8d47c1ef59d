// kubesim's pure parts: selectors, patches, inventory parsing, quantities.
#include <gtest/gtest.h>

#include "services/kubesim/inventory.h"
#include "services/kubesim/objects.h"
#include "services/kubesim/patches.h"
#include "services/kubesim/selectors.h"
#include "tests/support/hostile_documents.h"

namespace septa::kubesim {
namespace {

using nlohmann::json;

TEST(kubesimSelector, LabelSelectorGrammar) {
  json labels = {{"app", "web"}, {"tier", "front"}};
  auto match = [&](const std::string& s) { return LabelSelector::Parse(s)->Matches(labels); };
  EXPECT_TRUE(match(""));
  EXPECT_TRUE(match("app=web"));
  EXPECT_TRUE(match("app==web,tier"));
  EXPECT_FALSE(match("app!=web"));
  EXPECT_TRUE(match("tier in (front, back)"));
  EXPECT_FALSE(match("tier notin (front)"));
  EXPECT_TRUE(match("!missing"));
  EXPECT_FALSE(match("!app"));
  EXPECT_FALSE(LabelSelector::Parse("tier in (front").ok());
  EXPECT_FALSE(LabelSelector::Parse("bad key=x").ok());
}

TEST(kubesimSelector, FieldSelector) {
  json pod = {{"metadata", {{"name", "p"}}}, {"spec", {{"nodeName", "n1"}}}, {"status", {{"phase", "Running"}}}};
  auto match = [&](const std::string& s) { return FieldSelector::Parse(s)->Matches(pod); };
  EXPECT_TRUE(match("spec.nodeName=n1,status.phase=Running"));
  EXPECT_FALSE(match("spec.nodeName!=n1"));
  EXPECT_TRUE(match("spec.schedulerName="));
  EXPECT_FALSE(FieldSelector::Parse("nonsense").ok());
}

TEST(kubesimPatch, StrategicMergeDirectives) {
  json pod = {{"spec", {{"containers", {{{"name", "a"}, {"image", "1"}}, {{"name", "b"}, {"image", "1"}}}}}}};
  auto out = ApplyStrategicMergePatch(
      pod, json::parse(R"({"spec":{"containers":[{"name":"a","$patch":"delete"},{"name":"c","image":"2"}]}})"));
  const json& c = (*out)["spec"]["containers"];
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0]["name"], "b");
  EXPECT_EQ(c[1]["name"], "c");
  auto merged = ApplyMergePatch(pod, json::parse(R"({"spec":{"containers":[]}})"));
  EXPECT_TRUE((*merged)["spec"]["containers"].empty()) << "merge patch replaces lists";
}

TEST(kubesimPatch, YamlBodies) {
  auto j = ParseJsonOrYaml("a: 1\nb: \"2\"\nc: [x, true]\nd: null\n");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(*j, json::parse(R"({"a":1,"b":"2","c":["x",true],"d":null})"));
  EXPECT_FALSE(ParseJsonOrYaml("a: [unclosed").ok());
}

// C1 and H1: bodies the virtual API reads are bounded (common/documents.h);
// the refusal is a 400 in kube-apiserver's words, never a crash or a 500.
TEST(kubesimPatch, DeepBodiesAndAliasBombsAre400) {
  const std::string deep =
      R"({"kind":"ConfigMap","data":{"a":)" + std::string(100'000, '[') + std::string(100'000, ']') + "}}";
  auto refused = ParseJsonOrYaml(deep);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, 400);
  EXPECT_EQ(refused.error().reason, "BadRequest");
  EXPECT_EQ(refused.error().message, "json parse error: the document nests deeper than 128 levels");
  const std::string bomb = "data:\n" + test::YamlAliasBomb(7, "  ");
  auto aliased = ParseJsonOrYaml(bomb);
  ASSERT_FALSE(aliased.ok());
  EXPECT_EQ(aliased.error().code, 400);
  EXPECT_NE(aliased.error().message.find("error converting YAML to JSON: the document expands "
                                         "excessively through aliases"),
            std::string::npos)
      << aliased.error().message;
  auto cycle = ParseJsonOrYaml("a: &a [*a]");
  ASSERT_FALSE(cycle.ok());
  EXPECT_EQ(cycle.error().code, 400);
}

// Found by fuzz/kube_body_fuzzer.cc: a YAML string that is not UTF-8 was
// taken, and writing the object's JSON then failed: a 500 carrying
// nlohmann's exception text. A client's mistake is a 400.
TEST(kubesimPatch, YamlThatIsNotUtf8Is400) {
  auto refused = ParseJsonOrYaml("apiVersion: v1\nkind: ConfigMap\ndata:\n  a: \"x\xac\"\n");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, 400);
  EXPECT_EQ(refused.error().message, "error converting YAML to JSON: a string is not valid UTF-8 at line 4, column 6");
}

// A JSON patch cannot build what a body could not be: kube-apiserver's
// operation and copy bounds, and the document depth after every operation.
TEST(kubesimPatch, JsonPatchesStayBounded) {
  const json target = {{"a", {{"b", 1}}}};
  const json too_many = json(std::vector<json>(10001, {{"op", "test"}, {"path", "/a/b"}, {"value", 1}}));
  auto many = ApplyJsonPatch(target, too_many);
  ASSERT_FALSE(many.ok());
  EXPECT_EQ(many.error().code, 413);
  // Each copy doubles /a: 2^40 nodes without the copy bound.
  json doubling = json::array({{{"op", "add"}, {"path", "/a/b"}, {"value", std::string(1000, 'x')}}});
  for (int i = 0; i < 40; ++i)
    doubling.push_back({{"op", "copy"}, {"from", "/a"}, {"path", "/a/c" + std::to_string(i)}});
  auto doubled = ApplyJsonPatch(target, doubling);
  ASSERT_FALSE(doubled.ok());
  EXPECT_EQ(doubled.error().code, 422);
  EXPECT_NE(doubled.error().message.find("accumulated size increase of copy"), std::string::npos);
  // Values of 100 levels added one inside the other: 201 levels after two.
  const json hundred = json::parse(std::string(100, '[') + std::string(100, ']'));
  std::string inside = "/a/x";
  for (int i = 0; i < 99; ++i) inside += "/0";
  const json nesting = json::array({{{"op", "add"}, {"path", "/a/x"}, {"value", hundred}},
                                    {{"op", "add"}, {"path", inside + "/-"}, {"value", hundred}}});
  auto nested = ApplyJsonPatch(target, nesting);
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.error().code, 422);
  EXPECT_NE(nested.error().message.find("nests deeper than 128 levels"), std::string::npos) << nested.error().message;
  // Ordinary patches apply as before.
  auto ok =
      ApplyJsonPatch(target, json::parse(R"([{"op":"copy","from":"/a","path":"/c"},{"op":"remove","path":"/a"}])"));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, json::parse(R"({"c":{"b":1}})"));
}

// L6: at most 1 MiB of data in a config map or a secret, as kube-apiserver
// counts it, refused in its words.
TEST(kubesimValidate, ConfigMapsAndSecretsHoldAtMostOneMebibyte) {
  ResourceType config_maps, secrets;
  config_maps.resource = "configmaps";
  config_maps.kind = "ConfigMap";
  secrets.resource = "secrets";
  secrets.kind = "Secret";
  const auto config_map = [](std::size_t data, std::size_t binary_base64) {
    json cm = {{"metadata", {{"name", "big"}}}, {"data", {{"a", std::string(data, 'x')}}}};
    if (binary_base64 > 0) cm["binaryData"] = {{"a", std::string(binary_base64, 'A')}};
    return cm;
  };
  EXPECT_TRUE(Validate(config_maps, config_map(1048576, 0)).empty());
  auto causes = Validate(config_maps, config_map(1048577, 0));
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].field, "[]");
  EXPECT_EQ(causes[0].message, "Too long: must have at most 1048576 bytes");
  // binaryData counts decoded: 8 base64 characters are 6 bytes.
  EXPECT_TRUE(Validate(config_maps, config_map(1048576 - 6, 8)).empty());
  EXPECT_EQ(Validate(config_maps, config_map(1048576 - 5, 8)).size(), 1u);
  const auto secret = [](std::size_t base64, std::size_t string_data) {
    json s = {{"metadata", {{"name", "big"}}}, {"data", {{"a", std::string(base64, 'A')}}}};
    if (string_data > 0) s["stringData"] = {{"b", std::string(string_data, 'x')}};
    return s;
  };
  EXPECT_TRUE(Validate(secrets, secret(1398100, 0)).empty());  // 1048575 bytes decoded
  auto secret_causes = Validate(secrets, secret(1398100, 2));
  ASSERT_EQ(secret_causes.size(), 1u);
  EXPECT_EQ(secret_causes[0].field, "data");
  // stringData replaces the data of its key.
  json replaced = secret(1398100, 0);
  replaced["stringData"] = {{"a", "x"}};
  EXPECT_TRUE(Validate(secrets, replaced).empty());
  auto typed = Validate(config_maps, json{{"metadata", {{"name", "n"}}}, {"data", {{"a", json::array()}}}});
  ASSERT_EQ(typed.size(), 1u);
  EXPECT_EQ(typed[0].field, "data.a");
}

// What a real host refuses is refused at the virtual side too: annotations
// hold at most 256 KiB, keys and values together (kube-apiserver's
// TotalAnnotationSizeLimitB).
TEST(kubesimValidate, AnnotationsHoldAtMost256KiB) {
  ResourceType config_maps;
  config_maps.resource = "configmaps";
  config_maps.kind = "ConfigMap";
  const auto annotated = [](std::size_t value_bytes) {
    return json{{"metadata", {{"name", "n"}, {"annotations", {{"note", std::string(value_bytes, 'x')}}}}}};
  };
  EXPECT_TRUE(Validate(config_maps, annotated(262144 - 4)).empty());
  auto causes = Validate(config_maps, annotated(262144 - 3));
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].field, "metadata.annotations");
  EXPECT_EQ(causes[0].message, "Too long: must have at most 262144 bytes");
}

// The inventory's taints go through YamlToJson, which expanded every alias.
TEST(kubesimInventory, AnAliasBombIsRefused) {
  auto inventory = ParseInventory(
      test::YamlAliasBomb(5) + "nodes:\n  - name: n\n    cpu: \"1\"\n    memory: 1Gi\n    taints: *l5\n", "inv.yaml");
  ASSERT_FALSE(inventory.ok());
  EXPECT_NE(inventory.status().message().find("inv.yaml: the document expands excessively through aliases"),
            std::string::npos)
      << inventory.status().message();
}

TEST(kubesimInventory, BraceRanges) {
  EXPECT_EQ(*ExpandBraceRange("h100-{0..2}"), (std::vector<std::string>{"h100-0", "h100-1", "h100-2"}));
  EXPECT_EQ(*ExpandBraceRange("plain"), (std::vector<std::string>{"plain"}));
  EXPECT_FALSE(ExpandBraceRange("x-{3..1}").ok());
}

TEST(kubesimInventory, ParsesTheIssueFormat) {
  auto inv = ParseInventory(R"(
nodes:
  - name: h100-{0..3}
    cpu: "96"
    memory: 1Ti
    labels: {topology.kubernetes.io/zone: z1}
    taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
    gpus: {model: H100-80GB, count: 8, migConfig: all-balanced}
  - name: t4-0
    cpu: "32"
    memory: 128Gi
    gpus: {model: T4, count: 4}
migConfigs:
  version: v1
  mig-configs: {}
)",
                            "test.yaml");
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  ASSERT_EQ(inv->nodes.size(), 5u);
  EXPECT_EQ(inv->nodes[3].name, "h100-3");
  EXPECT_EQ(inv->nodes[3].mig_config, "all-balanced");
  EXPECT_EQ(inv->nodes[0].taints[0]["effect"], "NoSchedule");
  EXPECT_EQ(inv->nodes[4].gpu_count, 4);
  EXPECT_FALSE(inv->mig_configs_yaml.empty());
  auto bad = ParseInventory("nodes: [{name: x, cpu: lots}]", "bad.yaml");
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("bad.yaml: nodes[0].cpu"), std::string::npos);
  EXPECT_FALSE(ParseInventory("nodes: [{cpu: 1}]", "x").ok());
  EXPECT_FALSE(ParseInventory("{{", "x").ok());
}

// The inventory reads YAML with the shared core-schema converter (issue 9): an
// unquoted `true` is a boolean, which a taint cannot hold, so it is refused by
// name instead of silently becoming the string "true".
TEST(kubesimInventory, TaintFieldsMustBeStrings) {
  auto quoted =
      ParseInventory(R"(nodes: [{name: x, taints: [{key: k, value: "true", effect: NoSchedule}]}])", "t.yaml");
  ASSERT_TRUE(quoted.ok()) << quoted.status().ToString();
  EXPECT_EQ(quoted->nodes[0].taints[0]["value"], "true");
  auto unquoted = ParseInventory("nodes: [{name: x, taints: [{key: k, value: true, effect: NoSchedule}]}]", "t.yaml");
  EXPECT_EQ(unquoted.status().code(), Code::kInvalidArgument);
  EXPECT_NE(unquoted.status().message().find("t.yaml: nodes[0].taints[0].value: must be a string"), std::string::npos)
      << unquoted.status().ToString();
}

TEST(kubesimObjects, UnknownFieldsAtTheTopAndInMetadata) {
  ResourceRegistry registry;
  auto configmaps = registry.Find("", "v1", "configmaps");
  auto pods = registry.Find("", "v1", "pods");
  ASSERT_TRUE(configmaps && pods);
  const json good = {{"apiVersion", "v1"},
                     {"kind", "ConfigMap"},
                     {"metadata", {{"name", "a"}, {"labels", {{"x", "y"}}}, {"annotations", json::object()}}},
                     {"data", {{"k", "v"}}},
                     {"immutable", true}};
  EXPECT_TRUE(UnknownFields(*configmaps, good).empty());
  json typo = good;
  typo["dat"] = json::object();
  typo["metadata"]["lables"] = json::object();
  EXPECT_EQ(UnknownFields(*configmaps, typo), (std::vector<std::string>{"dat", "metadata.lables"}));
  EXPECT_EQ(UnknownFields(*pods, {{"spec", json::object()}, {"status", json::object()}, {"data", 1}}),
            (std::vector<std::string>{"data"}))
      << "kinds without their own list have spec and status";
  ResourceType queue;  // a custom resource: only metadata is known
  queue.kind = "Queue";
  queue.from_crd = true;
  EXPECT_EQ(UnknownFields(queue, {{"anything", 1}, {"metadata", {{"nmae", "q"}}}}),
            (std::vector<std::string>{"metadata.nmae"}));
}

}  // namespace
}  // namespace septa::kubesim
