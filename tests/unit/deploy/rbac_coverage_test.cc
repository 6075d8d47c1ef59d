// The septa-syncer Role that tenancy/host renders into every host namespace
// must be covered by the ClusterRoles deploy/kustomize binds to septad's
// ServiceAccount: the API server lets a subject create a Role only if it
// already holds every permission in it (or has `escalate`, which Septa's
// RBAC never grants). Base ClusterRoles plus the scheduler's component are
// what an install with that scheduler binds; each is read from the
// kustomization.yaml `resources` of its directory, as kustomize does.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "tenancy/host/render.h"
#include "tests/unit/tenancy/host/sample_inputs.h"

namespace septa::tenancy::host {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kKustomize = SEPTA_KUSTOMIZE_DIR;
constexpr char kNamespace[] = "septa-system";
constexpr char kServiceAccount[] = "septad";

struct Rule {
  std::set<std::string> groups, resources, verbs, names;
};

struct ClusterRole {
  std::string name, file;
  std::vector<Rule> rules;
};

std::set<std::string> Strings(const YAML::Node& node) {
  std::set<std::string> out;
  if (node && node.IsSequence()) {
    for (const auto& item : node) out.insert(item.as<std::string>());
  }
  return out;
}

// The YAML documents of the files a kustomization.yaml lists under
// `resources` (directories, which name other kustomizations, are skipped).
std::vector<std::pair<std::string, YAML::Node>> ResourceDocuments(const fs::path& dir) {
  std::vector<std::pair<std::string, YAML::Node>> out;
  const YAML::Node kustomization = YAML::LoadFile((dir / "kustomization.yaml").string());
  for (const auto& entry : kustomization["resources"]) {
    const fs::path file = dir / entry.as<std::string>();
    if (fs::is_directory(file)) continue;
    for (const YAML::Node& doc : YAML::LoadAllFromFile(file.string())) {
      if (doc && doc.IsMap()) out.emplace_back(fs::relative(file, kKustomize).string(), doc);
    }
  }
  return out;
}

// The ClusterRoles of `dir` that a ClusterRoleBinding there binds to
// septad's ServiceAccount: an unbound ClusterRole grants septad nothing.
std::vector<ClusterRole> BoundClusterRoles(const fs::path& dir) {
  const auto docs = ResourceDocuments(dir);
  std::set<std::string> bound;
  for (const auto& [file, doc] : docs) {
    if (doc["kind"].as<std::string>("") != "ClusterRoleBinding") continue;
    if (doc["roleRef"]["kind"].as<std::string>("") != "ClusterRole") continue;
    for (const auto& subject : doc["subjects"]) {
      if (subject["kind"].as<std::string>("") == "ServiceAccount" &&
          subject["name"].as<std::string>("") == kServiceAccount &&
          subject["namespace"].as<std::string>("") == kNamespace) {
        bound.insert(doc["roleRef"]["name"].as<std::string>());
      }
    }
  }
  std::vector<ClusterRole> out;
  for (const auto& [file, doc] : docs) {
    if (doc["kind"].as<std::string>("") != "ClusterRole") continue;
    ClusterRole role{.name = doc["metadata"]["name"].as<std::string>(), .file = file, .rules = {}};
    if (!bound.contains(role.name)) continue;
    for (const auto& r : doc["rules"]) {
      role.rules.push_back({.groups = Strings(r["apiGroups"]),
                            .resources = Strings(r["resources"]),
                            .verbs = Strings(r["verbs"]),
                            .names = Strings(r["resourceNames"])});
    }
    out.push_back(std::move(role));
  }
  return out;
}

bool Has(const std::set<std::string>& set, const std::string& value) {
  return set.contains(value) || set.contains("*");
}

// Whether one of `roles` grants `verb` on group/resource in every namespace
// without naming objects (the rendered rules name none).
bool Granted(const std::vector<ClusterRole>& roles, const std::string& group, const std::string& resource,
             const std::string& verb) {
  for (const ClusterRole& role : roles) {
    for (const Rule& rule : role.rules) {
      if (rule.names.empty() && Has(rule.groups, group) && Has(rule.resources, resource) && Has(rule.verbs, verb)) {
        return true;
      }
    }
  }
  return false;
}

// "group/resource verb" of every permission the rendered septa-syncer Role
// holds that `roles` do not grant.
std::vector<std::string> Uncovered(const json& role, const std::vector<ClusterRole>& roles) {
  std::vector<std::string> out;
  for (const json& rule : role.at("rules")) {
    EXPECT_FALSE(rule.contains("resourceNames")) << "the check assumes rendered rules name no objects: " << rule;
    for (const json& group : rule.at("apiGroups")) {
      for (const json& resource : rule.at("resources")) {
        for (const json& verb : rule.at("verbs")) {
          if (!Granted(roles, group, resource, verb)) {
            out.push_back(group.get<std::string>() + "/" + resource.get<std::string>() + " " + verb.get<std::string>());
          }
        }
      }
    }
  }
  return out;
}

std::vector<ClusterRole> RolesFor(Scheduler scheduler) {
  std::vector<ClusterRole> roles = BoundClusterRoles(kKustomize / "base");
  if (scheduler != Scheduler::kDefault) {
    for (ClusterRole& role : BoundClusterRoles(kKustomize / "components" / std::string(SchedulerName(scheduler)))) {
      roles.push_back(std::move(role));
    }
  }
  return roles;
}

std::vector<json> SyncerRoles(Scheduler scheduler) {
  std::vector<json> out;
  RenderConfig config;
  config.scheduler = scheduler;
  for (const SampleCase& c : SampleCases()) {
    auto rendered = RenderHostObjects(c.tier, c.vcluster, c.reservation, SampleNodes(), config);
    EXPECT_TRUE(rendered.ok()) << c.name << ": " << rendered.status().message();
    if (!rendered.ok()) continue;
    for (const json& object : rendered->objects) {
      if (object.value("kind", "") == "Role") out.push_back(object);
    }
  }
  return out;
}

std::string Names(const std::vector<ClusterRole>& roles) {
  std::string out;
  for (const ClusterRole& role : roles) out += (out.empty() ? "" : ", ") + role.name + " (" + role.file + ")";
  return out;
}

TEST(DeployRbac, ClusterRolesCoverTheRenderedSyncerRoleUnderEveryScheduler) {
  for (Scheduler scheduler : {Scheduler::kDefault, Scheduler::kKai, Scheduler::kKueue}) {
    const std::vector<ClusterRole> roles = RolesFor(scheduler);
    ASSERT_FALSE(roles.empty()) << "no ClusterRole bound to " << kNamespace << "/" << kServiceAccount << " under "
                                << kKustomize.string();
    const std::vector<json> rendered = SyncerRoles(scheduler);
    ASSERT_EQ(rendered.size(), SampleCases().size()) << "one Role per virtual cluster";
    for (const json& role : rendered) {
      for (const std::string& missing : Uncovered(role, roles)) {
        ADD_FAILURE() << "scheduler " << SchedulerName(scheduler) << ": the rendered Role "
                      << role["metadata"]["namespace"].get<std::string>() << "/"
                      << role["metadata"]["name"].get<std::string>() << " grants " << missing
                      << ", which none of septad's ClusterRoles grants (" << Names(roles)
                      << "); the API server would refuse to create the Role";
      }
    }
  }
}

// The comparison finds a gap: one verb taken away from the parsed
// ClusterRoles makes the rendered Role uncovered.
TEST(DeployRbac, ARemovedVerbIsFound) {
  std::vector<ClusterRole> roles = RolesFor(Scheduler::kKai);
  const std::vector<json> rendered = SyncerRoles(Scheduler::kKai);
  ASSERT_FALSE(rendered.empty());
  EXPECT_TRUE(Uncovered(rendered.front(), roles).empty());
  bool removed = false;
  for (ClusterRole& role : roles) {
    for (Rule& rule : role.rules) {
      if (rule.resources.contains("pods/status")) removed = rule.verbs.erase("update") > 0 || removed;
    }
  }
  ASSERT_TRUE(removed) << "no ClusterRole grants pods/status update";
  EXPECT_EQ(Uncovered(rendered.front(), roles), std::vector<std::string>{"/pods/status update"});
}

}  // namespace
}  // namespace septa::tenancy::host
