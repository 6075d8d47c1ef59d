# H1: a 495-byte YAML ConfigMap with 7 levels of anchors (each a list of ten
# aliases of the level below) took 4.7 s and +790 MB of septad; a few bytes
# more would have OOM-killed it (CVE-2019-11253 in kube-apiserver). YAML is
# now read within common/documents.h's bounds: aliases counted as expanded,
# by go-yaml's rule, before anything is built; an alias inside its own node
# (a cycle) refused too. A 400, at once.

h1_alias_bomb_post() {  # FILE: POSTs it as YAML; prints the status
  vcurl eve e1 POST /api/v1/namespaces/default/configmaps -H 'Content-Type: application/yaml' --data-binary @"$1"
}

hostile_case() {
  tenant eve shared
  vcluster eve e1 '{"shared":{"milli_gpu":100}}'
  python3 -c '
import sys
text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  l0: &l0 [\"lol\"]\n"
for level in range(1, 8):
    text += "  l%d: &l%d [%s]\n" % (level, level, ",".join(["*l%d" % (level - 1)] * 10))
sys.stdout.write(text)' >"$dir/h1-bomb.yaml"
  printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cycle\ndata: &a {b: [*a]}\n' >"$dir/h1-cycle.yaml"
  local begun status
  begun=$(now_ms)
  status=$(h1_alias_bomb_post "$dir/h1-bomb.yaml")
  [[ $status == 400 ]] || fail "the alias bomb got $status: $(head -c 300 "$dir/vreply")"
  grep -q 'expands excessively through aliases' "$dir/vreply" || fail "the bomb's answer: $(cat "$dir/vreply")"
  (($(now_ms) - begun < 2000)) || fail "the bomb took $(($(now_ms) - begun)) ms to refuse"
  status=$(h1_alias_bomb_post "$dir/h1-cycle.yaml")
  [[ $status == 400 ]] || fail "the alias cycle got $status: $(head -c 300 "$dir/vreply")"
  grep -q 'an alias refers to a node that contains it' "$dir/vreply" || fail "the cycle's answer: $(cat "$dir/vreply")"
  [[ $(vk eve e1 get configmaps -o name) != *bomb* ]] || fail "the bomb was stored"
  [[ $(api DELETE /v1/tenants/eve/vclusters/e1) == 200 ]] || fail "delete e1: $(reply)"
}
