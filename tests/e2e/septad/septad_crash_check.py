#!/usr/bin/env python3
"""The exact end check of septad_crash_run.sh: the API, the host and the
inventory against what the driver believes (its --belief file: lines
"live <tenant>/<name> <pods> <kubeconfig or -> [<configmap>:<value> ...]" and
"deleted <tenant>/<name>"). Waits up to --timeout seconds for the state to
converge, then prints every difference left and exits 1. Once converged:
the ConfigMaps written through virtual clusters' APIs are there, and the
control planes stored in PostgreSQL are exactly the live ones' (septa-vcp-admin).

Host objects are found by the labels the provisioner writes
(tenancy/host/manifest.h, render.h; names in tenancy/host/names.h)."""
import argparse
import json
import subprocess
import sys
import time
import urllib.request
from collections import Counter

MANAGED = "app.kubernetes.io/managed-by=septa"
TENANT_LABEL = "septa.dev/tenant"
VCLUSTER_LABEL = "septa.dev/vcluster"
NODE_LABEL_PREFIX = "vcluster.septa.dev/"  # + host namespace: the tier (dedicated, exclusive)
EXCLUSIVE_KEY = "septa.dev/exclusive-tenant"  # label and NoSchedule taint of exclusive nodes
# Every virtual cluster's namespaced host objects (kind, name).
NAMESPACED = {
    ("ResourceQuota", "septa-quota"), ("LimitRange", "septa-limits"),
    ("NetworkPolicy", "septa-default-deny"), ("NetworkPolicy", "septa-allow"),
    ("ServiceAccount", "septa-workload"), ("Role", "septa-syncer"), ("RoleBinding", "septa-syncer"),
}
NAMESPACED_RESOURCES = ("resourcequotas,limitranges,networkpolicies.networking.k8s.io,serviceaccounts,"
                        "roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io")


def parse_belief(path):
    live, deleted = {}, set()
    for line in open(path):
        words = line.split()
        if not words:
            continue
        if words[0] == "live":
            configmaps = dict(w.split(":", 1) for w in words[4:])
            live[words[1]] = {"pods": int(words[2]), "kubeconfig": None if words[3] == "-" else words[3],
                              "configmaps": configmaps}
        elif words[0] == "deleted":
            deleted.add(words[1])
    return live, deleted


class World:
    def __init__(self, args):
        self.args = args

    def api(self, path):
        request = urllib.request.Request(self.args.api + path, headers={"Authorization": "Bearer " + self.args.token})
        with urllib.request.urlopen(request, timeout=20) as reply:
            return json.load(reply)

    def host(self, *words):
        out = subprocess.run([self.args.kubectl, "--kubeconfig", self.args.host_kubeconfig, "--request-timeout=10s",
                              *words, "-o", "json"], check=True, capture_output=True, text=True).stdout
        return json.loads(out)["items"]

    def snapshot(self):
        vclusters = {}
        for tenant in self.args.tenants:
            token = ""
            while True:
                page = self.api(f"/v1/tenants/{tenant}/vclusters?page_size=100&page_token={token}")
                for vc in page.get("virtual_clusters", []):
                    key = f"{vc['tenant']}/{vc['name']}"
                    vclusters.setdefault(key, []).append(vc)  # twice would be a duplicate
                token = page.get("next_page_token", "")
                if not token:
                    break
        inventory, token = [], ""
        while True:
            page = self.api(f"/v1/inventory/nodes?page_size=100&page_token={token}")
            inventory += page.get("nodes", [])
            token = page.get("next_page_token", "")
            if not token:
                break
        return {
            "vclusters": vclusters,
            "namespaces": self.host("get", "namespaces", "-l", MANAGED),
            "namespaced": self.host("get", NAMESPACED_RESOURCES, "-A", "-l", MANAGED),
            "queues": self.host("get", "queues.scheduling.run.ai", "-l", MANAGED),
            "nodes": self.host("get", "nodes"),
            "inventory": inventory,
        }


def labels(obj):
    return obj["metadata"].get("labels") or {}


def owner(obj):
    l = labels(obj)
    return f"{l[TENANT_LABEL]}/{l[VCLUSTER_LABEL]}" if TENANT_LABEL in l and VCLUSTER_LABEL in l else None


def holders(obj, out):
    """Every reservation holder in the inventory JSON: one per share, MIG instance, GPU or node held."""
    if isinstance(obj, dict):
        holder = obj.get("holder")
        if isinstance(holder, dict) and holder.get("tenant"):
            out.append((f"{holder['tenant']}/{holder['vcluster']}", holder.get("releasing", False)))
        for value in obj.values():
            holders(value, out)
    elif isinstance(obj, list):
        for value in obj:
            holders(value, out)
    return out


def differences(s, live, deleted):
    problems = []
    vcs = s["vclusters"]
    # The virtual clusters: exactly the believed ones, once each, READY at their generation.
    for key in sorted(set(live) - set(vcs)):
        problems.append(f"lost: {key} is not listed")
    for key in sorted(set(vcs) - set(live)):
        why = "deleted, still listed" if key in deleted else "unexpected (a duplicate create?)"
        problems.append(f"{why}: {key} ({vcs[key][0]['state']})")
    for key, found in vcs.items():
        if len(found) > 1:
            problems.append(f"duplicated: {key} is listed {len(found)} times")
    namespace_of, tier_of, reserved_nodes, exclusive_nodes, held = {}, {}, {}, {}, {}
    for key in sorted(set(live) & set(vcs)):
        vc = vcs[key][0]
        tenant = key.split("/")[0]
        tier_of[key] = tenant[2:]  # t-<tier>
        if vc["state"] != "READY":
            problems.append(f"{key} is {vc['state']}")
        for c in vc.get("conditions", []):
            # CapacityReady is the API's, written when the capacity changes:
            # a quota change leaves it at the capacity's generation.
            stale = c["type"] != "CapacityReady" and c.get("observed_generation") != vc["generation"]
            if c["status"] != "True" or stale:
                problems.append(f"{key}: {c['type']} {c['status']} at generation "
                                f"{c.get('observed_generation')} of {vc['generation']}: {c.get('message', '')}")
        if vc["quota"].get("pods", 0) != live[key]["pods"]:
            problems.append(f"{key}: quota.pods {vc['quota'].get('pods', 0)}, the driver set {live[key]['pods']}")
        namespace_of[key] = vc.get("host_namespace", "")
        if not namespace_of[key]:
            problems.append(f"{key} has no host namespace")
        r = vc.get("reservation", {})
        if r.get("releasing"):
            problems.append(f"{key}: its reservation is releasing")
        held[key] = len(r.get("shares", [])) + len(r.get("mig", [])) + len(r.get("gpus", [])) + len(r.get("nodes", []))
        reserved_nodes[key] = {g["node"] for g in r.get("gpus", [])} | set(r.get("nodes", []))
        if tier_of[key] == "exclusive":
            for node in r.get("nodes", []):
                exclusive_nodes[node] = tenant
    live_namespaces = {ns: key for key, ns in namespace_of.items()}

    # Host namespaces: one per live virtual cluster, none of anyone else.
    found_ns = {n["metadata"]["name"]: n for n in s["namespaces"]}
    for ns, key in live_namespaces.items():
        if ns not in found_ns:
            problems.append(f"{key}: host namespace {ns} missing")
    for ns, n in found_ns.items():
        if ns not in live_namespaces:
            problems.append(f"leaked host namespace {ns} (of {owner(n)})")
        elif owner(n) != live_namespaces[ns]:
            problems.append(f"host namespace {ns} labelled for {owner(n)}, not {live_namespaces[ns]}")
    # Namespaced objects: exactly the set, in live namespaces only, with the believed quota.
    in_ns = {}
    for obj in s["namespaced"]:
        ns, name, kind = obj["metadata"]["namespace"], obj["metadata"]["name"], obj["kind"]
        if ns not in live_namespaces or owner(obj) != live_namespaces[ns]:
            problems.append(f"leaked {kind} {ns}/{name} (of {owner(obj)})")
            continue
        in_ns.setdefault(ns, set()).add((kind, name))
        if kind == "ResourceQuota":
            pods = live[live_namespaces[ns]]["pods"]
            hard = obj.get("spec", {}).get("hard", {}).get("pods")
            if (str(pods) if pods else None) != hard:
                problems.append(f"{ns}: ResourceQuota pods {hard}, the virtual cluster's quota {pods}")
    for ns, key in live_namespaces.items():
        missing = NAMESPACED - in_ns.get(ns, set())
        if missing:
            problems.append(f"{key}: missing in {ns}: {sorted(missing)}")
    # KAI leaf queues (named as the namespace); the per-tier parents belong to nobody.
    leaves = {q["metadata"]["name"]: q for q in s["queues"] if owner(q)}
    for ns, key in live_namespaces.items():
        if ns not in leaves:
            problems.append(f"{key}: leaf queue {ns} missing")
    for name, q in leaves.items():
        if live_namespaces.get(name) != owner(q):
            problems.append(f"leaked queue {name} (of {owner(q)})")
    # Nodes: reservation labels and the exclusive label and taint exactly where reserved.
    for node in s["nodes"]:
        name, l = node["metadata"]["name"], labels(node)
        for key_label, value in l.items():
            if not key_label.startswith(NODE_LABEL_PREFIX):
                continue
            ns = key_label[len(NODE_LABEL_PREFIX):]
            key = live_namespaces.get(ns)
            if key is None or name not in reserved_nodes.get(key, set()) or value != tier_of[key]:
                problems.append(f"leaked node label {key_label}={value} on {name}")
        for key, nodes in reserved_nodes.items():
            if name in nodes and l.get(NODE_LABEL_PREFIX + namespace_of[key]) != tier_of[key]:
                problems.append(f"{key}: node {name} lacks its label {NODE_LABEL_PREFIX}{namespace_of[key]}")
        want = exclusive_nodes.get(name)
        if l.get(EXCLUSIVE_KEY) != want:
            problems.append(f"node {name}: label {EXCLUSIVE_KEY}={l.get(EXCLUSIVE_KEY)}, want {want}")
        taints = [t.get("value") for t in node.get("spec", {}).get("taints") or [] if t["key"] == EXCLUSIVE_KEY]
        if taints != ([want] if want else []):
            problems.append(f"node {name}: taints {EXCLUSIVE_KEY} {taints}, want {want}")
    # The inventory: holders are live virtual clusters, each as many times as its reservation has entries.
    count = Counter()
    for key, releasing in holders(s["inventory"], []):
        count[key] += 1
        if key not in live:
            problems.append(f"leaked reservation: the inventory shows {key} as a holder")
        elif releasing:
            problems.append(f"{key}: releasing in the inventory")
    for key, n in held.items():
        if count[key] != n:
            problems.append(f"{key}: {n} reservation entries, {count[key]} holdings in the inventory")
    return problems


def virtual_objects(args, live):
    """Every ConfigMap written through a virtual cluster's own API is still there; returns the problems and the count."""
    problems, checked = [], 0
    for key, b in sorted(live.items()):
        for name, value in b["configmaps"].items():
            checked += 1
            got = subprocess.run([args.kubectl, "--kubeconfig", b["kubeconfig"], "--request-timeout=10s", "get",
                                  "configmap", name, "-o", "jsonpath={.data.op}"], capture_output=True, text=True)
            if got.returncode != 0 or got.stdout != value:
                problems.append(f"{key}: virtual ConfigMap {name} lost: {got.stdout}{got.stderr.strip()}")
    return problems, checked


def control_planes(args, live, deleted):
    """Each live virtual cluster's control plane is stored (its objects in PostgreSQL); none of a deleted one is."""
    problems = []
    for key in sorted(live) + sorted(deleted):
        got = subprocess.run([args.admin, "rows", args.db_url, key], capture_output=True, text=True)
        if got.returncode != 0:
            problems.append(f"{key}: septa-vcp-admin rows: {got.stderr.strip()}")
        elif (int(got.stdout) > 0) != (key in live):
            problems.append(f"{key}: {got.stdout.strip()} virtual objects stored" +
                            (", deleted" if key in deleted else ", live"))
    return problems


def main():
    parser = argparse.ArgumentParser()
    for flag in ("--belief", "--api", "--token", "--host-kubeconfig", "--kubectl"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--admin", required=True, help="septa-vcp-admin")
    parser.add_argument("--db-url", required=True)
    parser.add_argument("--tenants", nargs="+", required=True)
    parser.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args()
    live, deleted = parse_belief(args.belief)
    world = World(args)
    deadline = time.monotonic() + args.timeout
    while True:
        try:
            problems = differences(world.snapshot(), live, deleted)
        except (OSError, subprocess.CalledProcessError, ValueError) as e:
            problems = [f"cannot read the state: {e}"]
        if not problems or time.monotonic() > deadline:
            break
        time.sleep(0.5)  # polling for convergence, bounded by --timeout
    if problems:
        print(f"{len(problems)} differences after {args.timeout:.0f} s:")
        print("\n".join("  " + p for p in problems))
        return 1
    lost, checked = virtual_objects(args, live)
    lost += control_planes(args, live, deleted)
    if lost:
        print("\n".join(lost))
        return 1
    print(f"converged: {len(live)} virtual clusters READY with exactly their host objects and stored control "
          f"planes, {len(deleted)} deleted leaving nothing behind; {checked} virtual ConfigMaps intact")
    return 0


if __name__ == "__main__":
    sys.exit(main())
