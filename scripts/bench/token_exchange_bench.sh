#!/usr/bin/env bash
# Token exchange benchmark (issue 31: >= 500 exchanges/s on 2 cores): septad
# with its embedded PostgreSQL trusts a real OpenID provider (tests/e2e/oidc/
# idp, oidc-provider on loopback); one CI-style JWT per algorithm it minted
# is exchanged over and over at POST /v1/tokens:exchange (form-encoded, as an
# OAuth client sends it) by wrk from a second process. Each exchange verifies
# the token's signature with the cached key set and writes a token row and
# its audit record in one transaction (fsync on). The rule maps to an admin
# viewer: a tenant may hold at most tenant_live_tokens_max live tokens,
# which a benchmark would exhaust in a second.
# Usage: scripts/bench/token_exchange_bench.sh [build-dir] [seconds]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
secs=${2:-15}
dir=$(mktemp -d /tmp/septa-bench.XXXXXX)
http_port=18580; grpc_port=18590
idp_pid="" pid=""
trap '[[ -n $pid ]] && kill -TERM $pid 2>/dev/null; [[ -n $idp_pid ]] && kill -TERM $idp_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT

bash tests/e2e/oidc/idp/ensure.sh
cat >"$dir/idp.json" <<'JSON'
{"audiences": ["septa"], "access_token_ttl": 3600, "clients": [
  {"client_id": "ci-rs", "client_secret": "s", "grant_types": ["client_credentials"], "alg": "RS256",
   "ci_claims": {"repository": "acme/platform", "ref": "refs/heads/main"}},
  {"client_id": "ci-es", "client_secret": "s", "grant_types": ["client_credentials"], "alg": "ES256",
   "ci_claims": {"repository": "acme/platform", "ref": "refs/heads/main"}},
  {"client_id": "ci-ed", "client_secret": "s", "grant_types": ["client_credentials"], "alg": "EdDSA",
   "ci_claims": {"repository": "acme/platform", "ref": "refs/heads/main"}}]}
JSON
exec {idp_out}< <(node tests/e2e/oidc/idp/idp.mjs --config "$dir/idp.json" 2>"$dir/idp.log")
read -r -t 30 line <&"$idp_out"
idp_pid=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["pid"])' "$line")
issuer=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["issuer"])' "$line")

cat >"$dir/septad.yaml" <<YAML
oidc_issuers: [{issuer: "$issuer", audience: septa}]
token_exchange_rules:
  - {issuer: "$issuer", claims: {repository: acme/platform, ref: refs/heads/main}, principal: admin, role: viewer, ttl: 15m}
YAML
"$build/bin/septad" --data-dir "$dir/data" --config "$dir/septad.yaml" --http-addr 127.0.0.1:$http_port \
  --grpc-addr 127.0.0.1:$grpc_port --provisioner=false --log-level warn >"$dir/septad.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do curl -sf localhost:$http_port/readyz >/dev/null && break; sleep 0.1; done

for client in ci-rs ci-es ci-ed; do
  jwt=$(curl -sf -u "$client:s" -d grant_type=client_credentials -d resource=urn:septa "$issuer/token" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
  body="grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Ajwt&subject_token=$jwt"
  code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/x-www-form-urlencoded' -d "$body" \
    "http://127.0.0.1:$http_port/v1/tokens:exchange")
  [[ $code == 200 ]] || { echo "exchange refused ($code):"; cat "$dir/septad.log"; exit 1; }
  cat >"$dir/exchange.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.body = "$body"
LUA
  echo "== POST /v1/tokens:exchange, $client's token (wrk -t1 -c16, ${secs}s)"
  wrk -t1 -c16 -d"${secs}s" --latency -s "$dir/exchange.lua" "http://127.0.0.1:$http_port/v1/tokens:exchange" |
    sed -n '1,20p'
done
echo "== key set fetches by septad: $(curl -s "$issuer/_test/requests")"
