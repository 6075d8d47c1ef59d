#!/usr/bin/env bash
# A person's whole path, end to end (the identity issue's "septactl login
# then kubectl with an exec kubeconfig works across an expiry without any
# manual step"), against a real OpenID provider (idp/: oidc-provider on
# loopback) and septad on its embedded defaults:
#  1. alice signs in septactl by the device flow (approve_device.mjs as the
#     person); septad trusts the provider, her group ml is acme's editor;
#  2. with that login only (no Septa token anywhere), septactl creates
#     acme/train and writes an --exec kubeconfig with 60 s certificates;
#  3. the real kubectl works through it;
#  4. the certificate expires, and so do her 20 s ID tokens: kubectl still
#     works with no manual step — the plugin refreshed her login (a new ID
#     token, the rotated refresh token written back) and septad issued a
#     new certificate to her (two listed);
#  5. her group taken away at the provider: the next renewal is refused
#     (kubectl fails showing septactl's message), and nothing was issued.
# Usage: login_kubectl_e2e.sh <septad> <septactl> <kubectl>
set -euo pipefail
septad=$1
septactl=$2
kubectl=$3
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../septad/septad_lib.sh"

source "$here/oidc_lib.sh"

start_idp idp '{"ttl": {"IdToken": 20, "RefreshToken": 600},
 "clients": [{"client_id": "septactl", "token_endpoint_auth_method": "none",
              "grant_types": ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"]}],
 "users": [{"id": "alice", "email": "alice@acme.test", "groups": ["ml"], "password": "pw"}]}'
issuer=$idp_issuer

cat >"$dir/septad.yaml" <<YAML
oidc_issuers:
  - issuer: $issuer
    audience: septa
    client_id: septa-portal
    cli_client_id: septactl
    username_claim: email
YAML
start --config "$dir/septad.yaml"
token=$(cat "$dir/data/admin.token")
[[ $(api POST /v1/tenants '{"name":"acme","trust_tier":"shared"}') == 201 ]] || fail "create tenant acme: $(reply)"
[[ $(api POST /v1/tenants/acme/members '{"member":"group:ml","role":"editor"}') == 201 ]] || fail "add group:ml: $(reply)"

# alice's machine: her own HOME and cache, no Septa token.
export HOME=$dir/home XDG_CACHE_HOME=$dir/home/.cache
unset SEPTA_TOKEN SEPTA_TENANT
mkdir -p "$HOME/.config/septa"
config=$HOME/.config/septa/config.yaml
printf 'server: "127.0.0.1:%s"\n' "$grpc_port" >"$config"
sctl() { "$septactl" "$@"; }

# 1. septactl login, approved by "alice" in a browser.
sctl login --issuer "$issuer" --client-id septactl --max-wait 60s >"$dir/login.out" 2>"$dir/login.err" &
login_pid=$!
deadline=$((SECONDS + 30))
until line=$(grep -m1 '^Open .* and enter code ' "$dir/login.err"); do
  kill -0 "$login_pid" 2>/dev/null || fail "septactl login exited early: $(cat "$dir/login.err")"
  ((SECONDS < deadline)) || fail "septactl login printed no code"
  sleep 0.1
done
node "$here/approve_device.mjs" "$(sed -E 's/^Open (.*) and enter code .*/\1/' <<<"$line")" \
  "$(sed -E 's/.* and enter code (.*)$/\1/' <<<"$line")" alice pw approve >"$dir/approve.log" 2>&1 ||
  fail "the approval: $(cat "$dir/approve.log")"
wait "$login_pid" || fail "septactl login: $(cat "$dir/login.err")"
[[ $(stat -c %a "$config") == 600 ]] || fail "the config file's mode: $(stat -c %a "$config")"
first_id_token=$(sed -n 's/^  id_token: "\(.*\)"$/\1/p' "$config")

# 2. As alice, by her login only: a virtual cluster and an exec kubeconfig.
sctl vcluster create acme train --shared-milli 100 --pods 5 --wait --timeout 60s >"$dir/create.out" 2>&1 ||
  fail "alice (acme's editor by her group) creates acme/train and it gets READY: $(cat "$dir/create.out")"
kubeconfig=$dir/train.kubeconfig
sctl vcluster kubeconfig train --tenant acme --role edit --ttl 60s --exec >"$kubeconfig" 2>"$dir/kubeconfig.err" ||
  fail "kubeconfig --exec: $(cat "$dir/kubeconfig.err")"
! grep -q -e "$first_id_token" -e refresh_token "$kubeconfig" || fail "the kubeconfig holds the login"
kexec() { "$kubectl" --request-timeout=20s --cache-dir "$dir/kube-cache" --kubeconfig "$kubeconfig" "$@"; }
entry=$(find "$XDG_CACHE_HOME/septa/credentials" -name 'acme_train_edit@*.json' | head -1)
[[ -n $entry ]] || fail "no cached certificate"
edit_credentials() {
  sctl -o json vcluster credentials acme train |
    python3 -c 'import json,sys; print(sum(1 for c in json.load(sys.stdin).get("credentials",[]) if c["role"]=="edit"))'
}

# 3. kubectl through it.
kexec get pods >"$dir/k1.out" 2>&1 || fail "kubectl get pods: $(cat "$dir/k1.out")"
first_serial=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["serial"])' "$entry")
[[ $(edit_credentials) == 1 ]] || fail "one certificate so far"

# 4. Across the certificate's expiry (and the ID token's): no manual step.
expire=$(date -u -d "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["expire_time"])' "$entry")" +%s)
while (($(date +%s) <= expire)); do sleep 1; done
kexec get pods >"$dir/k2.out" 2>&1 || fail "kubectl across the expiry: $(cat "$dir/k2.out")"
second_serial=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["serial"])' "$entry")
[[ $second_serial != "$first_serial" ]] || fail "the certificate was not renewed"
[[ $(sed -n 's/^  id_token: "\(.*\)"$/\1/p' "$config") != "$first_id_token" ]] || fail "the login was not refreshed"
[[ $(stat -c %a "$config") == 600 ]] || fail "the refreshed config file's mode"
[[ $(edit_credentials) == 2 ]] || fail "two certificates: $(edit_credentials)"
grep -q 'user:alice@acme.test' < <(sctl -o json vcluster credentials acme train) ||
  fail "the certificates were issued to alice: $(sctl -o json vcluster credentials acme train)"

# 5. Her group taken away at the provider: the next renewal is refused.
curl -sf -X POST -H 'Content-Type: application/json' -d '{"groups":[]}' "$issuer/_test/users/alice/groups" >/dev/null ||
  fail "the provider's group change"
expire=$(date -u -d "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["expire_time"])' "$entry")" +%s)
while (($(date +%s) <= expire)); do sleep 1; done
if kexec get pods >"$dir/k3.out" 2>&1; then fail "kubectl works for alice without her group: $(cat "$dir/k3.out")"; fi
grep -q 'NOT_FOUND' "$dir/k3.out" || fail "kubectl shows septactl's refusal: $(cat "$dir/k3.out")"
echo "PASS"
