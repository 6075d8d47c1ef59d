#!/usr/bin/env python3
"""The exact end check of septad_syncer_crash_e2e.sh: the host against what
the virtual clusters dictate, and the virtual clusters against what the
driver believes (its --belief file: lines "<tenant>/<vcluster> <kind>
<namespace>/<name> <expect>", kind pod|service|deployment|configmap|secret,
expect present|absent|either, a deployment's replica count, or a config
map's "key=value"). Waits up to --timeout seconds for the state to converge,
then prints every difference left and a dump of both sides, and exits 1.

The converged state, for each virtual cluster (--cluster
"<tenant>/<vcluster>=<kubeconfig>=<host namespace>"):
- every virtual pod: not terminating, Running on a node, with exactly one
  host pod, named SafeConcat(name, "x", namespace, "x", vcluster)
  (../../../../shared/docs/SYNCER-FACTS.md "Host names"), recording its
  name and UID, Running on that node with that IP; no other synced host pod;
- every virtual service but default/kubernetes: exactly one host copy,
  recording it, no readdressing pending (septa.dev/service-recreate), the
  virtual cluster IP the host's, the host selector picking exactly the host
  pods of the virtual pods the virtual selector picks; no other host copy;
- every config map and secret a virtual pod uses: a host copy recording its
  UID with its data; no other copy; every service account token secret
  records a live virtual pod, and the one each host pod mounts is there;
and nothing synced in any other host namespace."""
import argparse
import base64
import hashlib
import json
import subprocess
import sys
import time

SYNCED = "septa.dev/synced=true"
A_NAME, A_NS, A_UID = "septa.dev/object-name", "septa.dev/object-namespace", "septa.dev/object-uid"
A_KIND, A_RECREATE = "septa.dev/object-kind", "septa.dev/service-recreate"
L_TENANT, L_VCLUSTER = "septa.dev/tenant", "septa.dev/vcluster"
TOKEN_PREFIX = "septa-sa-token-"  # + the virtual pod's UID (tenancy/sync/token_secret.h)


def safe_concat(*parts):
    joined = "-".join(parts)
    if len(joined) <= 63:
        return joined
    return (joined[:52] + "-" + hashlib.sha256(joined.encode()).hexdigest()[:10]).replace(".-", "-")


def md(obj):
    return obj.get("metadata") or {}


def annotations(obj):
    return md(obj).get("annotations") or {}


def labels(obj):
    return md(obj).get("labels") or {}


def key(obj):
    return f"{md(obj).get('namespace', '')}/{md(obj)['name']}"


def terminating(obj):
    return bool(md(obj).get("deletionTimestamp"))


def referenced(pod):
    """(kind, name) of every config map and secret the pod spec uses."""
    refs, spec = set(), pod.get("spec") or {}
    for volume in spec.get("volumes") or []:
        if volume.get("configMap"):
            refs.add(("ConfigMap", volume["configMap"]["name"]))
        if volume.get("secret"):
            refs.add(("Secret", volume["secret"]["secretName"]))
        for source in (volume.get("projected") or {}).get("sources") or []:
            if source.get("configMap"):
                refs.add(("ConfigMap", source["configMap"]["name"]))
            if source.get("secret"):
                refs.add(("Secret", source["secret"]["name"]))
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        for env in container.get("env") or []:
            source = env.get("valueFrom") or {}
            if source.get("configMapKeyRef"):
                refs.add(("ConfigMap", source["configMapKeyRef"]["name"]))
            if source.get("secretKeyRef"):
                refs.add(("Secret", source["secretKeyRef"]["name"]))
        for env in container.get("envFrom") or []:
            if env.get("configMapRef"):
                refs.add(("ConfigMap", env["configMapRef"]["name"]))
            if env.get("secretRef"):
                refs.add(("Secret", env["secretRef"]["name"]))
    return refs


def selects(selector, obj):
    return bool(selector) and all(labels(obj).get(k) == v for k, v in selector.items())


def data_of(obj):
    """A secret's stringData is stored as data: compare decoded values."""
    out = {}
    for k, v in (obj.get("data") or {}).items():
        out[k] = base64.b64decode(v).decode(errors="replace") if obj.get("kind") == "Secret" else v
    for k, v in (obj.get("binaryData") or {}).items():
        out["binary:" + k] = v
    return out


class Cluster:
    def __init__(self, spec):
        name, self.kubeconfig, self.host_ns = spec.split("=")
        self.tenant, self.vcluster = name.split("/")
        self.name = name


def kubectl(args, kubeconfig, *words):
    out = subprocess.run([args.kubectl, "--kubeconfig", kubeconfig, "--request-timeout=10s", *words, "-o", "json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["items"]


def snapshot(args, clusters):
    by_kind = lambda items: {k: [o for o in items if o.get("kind") == k]
                             for k in ("Pod", "Service", "ConfigMap", "Secret", "Deployment")}
    virtual = {c.name: by_kind(kubectl(args, c.kubeconfig, "get", "pods,services,configmaps,secrets,deployments",
                                       "-A")) for c in clusters}
    host = by_kind(kubectl(args, args.host_kubeconfig, "get", "pods,services,configmaps,secrets", "-A", "-l", SYNCED))
    return virtual, host


def differences(virtual, host, clusters, belief):
    problems = []
    namespaces = {c.host_ns for c in clusters}
    for kind, items in host.items():
        for obj in items:
            if md(obj)["namespace"] not in namespaces:
                problems.append(f"host {kind} {key(obj)}: synced, in no live virtual cluster's namespace")
    for c in clusters:
        v, tag = virtual[c.name], c.name
        mine = {kind: [o for o in items if md(o)["namespace"] == c.host_ns] for kind, items in host.items()}
        for kind, items in mine.items():
            for obj in items:
                l = labels(obj)
                if (l.get(L_TENANT), l.get(L_VCLUSTER)) != (c.tenant, c.vcluster):
                    problems.append(f"{tag}: host {kind} {key(obj)} is labelled for "
                                    f"{l.get(L_TENANT)}/{l.get(L_VCLUSTER)}")
        host_name = lambda obj: safe_concat(md(obj)["name"], "x", md(obj)["namespace"], "x", c.vcluster)
        records = lambda copy, obj: (annotations(copy).get(A_NAME), annotations(copy).get(A_NS)) == (
            md(obj)["name"], md(obj)["namespace"])

        # What the driver believes.
        found = {("pod", key(o)): o for o in v["Pod"]}
        found.update({("service", key(o)): o for o in v["Service"]})
        found.update({("deployment", key(o)): o for o in v["Deployment"]})
        found.update({("configmap", key(o)): o for o in v["ConfigMap"]})
        found.update({("secret", key(o)): o for o in v["Secret"]})
        for kind, name, expect in belief.get(c.name, []):
            obj = found.get((kind, name))
            if expect == "either":
                continue
            if expect == "absent":
                if obj is not None:
                    problems.append(f"{tag}: virtual {kind} {name} was deleted by the tenant, it is there "
                                    f"(uid {md(obj).get('uid')}, created {md(obj).get('creationTimestamp')})")
                continue
            if obj is None:
                problems.append(f"{tag}: virtual {kind} {name} is lost: the tenant created it and never deleted it")
            elif kind == "deployment":
                selector = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
                pods = [p for p in v["Pod"] if selects(selector, p) and not terminating(p)]
                if int((obj.get("spec") or {}).get("replicas", 1)) != int(expect) or len(pods) != int(expect):
                    problems.append(f"{tag}: deployment {name}: replicas {obj['spec'].get('replicas')} and "
                                    f"{len(pods)} pods, the tenant set {expect}")
            elif kind == "configmap" and "=" in expect:
                k, want = expect.split("=", 1)
                if (obj.get("data") or {}).get(k) != want:
                    problems.append(f"{tag}: virtual config map {name}: {k}={(obj.get('data') or {}).get(k)}, "
                                    f"the tenant wrote {want}")
        for kind in ("Deployment",):
            for obj in v[kind]:
                if ("deployment", key(obj)) not in {(k, n) for k, n, _ in belief.get(c.name, [])}:
                    problems.append(f"{tag}: virtual deployment {key(obj)} the tenant never made")

        # Pods.
        host_pods = {md(p)["name"]: p for p in mine["Pod"]}
        live_uids = set()
        for pod in v["Pod"]:
            live_uids.add(md(pod)["uid"])
            where = f"{tag}: virtual pod {key(pod)}"
            if terminating(pod):
                problems.append(f"{where} is still terminating")
                continue
            copies = [p for p in mine["Pod"] if records(p, pod)]
            if len(copies) != 1:
                problems.append(f"{where} has {len(copies)} host pods: {[md(p)['name'] for p in copies]}")
            hp = host_pods.get(host_name(pod))
            if hp is None:
                problems.append(f"{where}: no host pod {c.host_ns}/{host_name(pod)}")
                continue
            if annotations(hp).get(A_UID) != md(pod)["uid"]:
                problems.append(f"{where}: its host pod records uid {annotations(hp).get(A_UID)}, "
                                f"the virtual pod's is {md(pod)['uid']}")
            status, hstatus = pod.get("status") or {}, hp.get("status") or {}
            node = (pod.get("spec") or {}).get("nodeName", "")
            if status.get("phase") != "Running" or not node:
                problems.append(f"{where} is {status.get('phase')} on node '{node}', not Running on a node")
            if hstatus.get("phase") != "Running" or terminating(hp):
                problems.append(f"{where}: its host pod is {hstatus.get('phase')}"
                                f"{' (terminating)' if terminating(hp) else ''}")
            if node != (hp.get("spec") or {}).get("nodeName", "") or status.get("podIP") != hstatus.get("podIP"):
                problems.append(f"{where} shows node {node} IP {status.get('podIP')}, its host pod runs on "
                                f"{(hp.get('spec') or {}).get('nodeName')} with IP {hstatus.get('podIP')}")
        virtual_pods = {key(p): p for p in v["Pod"]}
        for hp in mine["Pod"]:
            a = annotations(hp)
            vp = virtual_pods.get(f"{a.get(A_NS)}/{a.get(A_NAME)}")
            if vp is None or md(vp)["uid"] != a.get(A_UID):
                problems.append(f"{tag}: orphan host pod {key(hp)}: records virtual pod "
                                f"{a.get(A_NS)}/{a.get(A_NAME)} uid {a.get(A_UID)}, which is gone")
            elif md(hp)["name"] != host_name(vp):
                problems.append(f"{tag}: host pod {key(hp)} should be named {host_name(vp)}")

        # Services.
        copies_of = {}
        for hs in mine["Service"]:
            copies_of.setdefault(f"{annotations(hs).get(A_NS)}/{annotations(hs).get(A_NAME)}", []).append(hs)
        virtual_services = {key(s): s for s in v["Service"] if key(s) != "default/kubernetes"}
        for name, vs in virtual_services.items():
            where = f"{tag}: virtual service {name}"
            copies = copies_of.get(name, [])
            if len(copies) != 1:
                problems.append(f"{where} has {len(copies)} host copies: {[key(h) for h in copies]}")
                continue
            hs = copies[0]
            if md(hs)["name"] != host_name(vs):
                problems.append(f"{where}: its host copy is {key(hs)}, not {c.host_ns}/{host_name(vs)}")
            if A_RECREATE in annotations(hs):
                problems.append(f"{where}: its host copy still records a pending readdressing")
            vip, hip = (vs.get("spec") or {}).get("clusterIP"), (hs.get("spec") or {}).get("clusterIP")
            if not hip or vip != hip:
                problems.append(f"{where} has cluster IP {vip}, its host copy {hip}")
            vsel = (vs.get("spec") or {}).get("selector") or {}
            want = sorted(host_name(p) for p in v["Pod"] if md(p)["namespace"] == md(vs)["namespace"]
                          and selects(vsel, p) and not terminating(p))
            got = sorted(md(p)["name"] for p in mine["Pod"] if selects((hs.get("spec") or {}).get("selector"), p)
                         and not terminating(p))
            if want != got:
                problems.append(f"{where}: the host selector picks {got}, the virtual one's pods are {want}")
        for name, copies in copies_of.items():
            if name not in virtual_services:
                for hs in copies:
                    problems.append(f"{tag}: orphan host service {key(hs)}: its virtual service {name} is gone"
                                    f"{' (a readdressing pending)' if A_RECREATE in annotations(hs) else ''}")

        # Config maps and secrets.
        used = set()
        for pod in v["Pod"]:
            for kind, name in referenced(pod):
                used.add((kind, f"{md(pod)['namespace']}/{name}"))
        for kind in ("ConfigMap", "Secret"):
            virtual_objects = {key(o): o for o in v[kind]}
            copies = [o for o in mine[kind] if annotations(o).get(A_KIND) == kind]
            by_virtual = {}
            for copy in copies:
                by_virtual.setdefault(f"{annotations(copy).get(A_NS)}/{annotations(copy).get(A_NAME)}", []).append(
                    copy)
            for name, found_copies in by_virtual.items():
                vo = virtual_objects.get(name)
                for copy in found_copies:
                    if vo is None:
                        problems.append(f"{tag}: orphan host {kind} {key(copy)}: its virtual object {name} is gone")
                    elif annotations(copy).get(A_UID) != md(vo)["uid"]:
                        problems.append(f"{tag}: host {kind} {key(copy)} records uid {annotations(copy).get(A_UID)}, "
                                        f"the virtual {name} is {md(vo)['uid']}")
                    elif (kind, name) not in used:
                        problems.append(f"{tag}: host {kind} {key(copy)}: no virtual pod uses {name} any more")
                    elif data_of(copy) != data_of(vo):
                        problems.append(f"{tag}: host {kind} {key(copy)} holds {sorted(data_of(copy).items())}, "
                                        f"the virtual {name} {sorted(data_of(vo).items())}"
                                        if kind == "ConfigMap" else f"{tag}: host {kind} {key(copy)}: data differs")
                    elif md(copy)["name"] != host_name(vo):
                        problems.append(f"{tag}: host {kind} {key(copy)} should be named {host_name(vo)}")
                if len(found_copies) > 1:
                    problems.append(f"{tag}: {kind} {name} has {len(found_copies)} host copies")
            for used_kind, name in sorted(used):
                if used_kind == kind and name in virtual_objects and name not in by_virtual:
                    problems.append(f"{tag}: virtual {kind} {name} is used by a pod and has no host copy")
        for secret in mine["Secret"]:
            if annotations(secret).get(A_KIND) == "Pod" and annotations(secret).get(A_UID) not in live_uids:
                problems.append(f"{tag}: leaked token secret {key(secret)}: its virtual pod "
                                f"{annotations(secret).get(A_NS)}/{annotations(secret).get(A_NAME)} is gone")
        # (A copied object the tenant deleted goes from the host although a pod still mounts it.)
        tokens = {md(o)["name"] for o in mine["Secret"] if annotations(o).get(A_KIND) == "Pod"}
        for hp in mine["Pod"]:
            for kind, name in sorted(referenced(hp)):
                if kind == "Secret" and name.startswith(TOKEN_PREFIX) and name not in tokens:
                    problems.append(f"{tag}: host pod {key(hp)} mounts the token secret {name}, which is not there")
    return problems


def dump(virtual, host):
    def line(kind, obj):
        a, s = annotations(obj), obj.get("spec") or {}
        words = [kind, key(obj), "uid=" + md(obj).get("uid", "")]
        if terminating(obj):
            words.append("TERMINATING")
        if A_UID in a:
            words.append(f"records={a.get(A_NS)}/{a.get(A_NAME)}@{a.get(A_UID)}")
        if kind == "Pod":
            words += [f"phase={(obj.get('status') or {}).get('phase')}", f"node={s.get('nodeName', '')}",
                      f"ip={(obj.get('status') or {}).get('podIP', '')}"]
        if kind == "Service":
            words += [f"clusterIP={s.get('clusterIP')}", f"selector={s.get('selector')}"]
            if A_RECREATE in a:
                words.append("RECREATE-PENDING")
        if kind == "ConfigMap":
            words.append(f"data={obj.get('data')}")
        if kind == "Deployment":
            words.append(f"replicas={s.get('replicas')}")
        return "  " + " ".join(words)

    for name, kinds in virtual.items():
        print(f"--- virtual cluster {name}:")
        for kind, items in kinds.items():
            for obj in items:
                if kind == "Secret" and obj.get("type") == "kubernetes.io/service-account-token":
                    continue
                print(line(kind, obj))
    print("--- host (synced objects):")
    for kind, items in host.items():
        for obj in items:
            print(line(kind, obj))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kubectl", required=True)
    parser.add_argument("--host-kubeconfig", required=True)
    parser.add_argument("--cluster", action="append", required=True)
    parser.add_argument("--belief", required=True)
    parser.add_argument("--timeout", type=float, default=30)
    args = parser.parse_args()
    clusters = [Cluster(spec) for spec in args.cluster]
    belief = {}
    for words in (line.split() for line in open(args.belief)):
        if words:
            belief.setdefault(words[0], []).append((words[1], words[2], words[3]))
    begun = time.monotonic()
    while True:
        try:
            virtual, host = snapshot(args, clusters)
            problems = differences(virtual, host, clusters, belief)
        except (subprocess.CalledProcessError, json.JSONDecodeError) as e:
            virtual, host, problems = None, None, [f"could not read the clusters: {getattr(e, 'stderr', e)}"]
        if not problems:
            print(f"converged in {time.monotonic() - begun:.1f} s")
            return 0
        if time.monotonic() - begun > args.timeout:
            print(f"not converged within {args.timeout:.0f} s; {len(problems)} differences:")
            for p in problems:
                print("  " + p)
            if virtual is not None:
                dump(virtual, host)
            return 1
        time.sleep(0.2)


if __name__ == "__main__":
    sys.exit(main())
