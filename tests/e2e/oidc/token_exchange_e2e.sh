#!/usr/bin/env bash
# Pipelines without stored secrets, end to end against a real OpenID
# provider (idp/: panva's oidc-provider, OpenID Certified, on loopback):
# CI-style JWTs minted by its client_credentials grant (claims repository,
# ref, environment as GitHub Actions sets them; RS256, ES256 and EdDSA) are
# exchanged at POST /v1/tokens:exchange (RFC 8693, form and JSON) and by
# septactl --oidc-token-env (gRPC ExchangeToken) for short-lived Septa
# tokens, by septad's token_exchange_rules:
#  - acme/platform on refs/heads/main: acme's owner for 15m scoped to the
#    set acme-ci, so it applies that set and no other, and writes nothing
#    directly; a pull request of the same repository: a viewer for 5m, so it
#    diffs (the plan its owners' apply would carry out) and its apply is
#    refused; another repository: refused.
#  - Attacks refused with a plain 401 (the reason only in septad's log): a
#    token for another audience, a tampered signature, alg none, HS256
#    signed with the provider's public key, a token of a provider septad
#    does not trust (expiry and the rest: tests/unit/services/oidc).
#  - A hostile tenant: beta's pipeline floods exchanges and stops at its
#    live-token limit (429 naming it); 30 tokens with made-up key ids cost
#    at most one fetch of the keys; acme's exchanges are untouched.
#  - Keys: fetched once and cached (the provider counts its requests); a
#    rotation that drops the old keys is followed; the provider down, a
#    token signed before with a known key still exchanges.
set -euo pipefail
septad=$1
septactl=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../septad/septad_lib.sh"
source "$here/oidc_lib.sh"

clients='[
  {"client_id":"ci-main","client_secret":"s1","grant_types":["client_credentials"],"alg":"RS256",
   "ci_claims":{"repository":"acme/platform","ref":"refs/heads/main","environment":"prod","repository_owner":"acme"}},
  {"client_id":"ci-pr","client_secret":"s2","grant_types":["client_credentials"],"alg":"ES256",
   "ci_claims":{"repository":"acme/platform","ref":"refs/pull/7/merge","repository_owner":"acme"}},
  {"client_id":"ci-evil","client_secret":"s3","grant_types":["client_credentials"],"alg":"EdDSA",
   "ci_claims":{"repository":"mallory/platform","ref":"refs/heads/main","repository_owner":"mallory"}},
  {"client_id":"ci-beta","client_secret":"s4","grant_types":["client_credentials"],
   "ci_claims":{"repository":"beta/infra","ref":"refs/heads/main","repository_owner":"beta"}}]'
start_idp idp "{\"audiences\":[\"septa\",\"other\"],\"clients\":$clients}"
start_idp stranger "{\"audiences\":[\"septa\"],\"clients\":$clients}"

# mint ISSUER CLIENT SECRET [RESOURCE]: a client_credentials access token (a JWT).
mint() {
  curl -sf -u "$2:$3" -d grant_type=client_credentials -d "resource=${4:-urn:septa}" "$1/token" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])' || fail "the provider minted no token for $2"
}

cat >"$dir/septad.yaml" <<YAML
oidc_issuers:
  - issuer: $idp_issuer
    audience: septa
token_exchange_rules:
  - issuer: $idp_issuer
    claims: {repository: acme/platform, ref: refs/heads/main}
    principal: tenant:acme
    role: owner
    ttl: 15m
    apply_sets: [acme-ci]
  - issuer: $idp_issuer
    claims: {repository: acme/platform}
    principal: tenant:acme
    role: viewer
    ttl: 5m
  - issuer: $idp_issuer
    claims: {repository: beta/infra}
    principal: tenant:beta
    role: owner
YAML
start --config "$dir/septad.yaml" --provisioner=false --tenant-live-tokens-max 20
token=$(cat "$dir/data/admin.token")
for t in acme beta; do
  [[ $(api POST /v1/tenants "{\"name\":\"$t\",\"trust_tier\":\"shared\"}") == 201 ]] || fail "create tenant $t: $(reply)"
done

# exchange SUBJECT-TOKEN [json]: the HTTP status of an exchange; the answer in $dir/reply.
exchange() {
  if [[ ${2:-form} == json ]]; then
    curl -s -o "$dir/reply" -D "$dir/headers" -w '%{http_code}' -H 'Content-Type: application/json' \
      -d "{\"grant_type\":\"urn:ietf:params:oauth:grant-type:token-exchange\",\"subject_token\":\"$1\",\"subject_token_type\":\"urn:ietf:params:oauth:token-type:id_token\"}" \
      "http://127.0.0.1:$http_port/v1/tokens:exchange"
  else
    curl -s -o "$dir/reply" -D "$dir/headers" -w '%{http_code}' --data-urlencode grant_type=urn:ietf:params:oauth:grant-type:token-exchange \
      --data-urlencode "subject_token=$1" --data-urlencode subject_token_type=urn:ietf:params:oauth:token-type:jwt \
      "http://127.0.0.1:$http_port/v1/tokens:exchange"
  fi
}

main_jwt=$(mint "$idp_issuer" ci-main s1)
[[ $(exchange "$main_jwt") == 200 ]] || fail "main's token is exchanged (form): $(reply)"
[[ $(json 'r["issued_token_type"]') == urn:ietf:params:oauth:token-type:access_token && $(json 'r["token_type"]') == Bearer ]] ||
  fail "RFC 8693's answer: $(reply)"
[[ $(json 'r["expires_in"]') == 900 && $(json 'r["issued"]["principal"]') == tenant:acme && $(json 'r["issued"]["role"]') == owner ]] ||
  fail "main's token is acme's owner for 15m: $(reply)"
grep -qi '^cache-control: no-store' "$dir/headers" || fail "the answer holds a secret: Cache-Control: no-store"
owner_token=$(json 'r["access_token"]')
[[ $(json 'r["issued"]["apply_sets"]') == '["acme-ci"]' ]] || fail "scoped to the rule's apply sets: $(reply)"
[[ $(rest "$owner_token" GET /v1/tenants/acme) == 200 ]] || fail "the exchanged token reads acme: $(reply)"
[[ $(rest "$owner_token" GET /v1/tenants/beta) == 404 ]] || fail "and nothing else: $(reply)"
[[ $(rest "$owner_token" POST /v1/tenants/acme/vclusters '{"name":"side","capacity":{"shared":{"milli_gpu":100}}}') == 403 ]] ||
  fail "it writes nothing but its sets: $(reply)"
[[ $(reply) == *"may only apply and diff them"* ]] || fail "saying why: $(reply)"
[[ $(exchange "$main_jwt" json) == 200 ]] || fail "main's token is exchanged (JSON): $(reply)"

# septactl over gRPC: main applies acme's set, a pull request only diffs.
cat >"$dir/set.yaml" <<'YAML'
apiVersion: septa.dev/v1
kind: VirtualCluster
metadata: {name: ci, tenant: acme}
spec:
  capacity: {shared: {milli_gpu: 250}}
YAML
sctl() { HOME=$dir "$septactl" --server "127.0.0.1:$grpc_port" "$@"; }
CI_TOKEN=$(mint "$idp_issuer" ci-main s1) sctl --oidc-token-env CI_TOKEN apply -f "$dir/set.yaml" --set acme-ci \
  >"$dir/apply.out" 2>&1 || fail "main applies acme's set: $(cat "$dir/apply.out")"
[[ $(api GET /v1/tenants/acme/vclusters/ci) == 200 ]] || fail "the set's virtual cluster exists: $(reply)"
rc=0
CI_TOKEN=$(mint "$idp_issuer" ci-main s1) sctl --oidc-token-env CI_TOKEN apply -f "$dir/set.yaml" --set acme-other \
  >"$dir/other.out" 2>&1 || rc=$?
((rc == 2)) && grep -q "scoped to the apply sets acme-ci" "$dir/other.out" ||
  fail "main's token applies no other set: exit $rc $(cat "$dir/other.out")"
pr_jwt=$(mint "$idp_issuer" ci-pr s2)
sed -i 's/milli_gpu: 250/milli_gpu: 500/' "$dir/set.yaml"
rc=0
CI_TOKEN=$pr_jwt sctl --oidc-token-env CI_TOKEN diff -f "$dir/set.yaml" --set acme-ci >"$dir/diff.out" 2>&1 || rc=$?
((rc == 1)) || fail "a pull request diffs (exit 1: changes): exit $rc $(cat "$dir/diff.out")"
grep -q 'milli_gpu\|milliGpu' "$dir/diff.out" || fail "the plan shows the change: $(cat "$dir/diff.out")"
rc=0
CI_TOKEN=$pr_jwt sctl --oidc-token-env CI_TOKEN apply -f "$dir/set.yaml" --set acme-ci >"$dir/apply.out" 2>&1 || rc=$?
((rc == 2)) && grep -q "viewer may not" "$dir/apply.out" || fail "a pull request may not apply: exit $rc $(cat "$dir/apply.out")"
rc=0
CI_TOKEN=$(mint "$idp_issuer" ci-evil s3) sctl --oidc-token-env CI_TOKEN diff -f "$dir/set.yaml" --set acme-ci >"$dir/evil.out" 2>&1 || rc=$?
((rc == 2)) && grep -q "subject token was refused" "$dir/evil.out" || fail "another repository is refused: exit $rc $(cat "$dir/evil.out")"
grep -q 'no token_exchange_rules entry matches the token of issuer .* subject "repo:mallory/platform' "$log" ||
  fail "septad's log says why the other repository was refused"
rc=0
sctl --oidc-token-env UNSET_VARIABLE tenant list >"$dir/unset.out" 2>&1 || rc=$?
((rc != 0)) && grep -q 'UNSET_VARIABLE is not set' "$dir/unset.out" || fail "an unset variable is named: $(cat "$dir/unset.out")"

# Attacks: each a plain 401 that says nothing of why; the log says why.
refused() {  # WHAT TOKEN LOG-PATTERN
  [[ $(exchange "$2") == 401 ]] || fail "$1 is refused: $(reply)"
  [[ $(json 'r["message"]') == "the subject token was refused (septad's log says why, by this request's id)" ]] ||
    fail "$1: the client is told nothing of why: $(reply)"
  grep -q -- "$3" "$log" || fail "$1: septad's log says $3"
}
refused "a token for another audience" "$(mint "$idp_issuer" ci-main s1 urn:other)" '"aud" does not contain "septa"'
IFS=. read -r h p s <<<"$main_jwt"
flipped=${s:0:10}$([[ ${s:10:1} == A ]] && echo B || echo A)${s:11}
refused "a tampered signature" "$h.$p.$flipped" 'signature'
none_header=$(printf '{"alg":"none","typ":"JWT"}' | base64 -w0 | tr '+/' '-_' | tr -d '=')
refused "alg none" "$none_header.$p." '"none"'
public_pem=$(curl -s "$idp_issuer/jwks" | python3 -c '
import json,sys,base64
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives import serialization
k=next(k for k in json.load(sys.stdin)["keys"] if k["kty"]=="RSA")
i=lambda v:int.from_bytes(base64.urlsafe_b64decode(v+"="*(-len(v)%4)),"big")
print(rsa.RSAPublicNumbers(i(k["e"]),i(k["n"])).public_key().public_bytes(serialization.Encoding.PEM,serialization.PublicFormat.SubjectPublicKeyInfo).decode(),end="")')
hs_header=$(printf '{"alg":"HS256","typ":"JWT","kid":"%s"}' "$(python3 -c 'import json,sys,base64; print(json.loads(base64.urlsafe_b64decode(sys.argv[1]+"=="))["kid"])' "$h")" |
  base64 -w0 | tr '+/' '-_' | tr -d '=')
hs_sig=$(printf '%s' "$hs_header.$p" | openssl dgst -sha256 -hmac "$public_pem" -binary | base64 -w0 | tr '+/' '-_' | tr -d '=')
refused "HS256 signed with the public key" "$hs_header.$p.$hs_sig" '"HS256"'
refused "a provider septad does not trust" "$(mint "$stranger_issuer" ci-main s1)" 'is not one of oidc_issuers'
[[ $(exchange "not-a-jwt") == 401 ]] || fail "garbage is a 401: $(reply)"
[[ $(curl -s -o "$dir/reply" -w '%{http_code}' --data-urlencode grant_type=password "http://127.0.0.1:$http_port/v1/tokens:exchange") == 400 ]] ||
  fail "a wrong grant_type is a 400: $(reply)"
[[ $(reply) == *grant_type* ]] || fail "naming grant_type: $(reply)"
[[ $(curl -s -o "$dir/reply" -w '%{http_code}' -H 'Content-Type: text/plain' -d x "http://127.0.0.1:$http_port/v1/tokens:exchange") == 415 ]] ||
  fail "a text body is a 415: $(reply)"

# Keys: septad's one fetch (discovery, then the key set; the test read the key set once too) for every token so far.
discoveries() { curl -s "$idp_issuer/_test/requests" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("/.well-known/openid-configuration", 0))'; }
[[ $(discoveries) == 1 ]] || fail "the keys were fetched once: $(curl -s "$idp_issuer/_test/requests")"
# A rotation that drops the old keys: the first token of a new key makes septad fetch again (at most every 10 s).
curl -sf -X POST -H 'Content-Type: application/json' -d '{"keep_old":false}' "$idp_issuer/_test/rotate-keys" >/dev/null
rotated_jwt=$(mint "$idp_issuer" ci-main s1)
rotated() { [[ $(exchange "$rotated_jwt") == 200 ]]; }
wait_for "a token of the rotated key" 15 rotated
[[ $(discoveries) == 2 ]] || fail "the rotation cost one fetch: $(curl -s "$idp_issuer/_test/requests")"
# A hostile tenant floods: beta's pipeline exchanges until its live tokens reach the limit (429 naming it),
# and tokens with made-up key ids make septad fetch the keys at most once per 10 s; acme's exchanges go on.
beta_jwt=$(mint "$idp_issuer" ci-beta s4)
codes=$(for _ in $(seq 1 25); do exchange "$beta_jwt"; echo; done | sort | uniq -c | tr -s ' ' | paste -sd' ')
[[ $codes == " 20 200  5 429" || $codes == " 20 200 5 429" ]] || fail "beta stops at its 20 live tokens: $codes"
[[ $(exchange "$beta_jwt") == 429 && $(reply) == *"live tokens per tenant"* ]] || fail "the limit is named: $(reply)"
before=$(curl -s "$idp_issuer/_test/requests" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("/.well-known/openid-configuration", 0))')
for i in $(seq 1 30); do
  forged=$(printf '{"alg":"RS256","typ":"JWT","kid":"made-up-%s"}' "$i" | base64 -w0 | tr '+/' '-_' | tr -d '=')
  [[ $(exchange "$forged.$p.$s") == 401 ]] || fail "a made-up key id is refused: $(reply)"
done
after=$(curl -s "$idp_issuer/_test/requests" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("/.well-known/openid-configuration", 0))')
((after - before <= 1)) || fail "30 made-up key ids cost $((after - before)) fetches, not at most one"
[[ $(exchange "$(mint "$idp_issuer" ci-main s1)") == 200 ]] || fail "acme's pipeline is untouched: $(reply)"

# Down: a token signed before with a key septad knows still exchanges.
held_jwt=$(mint "$idp_issuer" ci-main s1)
curl -sf -X POST "$idp_issuer/_test/down" >/dev/null
[[ $(exchange "$held_jwt") == 200 ]] || fail "with the provider down, a known key still verifies: $(reply)"

# Listed for the admin, with where they came from; none holds a secret.
[[ $(api GET /v1/tokens) == 200 ]] || fail "list tokens"
[[ $(json 'sum(1 for t in r["tokens"] if t["description"].startswith("exchanged: "))') -ge 5 ]] ||
  fail "the exchanged tokens are listed: $(reply)"
! grep -q "$owner_token" "$log" || fail "a Septa token in septad's log"
! grep -qF "$main_jwt" "$log" || fail "a subject token in septad's log"
echo "PASS: token exchange against oidc-provider"
