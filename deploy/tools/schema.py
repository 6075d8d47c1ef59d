#!/usr/bin/env python3
"""A schema check of rendered manifests, unknown fields included (what
kubeconform -strict does), without kubeconform: the object types are read
from the TypeScript declarations (.d.ts) of the npm packages kubernetes-models
(Kubernetes' OpenAPI, as generated types), @kubernetes-models/apimachinery,
@kubernetes-models/prometheus-operator and @kubernetes-models/cert-manager
(deploy/tools/schemas.sh fetches them, pinned). Every field of every object
must be declared by its type, with the declared JSON type (string, number,
boolean, object, list; an enum's value one of its literals); required
fields must be there. Kinds no package declares (CloudNativePG's Cluster)
are listed as not checked, never passed silently.

Usage: schema.py [--self-test] SCHEMA_DIR RENDER.yaml...
Exit 0 when every object conforms, 1 otherwise (each finding printed).
"""
import os
import re
import sys

import yaml

TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|([A-Za-z_$][A-Za-z0-9_$.]*)|(-?\d+(?:\.\d+)?)|(.))', re.S)


def tokenize(text):
    out = []
    pos = 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            break
        pos = m.end()
        s, ident, num, punct = m.groups()
        if s is not None:
            out.append(("str", yaml.safe_load(s)))
        elif ident is not None:
            out.append(("id", ident))
        elif num is not None:
            out.append(("num", num))
        elif punct is not None and not punct.isspace():
            out.append(("p", punct))
    return out


class Parser:
    """Types: ("ref", name) ("prim", "string"|"number"|"boolean"|"any"|"null")
    ("lit", value) ("array", T) ("map", T) ("object", {name: (T, required)}) ("union", [T])."""

    def __init__(self, tokens):
        self.t = tokens
        self.i = 0

    def peek(self, k=0):
        return self.t[self.i + k] if self.i + k < len(self.t) else ("eof", None)

    def take(self, kind=None, value=None):
        tok = self.peek()
        if (kind and tok[0] != kind) or (value is not None and tok[1] != value):
            raise ValueError(f"expected {kind} {value!r}, found {tok!r} at token {self.i}")
        self.i += 1
        return tok

    def union(self):
        if self.peek() == ("p", "|"):
            self.take()
        members = [self.primary()]
        while self.peek() == ("p", "|"):
            self.take()
            members.append(self.primary())
        return members[0] if len(members) == 1 else ("union", members)

    def primary(self):
        kind, value = self.peek()
        if kind == "str":
            self.take()
            t = ("lit", value)
        elif kind == "num":
            self.take()
            t = ("lit", float(value))
        elif (kind, value) == ("p", "{"):
            t = self.members()
        elif (kind, value) == ("p", "("):
            self.take()
            t = self.union()
            self.take("p", ")")
        elif kind == "id":
            self.take()
            if value in ("Array", "ReadonlyArray") and self.peek() == ("p", "<"):
                self.take()
                t = ("array", self.union())
                self.take("p", ">")
            elif value == "Record" and self.peek() == ("p", "<"):
                self.take()
                self.union()
                self.take("p", ",")
                t = ("map", self.union())
                self.take("p", ">")
            elif value in ("string", "number", "boolean", "any", "unknown", "null", "object", "true", "false"):
                t = ("prim", {"unknown": "any", "object": "any", "true": "boolean", "false": "boolean"}.get(value, value))
            else:
                t = ("ref", value)
        else:
            raise ValueError(f"unexpected {self.peek()!r} at token {self.i}")
        while self.peek() == ("p", "[") and self.peek(1) == ("p", "]"):
            self.take()
            self.take()
            t = ("array", t)
        return t

    def members(self):
        self.take("p", "{")
        props, index = {}, None
        while self.peek() != ("p", "}"):
            if self.peek() == ("p", "["):  # [key: string]: T;
                self.take()
                self.take("id")
                self.take("p", ":")
                self.take("id")
                self.take("p", "]")
                self.take("p", ":")
                index = self.union()
            else:
                kind, name = self.take()
                if kind not in ("str", "id"):
                    raise ValueError(f"a member name, not {name!r}")
                optional = False
                if self.peek() == ("p", "?"):
                    self.take()
                    optional = True
                self.take("p", ":")
                props[name] = (self.union(), not optional)
            if self.peek() in (("p", ";"), ("p", ",")):
                self.take()
        self.take("p", "}")
        if index is not None and not props:
            return ("map", index)
        return ("object", props)


def strip_comments(text):
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def load(schema_dir):
    """Every named type of every .d.ts under schema_dir: name -> type, and (apiVersion, kind) -> type."""
    types, kinds = {}, {}
    for base, _, files in os.walk(schema_dir):
        for f in files:
            if not f.endswith(".d.ts") or f == "index.d.ts":
                continue
            text = strip_comments(open(os.path.join(base, f), encoding="utf-8").read())
            local = {}
            for m in re.finditer(r"export interface (\w+)(?: extends ([\w, <>]+))? \{", text):
                p = Parser(tokenize(text[m.end() - 1:]))
                t = p.members()
                bases = [b.strip() for b in (m.group(2) or "").split(",") if b.strip() and b.strip() != "TypeMeta"]
                if bases:  # extends: the bases' members, resolved once everything is read
                    t = ("extends", bases, t)
                local[m.group(1)] = t
            for m in re.finditer(r"export type (\w+) = ([^;]+);", text):
                if m.group(2).strip() == m.group(1)[1:]:
                    continue
                try:
                    local[m.group(1)] = Parser(tokenize(m.group(2))).union()
                except ValueError:
                    pass
            for m in re.finditer(r"export type \{([^}]*)\}", text):
                for part in m.group(1).split(","):
                    if " as " in part:
                        name, alias = (s.strip() for s in part.split(" as "))
                        if name in local:
                            types[alias] = local[name]
            for name, t in local.items():
                types.setdefault(name, t)
                own = t[2] if t[0] == "extends" else t
                if own[0] == "object":
                    av, k = own[1].get("apiVersion", (None,))[0], own[1].get("kind", (None,))[0]
                    if av and k and av[0] == "lit" and k[0] == "lit":
                        kinds[(av[1], k[1])] = t
    def flatten(t, depth=0):
        if t[0] != "extends" or depth > 20:
            return t
        props = {}
        for b in t[1]:
            base = flatten(types.get(b, ("object", {})), depth + 1)
            if base[0] == "object":
                props.update(base[1])
        props.update(t[2][1])
        return ("object", props)

    for name in list(types):
        types[name] = flatten(types[name])
    for key in list(kinds):
        kinds[key] = flatten(kinds[key])
    return types, kinds


class Checker:
    def __init__(self, types):
        self.types = types
        self.errors = []

    def resolve(self, t):
        seen = 0
        while t[0] == "ref":
            if t[1] not in self.types:
                return ("prim", "any")  # a type no package declares: not judged
            t = self.types[t[1]]
            seen += 1
            if seen > 50:
                return ("prim", "any")
        return t

    def matches(self, value, t, path):
        """Errors of value against t (a list; empty: it conforms)."""
        t = self.resolve(t)
        kind = t[0]
        if kind == "prim":
            p = t[1]
            ok = (p == "any" or (p == "string" and isinstance(value, str))
                  or (p == "number" and isinstance(value, (int, float)) and not isinstance(value, bool))
                  or (p == "boolean" and isinstance(value, bool)) or (p == "null" and value is None))
            return [] if ok else [f"{path}: {value!r} is not a {p}"]
        if kind == "lit":
            return [] if value == t[1] or (isinstance(t[1], float) and value == t[1]) else [f"{path}: {value!r} is not {t[1]!r}"]
        if kind == "union":
            best = None
            for m in t[1]:
                errs = self.matches(value, m, path)
                if not errs:
                    return []
                if best is None or len(errs) < len(best):
                    best = errs
            lits = [m[1] for m in t[1] if m[0] == "lit"]
            if lits and len(lits) == len(t[1]):
                return [f"{path}: {value!r} is not one of {lits}"]
            return best
        if kind == "array":
            if not isinstance(value, list):
                return [f"{path}: {type(value).__name__} where a list belongs"]
            return [e for i, v in enumerate(value) for e in self.matches(v, t[1], f"{path}[{i}]")]
        if kind == "map":
            if not isinstance(value, dict):
                return [f"{path}: {type(value).__name__} where an object belongs"]
            return [e for k, v in value.items() for e in self.matches(v, t[1], f"{path}.{k}")]
        if kind == "object":
            if not isinstance(value, dict):
                return [f"{path}: {type(value).__name__} where an object belongs"]
            errs = []
            for k, v in value.items():
                if k not in t[1]:
                    errs.append(f"{path}: unknown field {k!r}")
                else:
                    errs += self.matches(v, t[1][k][0], f"{path}.{k}")
            for k, (_, required) in t[1].items():
                if required and k not in value:
                    errs.append(f"{path}: required field {k!r} is missing")
            return errs
        return []


def check_files(schema_dir, files):
    types, kinds = load(schema_dir)
    checker = Checker(types)
    findings, unchecked, checked = [], set(), 0
    for f in files:
        for doc in yaml.safe_load_all(open(f, encoding="utf-8")):
            if not doc:
                continue
            key = (doc.get("apiVersion"), doc.get("kind"))
            name = f"{os.path.basename(f)}: {key[1]} {doc.get('metadata', {}).get('namespace', '')}/{doc.get('metadata', {}).get('name', '')}"
            if key not in kinds:
                unchecked.add(f"{key[0]} {key[1]}")
                continue
            checked += 1
            findings += [f"{name}: {e}" for e in checker.matches(doc, kinds[key], "")]
    return findings, unchecked, checked, len(kinds)


def self_test(schema_dir, render):
    """Each breakage must be found in the first StatefulSet, Service and ClusterRole of render."""
    types, kinds = load(schema_dir)
    checker = Checker(types)
    docs = [d for d in yaml.safe_load_all(open(render, encoding="utf-8")) if d]
    first = {d["kind"]: d for d in reversed(docs)}
    import copy

    def container(o):
        return o["spec"]["template"]["spec"]["containers"][0]

    breakages = [
        ("StatefulSet", "a misspelt container field", lambda o: container(o).update(securityContxt={})),
        ("StatefulSet", "an unknown field in the pod's securityContext",
         lambda o: o["spec"]["template"]["spec"]["securityContext"].update(runAsNonroot=True)),
        ("StatefulSet", "replicas as a string", lambda o: o["spec"].update(replicas="three")),
        ("StatefulSet", "readOnlyRootFilesystem as a string",
         lambda o: container(o)["securityContext"].update(readOnlyRootFilesystem="yes")),
        ("StatefulSet", "a missing required field (selector)", lambda o: o["spec"].pop("selector")),
        ("StatefulSet", "an enum value that is none", lambda o: o["spec"].update(podManagementPolicy="AllAtOnce")),
        ("StatefulSet", "an unknown top-level field", lambda o: o.update(spc={})),
        ("StatefulSet", "an unknown metadata field", lambda o: o["metadata"].update(lables={})),
        ("StatefulSet", "a probe's port as a list", lambda o: container(o)["readinessProbe"]["httpGet"].update(port=[8080])),
        ("Service", "a misspelt port field", lambda o: o["spec"]["ports"][0].update(targetport=8080)),
        ("ClusterRole", "rules as an object", lambda o: o.update(rules={"verbs": ["get"]})),
        ("ClusterRole", "an unknown rule field", lambda o: o["rules"][0].update(resourceName=["x"])),
    ]
    failed = 0
    for kind, what, breaks in breakages:
        obj = copy.deepcopy(first[kind])
        if checker.matches(obj, kinds[(obj["apiVersion"], kind)], ""):
            print(f"schema.py self-test: the unbroken {kind} does not conform")
            return 1
        breaks(obj)
        if not checker.matches(obj, kinds[(obj["apiVersion"], kind)], ""):
            print(f"schema.py self-test: not caught: {what}")
            failed += 1
    print(f"schema.py self-test: {len(breakages) - failed} of {len(breakages)} breakages caught")
    return 1 if failed else 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "--self-test":
        return self_test(argv[1], argv[2])
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    findings, unchecked, checked, known = check_files(argv[0], argv[1:])
    for f in findings:
        print(f"schema: {f}")
    print(f"schema.py: {checked} objects checked against {known} kinds' types, {len(findings)} finding(s);"
          f" not checked (no types): {', '.join(sorted(unchecked)) or 'none'}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
