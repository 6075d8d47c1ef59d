#!/usr/bin/env bash
# What the hostile bodies of issue 28 cost septad (C1, H1): the 7-level YAML
# alias bomb (442 bytes, 10^7 nodes expanded) and a ConfigMap whose data
# nests arrays 100,000 deep (200 KB), each POSTed once to a virtual
# cluster's API through its HTTPS listener, on embedded defaults. Prints
# each answer's status and time and septad's RSS and peak RSS (VmHWM)
# around it, and whether septad survived.
# Usage: scripts/bench/hostile_bodies_bench.sh [SEPTAD-BINARY]   (default build/bin/septad)
# Careful on an unfixed septad: the bomb takes ~20 s and ~3 GB, the deep
# body kills it.
set -euo pipefail
cd "$(dirname "$0")/../.."
septad=$(realpath "${1:-build/bin/septad}")
source tests/e2e/septad/septad_lib.sh

start
token=$(cat "$dir/data/admin.token")
[[ $(api POST /v1/tenants '{"name":"alpha","trust_tier":"isolated"}') == 201 ]] || fail "create alpha: $(reply)"
[[ $(api POST /v1/tenants/alpha/vclusters '{"name":"a1","capacity":{"mig":[{"profile":"3g.40gb","count":1}]}}') == 201 ]] ||
  fail "create a1: $(reply)"
ready() { [[ $(field "$(get /v1/tenants/alpha/vclusters/a1)" state) == READY ]]; }
wait_for "alpha/a1 READY" 60 ready
[[ $(api POST /v1/tenants/alpha/vclusters/a1:kubeconfig '{"ttl":"1h","role":"admin"}') == 200 ]] ||
  fail "kubeconfig: $(reply)"
json 'r["kubeconfig"]' >"$dir/a1.kc"
kubectl --kubeconfig "$dir/a1.kc" config view --raw -o 'jsonpath={.users[0].user.client-certificate-data}' |
  base64 -d >"$dir/a1.crt"
kubectl --kubeconfig "$dir/a1.kc" config view --raw -o 'jsonpath={.users[0].user.client-key-data}' | base64 -d >"$dir/a1.key"
endpoint=$(field "$(get /v1/tenants/alpha/vclusters/a1)" endpoint)

python3 - "$dir" <<'PY'
import sys
d = sys.argv[1]
text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  l0: &l0 [\"lol\"]\n"
for level in range(1, 8):
    text += "  l%d: &l%d [%s]\n" % (level, level, ",".join(["*l%d" % (level - 1)] * 10))
open(d + "/bomb.yaml", "w").write(text)
n = 100000
open(d + "/deep.json", "w").write('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":{"a":' +
                                  "[" * n + "]" * n + "}}")
PY

memory() { awk '/VmRSS|VmHWM/ {printf "%s %.0f MB  ", $1, $2 / 1024}' "/proc/$pid/status"; }
post() {  # NAME FILE CONTENT-TYPE
  echo "before $1: $(memory)"
  local answer
  rm -f "$dir/answer"
  answer=$(curl -sk -o "$dir/answer" -w '%{http_code} in %{time_total} s' --max-time 120 --cert "$dir/a1.crt" \
    --key "$dir/a1.key" -H "Content-Type: $3" --data-binary @"$2" "$endpoint/api/v1/namespaces/default/configmaps") ||
    true
  echo "$1 ($(wc -c <"$2") bytes): HTTP $answer: $(head -c 200 "$dir/answer" 2>/dev/null)"
  sleep 1
  if kill -0 "$pid" 2>/dev/null; then echo "after $1: $(memory)"; else echo "after $1: septad is dead"; fi
}
post "alias bomb" "$dir/bomb.yaml" application/yaml
kill -0 "$pid" 2>/dev/null || exit 0
post "deep body" "$dir/deep.json" application/json
