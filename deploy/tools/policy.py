#!/usr/bin/env python3
"""Policy check of rendered Kubernetes manifests (kubectl kustomize output).

Stands in for kyverno's Pod Security check and conftest, neither of which
this machine has (DEPLOY-FACTS.md section 3). Python 3 standard library plus
PyYAML (Debian python3-yaml). What it refuses:

  pods      every container and init container of every pod template must
            meet the restricted Pod Security Standard: runAsNonRoot (its own
            or the pod's), not uid 0, seccomp RuntimeDefault or Localhost,
            capabilities drop ALL (add at most NET_BIND_SERVICE),
            allowPrivilegeEscalation false, not privileged, and also a
            read-only root filesystem; no host namespaces, no hostPath, no
            host ports
  images    every image tagged or pinned by digest, never `latest`
  RBAC      no `*` in apiGroups, resources, verbs or nonResourceURLs; no
            escalate or impersonate; bind only with resourceNames; every
            binding's roleRef names a role of the render (or a built-in one)
  PDB       it must allow an eviction: maxUnavailable >= 1, or minAvailable
            below the replicas of what it selects; its selector must select
            a workload
  labels    workload selectors match their pod templates' labels; every
            Service, PDB, NetworkPolicy and topology spread selector selects
            some pod template of its namespace; Services' named target ports
            exist on the selected containers; a StatefulSet's serviceName is
            a headless Service of the render; a ServiceMonitor selects a
            Service with the port it scrapes
  config    ConfigMaps a pod uses exist in the render; septad's config.yaml
            holds only septad's keys (services/config/config.cc), as scalars;
            SEPTA_* variables name septad keys;
            with --install, vcluster_advertise_address is set

Usage: policy.py [--install] --config-source services/config/config.cc FILE...
Exit status 1 with one line per violation, 0 when there is none.
"""

import argparse
import re
import sys

import yaml

# Roles the API server brings: a binding may refer to them.
BUILTIN_CLUSTER_ROLES = {"system:auth-delegator", "view", "edit", "admin", "cluster-admin"}
WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}
POD_SECURITY_CAPABILITIES = {"NET_BIND_SERVICE"}


def septad_keys(config_source):
    text = open(config_source, encoding="utf-8").read()
    start = text.index("const std::vector<KeyDef>& Defs()")
    end = text.index("const KeyDef* Find", start)
    keys = set(re.findall(r'\{\{"([a-z0-9_]+)",', text[start:end]))
    if len(keys) < 20:
        raise SystemExit(f"policy.py: found only {len(keys)} keys in {config_source}; has Defs() changed shape?")
    return keys


class Checker:
    def __init__(self, docs, keys, install):
        self.docs = [d for d in docs if isinstance(d, dict)]
        self.keys = keys
        self.install = install
        self.errors = []

    def fail(self, doc, message):
        md = doc.get("metadata", {}) or {}
        where = f"{doc.get('kind')}/{md.get('namespace', '') + '/' if md.get('namespace') else ''}{md.get('name')}"
        self.errors.append(f"{where}: {message}")

    # ---- helpers
    def of_kind(self, *kinds):
        return [d for d in self.docs if d.get("kind") in kinds]

    @staticmethod
    def ns(doc):
        return (doc.get("metadata") or {}).get("namespace", "")

    def pod_templates(self):
        """(workload doc, pod spec, pod labels) of every pod template."""
        out = []
        for doc in self.docs:
            kind = doc.get("kind")
            spec = doc.get("spec") or {}
            if kind in WORKLOADS:
                template = spec.get("template") or {}
                out.append((doc, template.get("spec") or {}, (template.get("metadata") or {}).get("labels") or {}))
            elif kind == "CronJob":
                template = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
                out.append((doc, template.get("spec") or {}, (template.get("metadata") or {}).get("labels") or {}))
            elif kind == "Pod":
                out.append((doc, spec, (doc.get("metadata") or {}).get("labels") or {}))
        return out

    @staticmethod
    def selects(selector, labels):
        """Whether a LabelSelector (matchLabels/matchExpressions) selects labels."""
        if selector is None:
            return False
        for key, value in (selector.get("matchLabels") or {}).items():
            if labels.get(key) != value:
                return False
        for expr in selector.get("matchExpressions") or []:
            key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
            if op == "In" and labels.get(key) not in values:
                return False
            if op == "NotIn" and labels.get(key) in values:
                return False
            if op == "Exists" and key not in labels:
                return False
            if op == "DoesNotExist" and key in labels:
                return False
        return True

    def templates_selected(self, namespace, selector):
        return [(d, s, l) for d, s, l in self.pod_templates() if self.ns(d) == namespace and self.selects(selector, l)]

    # ---- checks
    def check_pods(self):
        for doc, pod, labels in self.pod_templates():
            psc = pod.get("securityContext") or {}
            for field in ("hostNetwork", "hostPID", "hostIPC"):
                if pod.get(field):
                    self.fail(doc, f"{field} is set")
            for volume in pod.get("volumes") or []:
                if "hostPath" in volume:
                    self.fail(doc, f"volume {volume.get('name')} is a hostPath")
            if psc.get("runAsUser") == 0:
                self.fail(doc, "the pod runs as uid 0")
            containers = [("container", c) for c in pod.get("containers") or []]
            containers += [("init container", c) for c in pod.get("initContainers") or []]
            if not containers:
                self.fail(doc, "a pod template without containers")
            for what, c in containers:
                self.check_container(doc, psc, what, c)

    def check_container(self, doc, psc, what, c):
        name = f"{what} {c.get('name')}"
        sc = c.get("securityContext") or {}
        if not sc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True:
            self.fail(doc, f"{name}: runAsNonRoot is not true")
        if sc.get("runAsUser", psc.get("runAsUser")) == 0:
            self.fail(doc, f"{name}: runs as uid 0")
        seccomp = (sc.get("seccompProfile") or psc.get("seccompProfile") or {}).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            self.fail(doc, f"{name}: seccompProfile is {seccomp or 'unset'}, not RuntimeDefault")
        caps = sc.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []):
            self.fail(doc, f"{name}: capabilities do not drop ALL")
        extra = set(caps.get("add") or []) - POD_SECURITY_CAPABILITIES
        if extra:
            self.fail(doc, f"{name}: adds capabilities {sorted(extra)}")
        if sc.get("allowPrivilegeEscalation") is not False:
            self.fail(doc, f"{name}: allowPrivilegeEscalation is not false")
        if sc.get("privileged"):
            self.fail(doc, f"{name}: privileged")
        if sc.get("readOnlyRootFilesystem") is not True:
            self.fail(doc, f"{name}: readOnlyRootFilesystem is not true")
        for port in c.get("ports") or []:
            if port.get("hostPort"):
                self.fail(doc, f"{name}: hostPort {port.get('hostPort')}")
        self.check_image(doc, name, c.get("image"))

    def check_image(self, doc, where, image):
        if not image:
            self.fail(doc, f"{where}: no image")
            return
        name, _, digest = image.partition("@")
        last = name.rsplit("/", 1)[-1]
        tag = last.partition(":")[2]
        if not tag and not digest:
            self.fail(doc, f"{where}: image {image} has neither a tag nor a digest")
        if tag == "latest":
            self.fail(doc, f"{where}: image {image} is tagged latest")

    def check_other_images(self):
        # Images of custom resources (CloudNativePG's imageName).
        for doc in self.of_kind("Cluster"):
            image = (doc.get("spec") or {}).get("imageName")
            if image is not None:
                self.check_image(doc, "spec.imageName", image)

    def check_rbac(self):
        roles = {}
        for doc in self.of_kind("ClusterRole", "Role"):
            md = doc.get("metadata") or {}
            roles[(doc["kind"], md.get("namespace", "") if doc["kind"] == "Role" else "", md.get("name"))] = doc
            if doc.get("aggregationRule"):
                self.fail(doc, "an aggregated ClusterRole grants what others add to it")
            for i, rule in enumerate(doc.get("rules") or []):
                for field in ("apiGroups", "resources", "verbs", "nonResourceURLs"):
                    values = rule.get(field) or []
                    if any("*" in str(v) for v in values):
                        self.fail(doc, f"rule {i}: `*` in {field}")
                verbs = set(rule.get("verbs") or [])
                for verb in sorted(verbs & {"escalate", "impersonate"}):
                    self.fail(doc, f"rule {i}: grants {verb}")
                if "bind" in verbs and not rule.get("resourceNames"):
                    self.fail(doc, f"rule {i}: grants bind without resourceNames")
        for doc in self.of_kind("ClusterRoleBinding", "RoleBinding"):
            ref = doc.get("roleRef") or {}
            kind, name = ref.get("kind"), ref.get("name")
            key = (kind, self.ns(doc) if kind == "Role" else "", name)
            if key not in roles and not (kind == "ClusterRole" and name in BUILTIN_CLUSTER_ROLES):
                self.fail(doc, f"roleRef {kind}/{name} is not in the render nor a built-in role")
            if not doc.get("subjects"):
                self.fail(doc, "no subjects")

    def check_workload_selectors(self):
        for doc, pod, labels in self.pod_templates():
            if doc.get("kind") in ("Pod", "CronJob", "Job"):
                continue
            selector = (doc.get("spec") or {}).get("selector")
            if not selector or not self.selects(selector, labels):
                self.fail(doc, f"spec.selector {selector} does not select its pod template's labels {labels}")
            for tsc in pod.get("topologySpreadConstraints") or []:
                if not self.selects(tsc.get("labelSelector"), labels):
                    self.fail(doc, f"topology spread on {tsc.get('topologyKey')} does not select its own pods")

    def check_statefulset_services(self):
        headless = {(self.ns(s), s["metadata"]["name"]) for s in self.of_kind("Service")
                    if (s.get("spec") or {}).get("clusterIP") == "None"}
        for doc in self.of_kind("StatefulSet"):
            name = (doc.get("spec") or {}).get("serviceName")
            if (self.ns(doc), name) not in headless:
                self.fail(doc, f"serviceName {name} is not a headless Service of the render")

    def check_services(self):
        for svc in self.of_kind("Service"):
            selector = (svc.get("spec") or {}).get("selector")
            if not selector:
                continue
            selected = self.templates_selected(self.ns(svc), {"matchLabels": selector})
            if not selected:
                self.fail(svc, f"selector {selector} selects no pod template")
                continue
            for port in (svc.get("spec") or {}).get("ports") or []:
                target = port.get("targetPort")
                if isinstance(target, str):
                    for doc, pod, _ in selected:
                        names = {p.get("name") for c in pod.get("containers") or [] for p in c.get("ports") or []}
                        if target not in names:
                            self.fail(svc, f"targetPort {target} is no container port of {doc['metadata']['name']}")

    def check_pdbs(self):
        for pdb in self.of_kind("PodDisruptionBudget"):
            spec = pdb.get("spec") or {}
            selected = self.templates_selected(self.ns(pdb), spec.get("selector"))
            if not selected:
                self.fail(pdb, "its selector selects no workload")
            if "maxUnavailable" in spec:
                value = spec["maxUnavailable"]
                if value in (0, "0", "0%"):
                    self.fail(pdb, "maxUnavailable 0 blocks every eviction")
            elif "minAvailable" in spec:
                value = spec["minAvailable"]
                for doc, _, _ in selected:
                    replicas = (doc.get("spec") or {}).get("replicas", 1)
                    if value == "100%" or (isinstance(value, int) and value >= replicas):
                        self.fail(pdb, f"minAvailable {value} of {replicas} replicas blocks every eviction")
            else:
                self.fail(pdb, "neither maxUnavailable nor minAvailable")

    def check_network_policies(self):
        for policy in self.of_kind("NetworkPolicy"):
            selector = (policy.get("spec") or {}).get("podSelector")
            if selector == {}:
                continue  # the whole namespace
            if not self.templates_selected(self.ns(policy), selector):
                self.fail(policy, f"podSelector {selector} selects no pod template")

    def check_service_monitors(self):
        services = self.of_kind("Service")
        for monitor in self.of_kind("ServiceMonitor"):
            spec = monitor.get("spec") or {}
            matched = [s for s in services if self.ns(s) == self.ns(monitor)
                       and self.selects(spec.get("selector"), (s.get("metadata") or {}).get("labels") or {})]
            if not matched:
                self.fail(monitor, "its selector selects no Service")
            for endpoint in spec.get("endpoints") or []:
                port = endpoint.get("port")
                for svc in matched:
                    if port not in {p.get("name") for p in (svc.get("spec") or {}).get("ports") or []}:
                        self.fail(monitor, f"Service {svc['metadata']['name']} has no port {port}")

    def check_config(self):
        config_maps = {(self.ns(d), d["metadata"]["name"]): d for d in self.of_kind("ConfigMap")}
        settings = {}  # septad key -> (value, where)
        for doc, pod, _ in self.pod_templates():
            used = set()
            for volume in pod.get("volumes") or []:
                if "configMap" in volume:
                    used.add((volume["configMap"].get("name"), volume["configMap"].get("optional", False)))
            for c in pod.get("containers") or []:
                for source in c.get("envFrom") or []:
                    if "configMapRef" in source:
                        used.add((source["configMapRef"].get("name"), source["configMapRef"].get("optional", False)))
                for env in c.get("env") or []:
                    self.check_env_name(doc, env.get("name"))
                    if "value" in env:
                        settings[self.key_of(env["name"])] = env["value"]
            for name, optional in sorted(used):
                cm = config_maps.get((self.ns(doc), name))
                if cm is None:
                    if not optional:
                        self.fail(doc, f"ConfigMap {name} is not in the render")
                    continue
                for key, value in (cm.get("data") or {}).items():
                    if key.startswith("SEPTA_"):
                        self.check_env_name(cm, key)
                        settings[self.key_of(key)] = value
                    elif key == "config.yaml":
                        settings.update(self.check_config_file(cm, value))
        if self.install and not settings.get("vcluster_advertise_address"):
            self.errors.append("septad: vcluster_advertise_address is not set (septad would advertise 127.0.0.1)")

    @staticmethod
    def key_of(env_name):
        return env_name[len("SEPTA_"):].lower() if env_name and env_name.startswith("SEPTA_") else None

    def check_env_name(self, doc, name):
        key = self.key_of(name)
        if key is not None and key not in self.keys:
            self.fail(doc, f"{name} names no septad configuration key ({key})")

    def check_config_file(self, cm, text):
        try:
            config = yaml.safe_load(text) or {}
        except yaml.YAMLError as e:
            self.fail(cm, f"config.yaml does not parse: {e}")
            return {}
        if not isinstance(config, dict):
            self.fail(cm, "config.yaml is not a mapping")
            return {}
        for key, value in config.items():
            if key not in self.keys:
                self.fail(cm, f"config.yaml: {key} is not a septad configuration key")
            if isinstance(value, (dict, list)) or value is None:
                self.fail(cm, f"config.yaml: {key} must be a scalar")
        return config

    def run(self):
        self.check_pods()
        self.check_other_images()
        self.check_rbac()
        self.check_workload_selectors()
        self.check_statefulset_services()
        self.check_services()
        self.check_pdbs()
        self.check_network_policies()
        self.check_service_monitors()
        self.check_config()
        return self.errors


def find(docs, kind, name=None):
    for doc in docs:
        if isinstance(doc, dict) and doc.get("kind") == kind and (name is None or doc["metadata"]["name"] == name):
            return doc
    raise SystemExit(f"policy.py --self-test: no {kind} {name or ''} in the render")


def septad_container(docs):
    return find(docs, "StatefulSet", "septad")["spec"]["template"]["spec"]["containers"][0]


def config_file(docs):
    for doc in docs:
        if isinstance(doc, dict) and doc.get("kind") == "ConfigMap" and "config.yaml" in (doc.get("data") or {}):
            return doc
    raise SystemExit("policy.py --self-test: no ConfigMap with config.yaml in the render")


# Breakages the check must find, each applied alone to a copy of a passing
# render: (what, function that breaks the documents in place).
MUTATIONS = [
    ("writable root filesystem",
     lambda d: septad_container(d)["securityContext"].update(readOnlyRootFilesystem=False)),
    ("no runAsNonRoot", lambda d: (septad_container(d)["securityContext"].pop("runAsNonRoot"),
                                   find(d, "StatefulSet")["spec"]["template"]["spec"]["securityContext"]
                                   .pop("runAsNonRoot"))),
    ("capabilities kept", lambda d: septad_container(d)["securityContext"]["capabilities"].update(drop=[])),
    ("privilege escalation", lambda d: septad_container(d)["securityContext"].pop("allowPrivilegeEscalation")),
    ("seccomp unconfined", lambda d: (septad_container(d)["securityContext"].pop("seccompProfile"),
                                      find(d, "StatefulSet")["spec"]["template"]["spec"]["securityContext"]
                                      .update(seccompProfile={"type": "Unconfined"}))),
    ("image latest", lambda d: septad_container(d).update(image="septa/septad:latest")),
    ("image untagged", lambda d: septad_container(d).update(image="registry.example.com:5000/septa/septad")),
    ("pod label renamed", lambda d: find(d, "StatefulSet")["spec"]["template"]["metadata"]["labels"]
     .update({"app.kubernetes.io/name": "septa-d"})),
    ("Service selector off", lambda d: find(d, "Service", "septad")["spec"]["selector"]
     .update({"app.kubernetes.io/instance": "other"})),
    ("wildcard verb", lambda d: find(d, "ClusterRole", "septa-core")["rules"][0].update(verbs=["*"])),
    ("wildcard resource", lambda d: find(d, "ClusterRole", "septa-syncer")["rules"][0].update(resources=["*"])),
    ("escalate", lambda d: find(d, "ClusterRole", "septa-core")["rules"][0]["verbs"].append("escalate")),
    ("unbound roleRef", lambda d: find(d, "ClusterRoleBinding", "septa-core")["roleRef"].update(name="septa-cor")),
    ("PDB blocks drains", lambda d: find(d, "PodDisruptionBudget")["spec"].update(maxUnavailable=0)),
    ("PDB minAvailable = replicas", lambda d: (find(d, "PodDisruptionBudget")["spec"].pop("maxUnavailable"),
                                               find(d, "PodDisruptionBudget")["spec"].update(minAvailable=3))),
    ("unknown config key", lambda d: config_file(d)["data"].update(
        {"config.yaml": config_file(d)["data"]["config.yaml"] + "\nhttp_adr: 0.0.0.0:1\n"})),
    ("misspelt SEPTA_ variable", lambda d: septad_container(d)["env"].append({"name": "SEPTA_REPLICAID", "value": "x"})),
]


def self_test(path, keys):
    """Each mutation of a passing render must be caught."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if Checker(list(yaml.safe_load_all(text)), keys, True).run():
        print(f"{path}: --self-test needs a render that passes")
        return 1
    missed = []
    for what, mutate in MUTATIONS:
        docs = list(yaml.safe_load_all(text))
        mutate(docs)
        if not Checker(docs, keys, True).run():
            missed.append(what)
    for what in missed:
        print(f"{path}: policy.py --self-test: not caught: {what}")
    return 1 if missed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--install", action="store_true", help="a whole install (an overlay), not a part")
    parser.add_argument("--self-test", action="store_true",
                        help="break each FILE (a passing render) in each way of MUTATIONS; each must be caught")
    parser.add_argument("--config-source", required=True, help="services/config/config.cc")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    keys = septad_keys(args.config_source)
    if args.self_test:
        return max(self_test(path, keys) for path in args.files)
    failed = False
    for path in args.files:
        with open(path, encoding="utf-8") as f:
            docs = list(yaml.safe_load_all(f))
        for error in Checker(docs, keys, args.install).run():
            print(f"{path}: {error}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
