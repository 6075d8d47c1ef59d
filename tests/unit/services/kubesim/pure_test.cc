// kubesim's pure parts: selectors, patches, inventory parsing, quantities.
#include <gtest/gtest.h>

#include "services/kubesim/inventory.h"
#include "services/kubesim/objects.h"
#include "services/kubesim/patches.h"
#include "services/kubesim/selectors.h"

namespace septa::kubesim {
namespace {

using nlohmann::json;

TEST(kubesimSelector, LabelSelectorGrammar) {
  json labels = {{"app", "web"}, {"tier", "front"}};
  auto match = [&](const std::string& s) { return std::get<LabelSelector>(LabelSelector::Parse(s)).Matches(labels); };
  EXPECT_TRUE(match(""));
  EXPECT_TRUE(match("app=web"));
  EXPECT_TRUE(match("app==web,tier"));
  EXPECT_FALSE(match("app!=web"));
  EXPECT_TRUE(match("tier in (front, back)"));
  EXPECT_FALSE(match("tier notin (front)"));
  EXPECT_TRUE(match("!missing"));
  EXPECT_FALSE(match("!app"));
  EXPECT_TRUE(IsError(LabelSelector::Parse("tier in (front")));
  EXPECT_TRUE(IsError(LabelSelector::Parse("bad key=x")));
}

TEST(kubesimSelector, FieldSelector) {
  json pod = {{"metadata", {{"name", "p"}}}, {"spec", {{"nodeName", "n1"}}}, {"status", {{"phase", "Running"}}}};
  auto match = [&](const std::string& s) { return std::get<FieldSelector>(FieldSelector::Parse(s)).Matches(pod); };
  EXPECT_TRUE(match("spec.nodeName=n1,status.phase=Running"));
  EXPECT_FALSE(match("spec.nodeName!=n1"));
  EXPECT_TRUE(match("spec.schedulerName="));
  EXPECT_TRUE(IsError(FieldSelector::Parse("nonsense")));
}

TEST(kubesimPatch, StrategicMergeDirectives) {
  json pod = {{"spec", {{"containers", {{{"name", "a"}, {"image", "1"}}, {{"name", "b"}, {"image", "1"}}}}}}};
  auto out = ApplyStrategicMergePatch(
      pod, json::parse(R"({"spec":{"containers":[{"name":"a","$patch":"delete"},{"name":"c","image":"2"}]}})"));
  const json& c = std::get<json>(out)["spec"]["containers"];
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0]["name"], "b");
  EXPECT_EQ(c[1]["name"], "c");
  auto merged = ApplyMergePatch(pod, json::parse(R"({"spec":{"containers":[]}})"));
  EXPECT_TRUE(std::get<json>(merged)["spec"]["containers"].empty()) << "merge patch replaces lists";
}

TEST(kubesimPatch, YamlBodies) {
  auto j = ParseJsonOrYaml("a: 1\nb: \"2\"\nc: [x, true]\nd: null\n");
  ASSERT_FALSE(IsError(j));
  EXPECT_EQ(std::get<json>(j), json::parse(R"({"a":1,"b":"2","c":["x",true],"d":null})"));
  EXPECT_TRUE(IsError(ParseJsonOrYaml("a: [unclosed")));
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
