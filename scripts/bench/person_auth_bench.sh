#!/usr/bin/env bash
# What a person's ID token adds to a request (issue 31: <= 0.2 ms p99 with a
# cached JWKS): septad with its embedded PostgreSQL trusts a real OpenID
# provider (tests/e2e/oidc/idp, oidc-provider on loopback); alice signs in
# by code + PKCE (idp/sign_in.mjs) to one client per signing algorithm and
# her ID tokens (an hour long) are sent as bearer tokens. The same read,
# GET /v1/tenants/acme, is timed by wrk from a second process with one
# connection (no queueing), first with an owner API token of acme (the
# baseline: a cached token lookup), then with each ID token (the signature
# verified with the cached keys, the claims read, the memberships cached).
# The difference of the percentiles is what the ID token adds.
# Usage: scripts/bench/person_auth_bench.sh [build-dir] [seconds]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
secs=${2:-15}
dir=$(mktemp -d /tmp/septa-bench.XXXXXX)
http_port=18680; grpc_port=18690
idp_pid="" pid=""
trap '[[ -n $pid ]] && kill -TERM $pid 2>/dev/null; [[ -n $idp_pid ]] && kill -TERM $idp_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT

bash tests/e2e/oidc/idp/ensure.sh
redirect=http://127.0.0.1:9/callback
clients=""
for alg in RS256 ES256 EdDSA; do
  clients+="{\"client_id\":\"portal-$alg\",\"client_secret\":\"s\",\"grant_types\":[\"authorization_code\"],"
  clients+="\"redirect_uris\":[\"$redirect\"],\"id_token_signed_response_alg\":\"$alg\"},"
done
cat >"$dir/idp.json" <<JSON
{"ttl": {"IdToken": 3600}, "clients": [${clients%,}],
 "users": [{"id": "alice", "email": "alice@acme.test", "groups": ["platform"], "password": "pw"}]}
JSON
exec {idp_out}< <(node tests/e2e/oidc/idp/idp.mjs --config "$dir/idp.json" 2>"$dir/idp.log")
read -r -t 30 line <&"$idp_out"
idp_pid=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["pid"])' "$line")
issuer=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["issuer"])' "$line")

# An issuer has two sign-in clients (client_id, cli_client_id): RS256 and
# ES256 in a first run, EdDSA in a second.
run() {  # CLIENT-A CLIENT-B
  cat >"$dir/septad.yaml" <<YAML
oidc_issuers: [{issuer: "$issuer", audience: septa, client_id: "$1", cli_client_id: "$2", username_claim: email}]
YAML
  rm -rf "$dir/data"
  "$build/bin/septad" --data-dir "$dir/data" --config "$dir/septad.yaml" --http-addr 127.0.0.1:$http_port \
    --grpc-addr 127.0.0.1:$grpc_port --provisioner=false --log-level warn >"$dir/septad.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 300); do curl -sf localhost:$http_port/readyz >/dev/null && break; sleep 0.1; done
  admin=$(cat "$dir/data/admin.token")
  curl -sf -H "Authorization: Bearer $admin" -H "Content-Type: application/json" -d '{"name":"acme","trust_tier":"shared"}' localhost:$http_port/v1/tenants >/dev/null
  curl -sf -H "Authorization: Bearer $admin" -H "Content-Type: application/json" -d '{"member":"group:platform","role":"viewer"}' \
    localhost:$http_port/v1/tenants/acme/members >/dev/null
  owner=$(curl -sf -H "Authorization: Bearer $admin" -H "Content-Type: application/json" -d '{"principal":"tenant:acme","role":"owner","ttl":"1h"}' \
    localhost:$http_port/v1/tokens | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
  measure "API token" "$owner"
  for client in "$@"; do
    id_token=$(node tests/e2e/oidc/idp/sign_in.mjs --issuer "$issuer" --client-id "$client" --client-secret s \
      --redirect-uri "$redirect" --login alice --password pw | python3 -c 'import json,sys; print(json.load(sys.stdin)["id_token"])')
    measure "ID token, $client" "$id_token"
  done
  kill -TERM $pid; wait $pid 2>/dev/null || true; pid=""
}
measure() {  # LABEL BEARER
  code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $2" localhost:$http_port/v1/tenants/acme)
  [[ $code == 200 ]] || { echo "$1 refused ($code)"; cat "$dir/septad.log"; exit 1; }
  echo "== GET /v1/tenants/acme with an $1 (wrk -t1 -c1, ${secs}s)"
  wrk -t1 -c1 -d"${secs}s" --latency -H "Authorization: Bearer $2" "http://127.0.0.1:$http_port/v1/tenants/acme" |
    sed -n '/Latency Distribution/,/Requests\/sec/p'
}
run portal-RS256 portal-ES256
run portal-EdDSA portal-RS256
echo "== septad's fetches of the provider's keys (one per run): $(curl -s "$issuer/_test/requests" |
  python3 -c 'import json,sys; r=json.load(sys.stdin); print({k: v for k, v in r.items() if k in ("/jwks", "/.well-known/openid-configuration")})')"
