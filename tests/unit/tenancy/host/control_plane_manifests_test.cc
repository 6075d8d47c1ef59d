// The control plane of a virtual cluster on a real host: compared byte for
// byte with golden_control_plane/ (regenerate: SEPTA_UPDATE_GOLDEN=1, see
// CMakeLists.txt), and checked for what a restricted namespace and an
// operator need: security contexts, resources, labels, no secret inline.
#include <gtest/gtest.h>

#include <map>

#include "tenancy/host/control_plane_manifests.h"
#include "tenancy/host/manifest.h"
#include "tenancy/host/names.h"
#include "tests/support/golden.h"

namespace septa::tenancy::host {
namespace {

using nlohmann::json;

std::string Pem(const std::string& type, const std::string& body) {
  return "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n";
}

ControlPlaneInputs SampleInputs() {
  ControlPlaneInputs in;
  in.tenant = "regulated";
  in.vcluster = "secure";
  in.host_namespace = HostNamespaceName(in.tenant, in.vcluster);
  in.certificates = {.ca_certificate = Pem("CERTIFICATE", "Y2E="),
                     .apiserver_certificate = Pem("CERTIFICATE", "YXBpc2VydmVy"),
                     .apiserver_key = Pem("EC PRIVATE KEY", "YXBpc2VydmVyLWtleQ=="),
                     .service_account_key = Pem("EC PRIVATE KEY", "c2Eta2V5"),
                     .controller_manager_certificate = Pem("CERTIFICATE", "Y20="),
                     .controller_manager_key = Pem("EC PRIVATE KEY", "Y20ta2V5"),
                     .coredns_certificate = Pem("CERTIFICATE", "ZG5z"),
                     .coredns_key = Pem("EC PRIVATE KEY", "ZG5zLWtleQ=="),
                     .bootstrap_certificate = Pem("CERTIFICATE", "Ym9vdHN0cmFw"),
                     .bootstrap_key = Pem("EC PRIVATE KEY", "Ym9vdHN0cmFwLWtleQ==")};
  ControlPlaneConfig config;
  in.kine_endpoint = KineEndpoint(config, KineDatabaseName(config, in.tenant, in.vcluster), "s3cr3tpassw0rd",
                                  "postgres.septa-system.svc:5432", KineDatabaseName(config, in.tenant, in.vcluster));
  return in;
}

std::vector<json> Rendered() {
  auto rendered = RenderControlPlane(SampleInputs(), ControlPlaneConfig{}, RenderConfig{});
  EXPECT_TRUE(rendered.ok()) << rendered.status().ToString();
  return rendered.ok() ? *rendered : std::vector<json>{};
}

const json* Find(const std::vector<json>& objects, const std::string& kind, std::string_view name) {
  for (const json& o : objects) {
    if (o["kind"] == kind && o["metadata"]["name"] == name) return &o;
  }
  return nullptr;
}

std::vector<json> PodSpecs(const std::vector<json>& objects) {
  std::vector<json> out;
  for (const json& o : objects) {
    if (o["kind"] == "StatefulSet" || o["kind"] == "Deployment" || o["kind"] == "Job") {
      out.push_back(o["spec"]["template"]["spec"]);
    }
  }
  return out;
}

TEST(ControlPlaneManifests, Golden) {
  const json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"metadata", json::object()}, {"items", Rendered()}};
  const std::string text = list.dump(2) + "\n";
  test::ExpectGolden(std::string(SEPTA_CONTROL_PLANE_GOLDEN_DIR) + "/control-plane.json", text);
}

TEST(ControlPlaneManifests, EveryObjectInTheHostNamespaceWithTheVirtualClustersLabels) {
  const auto objects = Rendered();
  ASSERT_EQ(objects.size(), 13u);
  const std::string ns = HostNamespaceName("regulated", "secure");
  for (const json& o : objects) {
    EXPECT_EQ(o["metadata"].value("namespace", ""), ns) << o["kind"];
    for (const auto& [key, value] : VClusterLabels("regulated", "secure")) {
      EXPECT_EQ(o["metadata"]["labels"].value(key, ""), value) << o["kind"] << " " << key;
    }
  }
  for (const char* kind : {"ServiceAccount", "StatefulSet"}) EXPECT_NE(Find(objects, kind, kControlPlaneName), nullptr);
  for (const char* kind : {"Deployment", "ConfigMap", "Service"}) EXPECT_NE(Find(objects, kind, kCoreDnsName), nullptr);
  EXPECT_NE(Find(objects, "Service", kApiServerServiceName), nullptr);
  EXPECT_NE(Find(objects, "Job", kBootstrapName), nullptr);
  for (auto name : {kCertificatesSecretName, kKineSecretName, kCoreDnsSecretName, kBootstrapName}) {
    EXPECT_NE(Find(objects, "Secret", name), nullptr) << name;
  }
}

TEST(ControlPlaneManifests, PodsPassTheRestrictedPodSecurityLevel) {
  const auto specs = PodSpecs(Rendered());
  ASSERT_EQ(specs.size(), 3u);
  for (const json& spec : specs) {
    EXPECT_EQ(spec["securityContext"]["runAsNonRoot"], true);
    EXPECT_EQ(spec["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
    EXPECT_NE(spec["securityContext"].value("runAsUser", 0), 0);
    EXPECT_FALSE(spec.contains("hostNetwork"));
    for (const json& volume : spec["volumes"]) EXPECT_FALSE(volume.contains("hostPath"));
    for (const json& c : spec["containers"]) {
      const json& sc = c["securityContext"];
      EXPECT_EQ(sc["allowPrivilegeEscalation"], false) << c["name"];
      EXPECT_EQ(sc["capabilities"]["drop"], json::array({"ALL"})) << c["name"];
      EXPECT_FALSE(sc["capabilities"].contains("add")) << c["name"];
      EXPECT_EQ(sc["runAsNonRoot"], true) << c["name"];
      EXPECT_FALSE(sc.value("privileged", false)) << c["name"];
      for (const char* part : {"requests", "limits"}) {
        EXPECT_TRUE(c["resources"][part].contains("cpu")) << c["name"] << " " << part;
        EXPECT_TRUE(c["resources"][part].contains("memory")) << c["name"] << " " << part;
      }
      for (const json& p : c.value("ports", json::array())) EXPECT_GE(p["containerPort"], 1024) << c["name"];
    }
  }
}

TEST(ControlPlaneManifests, TheDatabasePasswordIsOnlyInItsSecret) {
  const auto objects = Rendered();
  int holders = 0;
  for (const json& o : objects) {
    if (o.dump().find("s3cr3tpassw0rd") == std::string::npos) continue;
    ++holders;
    EXPECT_EQ(o["kind"], "Secret");
    EXPECT_EQ(o["metadata"]["name"], kKineSecretName);
  }
  EXPECT_EQ(holders, 1);
  const json* plane = Find(objects, "StatefulSet", kControlPlaneName);
  ASSERT_NE(plane, nullptr);
  const json& kine = (*plane)["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(kine["name"], "kine");
  EXPECT_EQ(kine["env"][0]["valueFrom"]["secretKeyRef"]["name"], kKineSecretName);
}

TEST(ControlPlaneManifests, ApiServerOnKineAndAReducedControllerManager) {
  const auto objects = Rendered();
  const json* plane = Find(objects, "StatefulSet", kControlPlaneName);
  ASSERT_NE(plane, nullptr);
  const json& containers = (*plane)["spec"]["template"]["spec"]["containers"];
  ASSERT_EQ(containers.size(), 3u);
  const std::string apiserver = containers[1]["args"].dump(), manager = containers[2]["args"].dump();
  EXPECT_NE(apiserver.find("--etcd-servers=http://127.0.0.1:2379"), std::string::npos);
  EXPECT_NE(containers[0]["args"].dump().find("--listen-address=127.0.0.1:2379"), std::string::npos);
  EXPECT_NE(manager.find("deployment-controller,replicaset-controller,statefulset-controller,job-controller"),
            std::string::npos);
  for (const char* absent : {"nodeipam", "nodelifecycle", "attachdetach", "persistentvolume-binder"}) {
    EXPECT_EQ(manager.find(absent), std::string::npos) << absent;
  }
}

// Inside the virtual cluster: the credential roles' groups bound to their
// ClusterRoles (what a tenant's kubeconfig may do), every service account
// allowed its own TokenReview (Vault's Kubernetes auth), and CoreDNS's rights.
TEST(ControlPlaneManifests, TheBootstrapJobAppliesTheRoleBindingsAndCoreDnsRights) {
  const auto objects = Rendered();
  const json* secret = Find(objects, "Secret", kBootstrapName);
  ASSERT_NE(secret, nullptr);
  const std::string text = (*secret)["stringData"][std::string(kBootstrapObjectsKey)].get<std::string>();
  const std::vector<json> inside = json::parse(text)["items"];
  std::map<std::string, std::string> bound;  // subject -> ClusterRole
  for (const json& o : inside) {
    if (o["kind"] == "ClusterRoleBinding") bound[o["subjects"][0]["name"]] = o["roleRef"]["name"];
  }
  const std::map<std::string, std::string> expected = {{"septa:admin", "cluster-admin"},
                                                       {"septa:edit", "edit"},
                                                       {"septa:view", "view"},
                                                       {"system:serviceaccounts", "system:auth-delegator"},
                                                       {std::string(kCoreDnsUser), std::string(kCoreDnsUser)}};
  EXPECT_EQ(bound, expected);
  const json* role = Find(inside, "ClusterRole", kCoreDnsUser);
  ASSERT_NE(role, nullptr);
  EXPECT_NE((*role)["rules"].dump().find("endpointslices"), std::string::npos);
  for (const json& binding : VirtualClusterRoleBindings()) {
    EXPECT_NE(Find(inside, "ClusterRoleBinding", binding["metadata"]["name"].get<std::string>()), nullptr)
        << "the simulated control planes seed the same bindings: " << binding.dump();
  }

  const json* job = Find(objects, "Job", kBootstrapName);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ((*job)["spec"]["template"]["spec"]["restartPolicy"], "OnFailure");
  EXPECT_NE((*job)["spec"]["template"]["spec"]["containers"][0]["args"].dump().find("apply"), std::string::npos);
  // A change of the objects is a change of the Job's template, so the shell replaces the Job and it runs again.
  EXPECT_EQ((*job)["spec"]["template"]["metadata"]["annotations"][std::string(kBootstrapObjectsHashAnnotation)],
            Sha256Hex(text));
}

// kube-apiserver takes client certificates of the virtual cluster's CA (its
// components') and, with issuer vault, of the cluster's Vault intermediate
// (tenants' kubeconfigs).
TEST(ControlPlaneManifests, TheApiServerTrustsTheClusterCaAndTheExtraClientCa) {
  auto plane_args = [](const std::vector<json>& objects) {
    const json* plane = Find(objects, "StatefulSet", kControlPlaneName);
    return plane ? (*plane)["spec"]["template"]["spec"]["containers"][1]["args"].dump() : std::string();
  };
  auto client_ca = [](const std::vector<json>& objects) {
    const json* certs = Find(objects, "Secret", kCertificatesSecretName);
    return certs ? (*certs)["stringData"][std::string(kClientCaKey)].get<std::string>() : std::string();
  };
  const auto own = Rendered();
  EXPECT_NE(plane_args(own).find("--client-ca-file=/etc/septa/pki/client-ca.crt"), std::string::npos);
  EXPECT_EQ(client_ca(own), SampleInputs().certificates.ca_certificate);

  ControlPlaneInputs in = SampleInputs();
  in.extra_client_ca = Pem("CERTIFICATE", "dmF1bHQtaW50ZXJtZWRpYXRl");
  auto with_vault = RenderControlPlane(in, ControlPlaneConfig{}, RenderConfig{});
  ASSERT_TRUE(with_vault.ok()) << with_vault.status().ToString();
  EXPECT_EQ(client_ca(*with_vault), in.certificates.ca_certificate + in.extra_client_ca);
  EXPECT_EQ(plane_args(*with_vault), plane_args(own));

  in.extra_client_ca = "not a certificate";
  auto bad = RenderControlPlane(in, ControlPlaneConfig{}, RenderConfig{});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("extra_client_ca"), std::string::npos) << bad.status().ToString();
}

TEST(ControlPlaneManifests, ConfiguredImagesAndTheDnsPort) {
  ControlPlaneConfig config;
  config.kube_apiserver_image = "mirror.example/kube-apiserver:v1.35.0";
  RenderConfig render;
  render.dns_port = 5353;
  auto rendered = RenderControlPlane(SampleInputs(), config, render);
  ASSERT_TRUE(rendered.ok()) << rendered.status().ToString();
  EXPECT_NE(json(*rendered).dump().find("mirror.example/kube-apiserver:v1.35.0"), std::string::npos);
  const json* corefile = Find(*rendered, "ConfigMap", kCoreDnsName);
  ASSERT_NE(corefile, nullptr);
  EXPECT_EQ((*corefile)["data"]["Corefile"].get<std::string>().rfind(".:5353 {", 0), 0u);
}

TEST(ControlPlaneManifests, BadInputsNameTheField) {
  auto field_of = [](const ControlPlaneInputs& in, const ControlPlaneConfig& config) {
    auto rendered = RenderControlPlane(in, config, RenderConfig{});
    EXPECT_FALSE(rendered.ok());
    return rendered.ok() ? std::string() : rendered.status().message();
  };
  ControlPlaneConfig config;
  config.kine_image = "";
  EXPECT_NE(field_of(SampleInputs(), config).find("control_plane.kine_image"), std::string::npos);
  config = {};
  config.coredns.memory_limit_mib = 1;
  EXPECT_NE(field_of(SampleInputs(), config).find("control_plane.coredns"), std::string::npos);
  config = {};
  config.database_prefix = "Bad-Prefix";
  EXPECT_NE(field_of(SampleInputs(), config).find("control_plane.database_prefix"), std::string::npos);
  config = {};
  config.database_sslmode = "prefer";
  EXPECT_NE(field_of(SampleInputs(), config).find("control_plane.database_sslmode"), std::string::npos);
  ControlPlaneInputs in = SampleInputs();
  in.certificates.service_account_key = "";
  EXPECT_NE(field_of(in, {}).find("certificates.service_account_key"), std::string::npos);
  in = SampleInputs();
  in.kine_endpoint = "sqlite:///tmp/db";
  EXPECT_NE(field_of(in, {}).find("kine_endpoint"), std::string::npos);
  in = SampleInputs();
  in.vcluster = "Not_A_Name";
  EXPECT_NE(field_of(in, {}).find("vcluster"), std::string::npos);
  in = SampleInputs();
  in.host_namespace = "";
  EXPECT_NE(field_of(in, {}).find("host_namespace"), std::string::npos);
}

// Everything goes to the namespace stored with the virtual cluster, which
// an earlier name function may have given: never derived again here.
TEST(ControlPlaneManifests, EveryNamespacedObjectIsInTheStoredHostNamespace) {
  ControlPlaneInputs in = SampleInputs();
  in.host_namespace = "septa-regulated-x-secure-named-earlier";
  auto rendered = RenderControlPlane(in, ControlPlaneConfig{}, RenderConfig{});
  ASSERT_TRUE(rendered.ok()) << rendered.status().ToString();
  for (const json& object : *rendered) {
    if (object["metadata"].contains("namespace")) {
      EXPECT_EQ(object["metadata"]["namespace"], in.host_namespace) << object["metadata"].value("name", "");
    }
  }
  EXPECT_EQ(ControlPlaneEndpoint(in.host_namespace, ControlPlaneConfig{}).find("septa-apiserver." + in.host_namespace),
            8u);
}

TEST(ControlPlaneManifests, DatabaseNamesAreStableIdentifiersPerVirtualCluster) {
  ControlPlaneConfig config;
  const std::string a = KineDatabaseName(config, "acme", "train");
  EXPECT_EQ(a, KineDatabaseName(config, "acme", "train"));
  EXPECT_NE(a, KineDatabaseName(config, "acme", "notebooks"));
  EXPECT_NE(KineDatabaseName(config, "a-x", "b"), KineDatabaseName(config, "a", "x-b"));
  EXPECT_EQ(a.size(), config.database_prefix.size() + 24);
  EXPECT_EQ(a.rfind("septa_vc_", 0), 0u);
  EXPECT_EQ(ControlPlaneEndpoint("septa-acme-x-train", config),
            "https://septa-apiserver.septa-acme-x-train.svc.cluster.local");
}

}  // namespace
}  // namespace septa::tenancy::host
