# C1: a ConfigMap whose data nested arrays 100,000 deep (200 KB, under the
# listener's 3 MiB) crashed septad for every tenant: a stack overflow in
# the recursive walks of the parsed body. Every document from outside is
# now read within common/documents.h's bounds (128 levels): the virtual API
# answers kube-apiserver's 400 and keeps serving.

c1_deep_body_expect_400() {  # FAILURE-MESSAGE: the last vcurl's reply is a 400 Status saying it nests too deep
  python3 - "$dir/vreply" <<'PY' || fail "$1"
import json, sys
status = json.load(open(sys.argv[1]))
assert status["kind"] == "Status" and status["code"] == 400 and status["reason"] == "BadRequest", status
assert "nests deeper than 128 levels" in status["message"], status["message"]
PY
}

hostile_case() {
  tenant mallory shared
  vcluster mallory m1 '{"shared":{"milli_gpu":100}}'
  python3 -c '
import sys
d = 100000
sys.stdout.write("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"deep\"},\"data\":{\"a\":" + "[" * d + "]" * d + "}}")' \
    >"$dir/c1-deep.json"
  local status
  status=$(vcurl mallory m1 POST /api/v1/namespaces/default/configmaps -H 'Content-Type: application/json' \
    --data-binary @"$dir/c1-deep.json")
  [[ $status == 400 ]] || fail "the deep body got $status: $(head -c 300 "$dir/vreply")"
  c1_deep_body_expect_400 "the deep body's answer: $(head -c 300 "$dir/vreply")"
  # The same depth as YAML, and as a merge patch of an existing object.
  status=$(vcurl mallory m1 POST /api/v1/namespaces/default/configmaps -H 'Content-Type: application/yaml' \
    --data-binary @"$dir/c1-deep.json")
  [[ $status == 400 ]] || fail "the deep body as YAML got $status: $(head -c 300 "$dir/vreply")"
  vk mallory m1 create configmap shallow --from-literal=a=1 >/dev/null || fail "create a plain config map"
  sed 's/^{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},//; s/^/{/' "$dir/c1-deep.json" \
    >"$dir/c1-patch.json"
  status=$(vcurl mallory m1 PATCH /api/v1/namespaces/default/configmaps/shallow \
    -H 'Content-Type: application/merge-patch+json' --data-binary @"$dir/c1-patch.json")
  [[ $status == 400 ]] || fail "the deep merge patch got $status: $(head -c 300 "$dir/vreply")"
  c1_deep_body_expect_400 "the deep patch's answer: $(head -c 300 "$dir/vreply")"
  # Still serving the attacker too.
  [[ $(vk mallory m1 get configmap shallow -o 'jsonpath={.data.a}') == 1 ]] || fail "mallory's config map is gone"
  [[ $(api DELETE /v1/tenants/mallory/vclusters/m1) == 200 ]] || fail "delete m1: $(reply)"
}
