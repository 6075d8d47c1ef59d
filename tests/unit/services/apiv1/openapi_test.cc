// The committed api/openapi.yaml: it reads as YAML, has the shape of an
// OpenAPI 3.1 document, and is exactly what septa-openapi writes now (CTest
// openapi_up_to_date checks the same from the command line).
#include "services/apiv1/openapi.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <regex>
#include <set>

#include "services/base/file.h"
#include "services/base/yaml_json.h"

namespace septa::apiv1 {
namespace {

using nlohmann::json;

json Committed() {
  auto text = base::ReadFile(SEPTA_OPENAPI_YAML);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? base::YamlToJson(YAML::Load(*text)) : json();
}

// Every "$ref" under `node`, as a JSON pointer into the document.
void CollectRefs(const json& node, std::set<std::string>& refs) {
  if (node.is_object()) {
    if (node.contains("$ref")) refs.insert(node["$ref"].get<std::string>());
    for (const auto& [key, value] : node.items()) CollectRefs(value, refs);
  } else if (node.is_array()) {
    for (const auto& value : node) CollectRefs(value, refs);
  }
}

TEST(OpenApi, CommittedFileIsWhatTheGeneratorWrites) {
  auto yaml = OpenApiYaml();
  ASSERT_TRUE(yaml.ok()) << yaml.status().ToString();
  auto committed = base::ReadFile(SEPTA_OPENAPI_YAML);
  ASSERT_TRUE(committed.ok());
  EXPECT_TRUE(*committed == *yaml) << "api/openapi.yaml is out of date: run scripts/gen_openapi.sh";
}

TEST(OpenApi, IsAnOpenApi31Document) {
  const json doc = Committed();
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc.at("openapi"), "3.1.0");
  EXPECT_TRUE(doc.at("info").at("title").is_string());
  EXPECT_TRUE(doc.at("info").at("version").is_string());
  ASSERT_TRUE(doc.at("paths").is_object());
  ASSERT_FALSE(doc.at("paths").empty());

  const std::set<std::string> verbs = {"get", "put", "post", "delete", "options", "head", "patch", "trace"};
  const std::regex variable(R"(\{([^}]+)\})");
  std::set<std::string> operation_ids;
  for (const auto& [path, item] : doc.at("paths").items()) {
    EXPECT_TRUE(path.starts_with("/v1/")) << path;
    std::set<std::string> template_vars;
    for (std::sregex_iterator it(path.begin(), path.end(), variable), end; it != end; ++it) {
      template_vars.insert((*it)[1]);
    }
    for (const auto& [verb, op] : item.items()) {
      ASSERT_TRUE(verbs.contains(verb)) << path << " " << verb;
      const std::string id = op.at("operationId").get<std::string>();
      EXPECT_TRUE(operation_ids.insert(id).second) << "duplicate operationId " << id;
      // Every template variable is a required path parameter, and only those.
      std::set<std::string> path_params;
      for (const auto& p : op.value("parameters", json::array())) {
        const std::string in = p.at("in");
        EXPECT_TRUE(in == "path" || in == "query" || in == "header") << id << " " << in;
        EXPECT_TRUE(p.at("schema").is_object()) << id;
        if (in == "path") {
          EXPECT_EQ(p.at("required"), true) << id;
          path_params.insert(p.at("name").get<std::string>());
        }
      }
      EXPECT_EQ(path_params, template_vars) << id;
      if (verb == "get" || verb == "delete") {
        EXPECT_FALSE(op.contains("requestBody")) << id;
      }
      const json& responses = op.at("responses");
      EXPECT_TRUE(responses.contains("default")) << id;
      // At least one answer that is no error: a success, or the redirect
      // a browser's sign-in route answers; RPCs exactly one success.
      int success = 0;
      for (const auto& [code, response] : responses.items()) {
        if (code == "default") continue;
        EXPECT_TRUE(std::regex_match(code, std::regex("[1-5][0-9][0-9]"))) << id << " " << code;
        success += code.starts_with("2") || code.starts_with("3");
        EXPECT_TRUE(response.contains("description") || response.contains("$ref")) << id << " " << code;
      }
      if (path.starts_with("/v1/sessions")) {
        EXPECT_GE(success, 1) << id;
      } else {
        EXPECT_EQ(success, 1) << id;
      }
    }
  }
  EXPECT_TRUE(operation_ids.contains("CreateVirtualCluster"));
  EXPECT_TRUE(operation_ids.contains("ListNodes"));

  // Every reference resolves to a component.
  std::set<std::string> refs;
  CollectRefs(doc, refs);
  EXPECT_FALSE(refs.empty());
  for (const std::string& ref : refs) {
    ASSERT_TRUE(ref.starts_with("#/")) << ref;
    EXPECT_TRUE(doc.contains(json::json_pointer(ref.substr(1)))) << "dangling " << ref;
  }
}

TEST(OpenApi, SchemasFollowProtobufsJsonMapping) {
  const json schemas = Committed().at("components").at("schemas");
  const json& vc = schemas.at("VirtualCluster").at("properties");
  EXPECT_EQ(vc.at("state").at("$ref"), "#/components/schemas/VirtualCluster.State");
  EXPECT_EQ(schemas.at("VirtualCluster.State").at("enum"),
            json::parse(R"(["STATE_UNSPECIFIED","PROVISIONING","READY","SLEEPING","DELETING","FAILED"])"));
  EXPECT_EQ(vc.at("create_time").at("format"), "date-time");
  EXPECT_EQ(vc.at("generation").at("type"), "string");  // int64: a decimal string
  EXPECT_EQ(vc.at("conditions").at("items").at("$ref"), "#/components/schemas/Condition");
  EXPECT_EQ(schemas.at("Capacity").at("properties").at("mig").at("type"), "array");
  EXPECT_EQ(schemas.at("Tenant").at("properties").at("labels").at("additionalProperties").at("type"), "string");
  EXPECT_EQ(schemas.at("TrustTier").at("properties").at("credential_ttl_max").at("type"), "string");
}

TEST(OpenApi, DescriptionsComeFromTheProtoComments) {
  const json doc = Committed();
  const json& vc = doc.at("components").at("schemas").at("VirtualCluster").at("properties");
  // "// output only" marks a field readOnly; fields a client sets are not.
  EXPECT_EQ(vc.at("reservation").value("readOnly", false), true);
  EXPECT_EQ(vc.at("state").value("readOnly", false), true);
  EXPECT_EQ(vc.at("capacity").value("readOnly", false), false);
  EXPECT_EQ(vc.at("name").at("description"), "DNS-1123 label, 1-40 characters, unique per tenant; immutable.");
  EXPECT_EQ(doc.at("paths").at("/v1/inventory/nodes").at("get").at("description"),
            "Every node and GPU, with its MIG layout and who holds what.");
}

}  // namespace
}  // namespace septa::apiv1
