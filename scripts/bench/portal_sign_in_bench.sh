#!/usr/bin/env bash
# What people's portal sign-in costs (issue 31): septad with its embedded
# PostgreSQL signs people in at a real OpenID provider (tests/e2e/oidc/idp,
# oidc-provider on loopback). (1) N whole sign-ins, one after another,
# through idp/portal_sign_in.mjs (a cookie-keeping fetch as the browser):
# septad's own time for the start (the provider discovered afresh, the
# sign-in under way written) and the callback (the code redeemed at the
# provider, the ID token verified, the session written), from its request
# log. (2) The same read, GET /v1/tenants/acme, timed by wrk from a second
# process with one connection, with an API token's portal session cookie
# (the baseline) and with the person's session cookie (the session and
# the memberships cached; the ID token an hour long, so no renewal).
# Usage: scripts/bench/portal_sign_in_bench.sh [build-dir] [seconds] [sign-ins]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
secs=${2:-10}
n=${3:-20}
dir=$(mktemp -d /tmp/septa-bench.XXXXXX)
idp_pid="" pid=""
trap '[[ -n $pid ]] && kill -TERM $pid 2>/dev/null; [[ -n $idp_pid ]] && kill -TERM $idp_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT

bash tests/e2e/oidc/idp/ensure.sh
cat >"$dir/idp.json" <<JSON
{"ttl": {"IdToken": 3600},
 "clients": [{"client_id": "portal", "client_secret": "s", "application_type": "native",
              "grant_types": ["authorization_code", "refresh_token"], "refresh_tokens": "always",
              "redirect_uris": ["http://127.0.0.1/v1/sessions/oidc/callback"]}],
 "users": [{"id": "alice", "email": "alice@acme.test", "groups": ["platform"], "password": "pw"}]}
JSON
exec {idp_out}< <(node tests/e2e/oidc/idp/idp.mjs --config "$dir/idp.json" 2>"$dir/idp.log")
read -r -t 30 line <&"$idp_out"
idp_pid=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["pid"])' "$line")
issuer=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["issuer"])' "$line")
printf 's\n' >"$dir/secret"
cat >"$dir/septad.yaml" <<YAML
oidc_issuers: [{issuer: "$issuer", audience: septa, client_id: portal, client_secret_file: "$dir/secret", username_claim: email}]
YAML
start() {  # LOG-LEVEL: septad on the same data (sessions are rows: they outlive a restart)
  "$build/bin/septad" --data-dir "$dir/data" --config "$dir/septad.yaml" --http-addr 127.0.0.1:0 \
    --grpc-addr 127.0.0.1:0 --kubesim-addr 127.0.0.1:0 --provisioner=false --log-level "$1" >"$dir/septad.log" 2>&1 &
  pid=$!
  until port=$(grep -m1 -oE 'septad ready in [0-9]+ ms: REST http://127.0.0.1:[0-9]+' "$dir/septad.log" | grep -oE '[0-9]+$'); do
    kill -0 $pid 2>/dev/null || { cat "$dir/septad.log"; exit 1; }
    sleep 0.1
  done
  base=http://127.0.0.1:$port
}
start debug  # each request's time in the log
admin=$(cat "$dir/data/admin.token")
curl -sf -H "Authorization: Bearer $admin" -H "Content-Type: application/json" -d '{"name":"acme","trust_tier":"shared"}' $base/v1/tenants >/dev/null
curl -sf -H "Authorization: Bearer $admin" -H "Content-Type: application/json" -d '{"member":"group:platform","role":"viewer"}' \
  $base/v1/tenants/acme/members >/dev/null

echo "== $n sign-ins, one after another"
begun=$(date +%s%N)
for _ in $(seq 1 "$n"); do
  out=$(node tests/e2e/oidc/idp/portal_sign_in.mjs --septad "$base" --issuer "$issuer" --login alice --password pw)
done
echo "whole sign-ins (the driver's node start, the provider's pages and septad): $(( ($(date +%s%N) - begun) / n / 1000000 )) ms each"
session=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["session"])' "$out")
python3 - "$dir/septad.log" <<'PY'
import re, statistics, sys
ms = {}
for line in open(sys.argv[1]):
    m = re.search(r'route=(/v1/sessions/oidc/(?:start|callback)) status=(\d+) ms=([0-9.]+)', line)
    if m:
        ms.setdefault(m.group(1), []).append(float(m.group(3)))
for route, xs in sorted(ms.items()):
    xs.sort()
    print(f"septad's time at {route}: n={len(xs)} p50={statistics.median(xs):.2f} ms max={xs[-1]:.2f} ms")
PY
api_session=$(curl -s -D - -o /dev/null -H "Content-Type: application/json" -H "Origin: $base" -d "{\"token\":\"$admin\"}" $base/v1/sessions |
  grep -i '^set-cookie: septa_session=' | sed -E 's/^[^=]*=([^;]*);.*/\1/')
measure() {  # LABEL COOKIE
  code=$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: septa_session=$2" $base/v1/tenants/acme)
  [[ $code == 200 ]] || { echo "$1 refused ($code)"; exit 1; }
  echo "== GET /v1/tenants/acme with $1 (wrk -t1 -c1, ${secs}s)"
  wrk -t1 -c1 -d"${secs}s" --latency -H "Cookie: septa_session=$2" "$base/v1/tenants/acme" |
    sed -n '/Latency Distribution/,/Requests\/sec/p'
}
# Quieter for the timing (at debug every request is logged; at info none is).
kill -TERM $pid; wait $pid 2>/dev/null || true
start info
measure "an API token's portal session (baseline)" "$api_session"
measure "a person's portal session" "$session"
measure "an API token's portal session (baseline, again)" "$api_session"
