#!/usr/bin/env bash
# The Vault issuer end to end: septad with `issuer: vault` against a
# septa-vaultsim process (token auth). septad configures the Vault itself
# (Septa's root mount, one intermediate mount per virtual cluster, roles,
# the tenant's policy); a kubeconfig from IssueKubeconfig works with the
# real kubectl; openssl reads a certificate of the cluster's Vault
# intermediate (CN, O, clientAuth only, no SANs, 600 s); a ttl above the
# tier's cap is capped by Vault (ttl_capped); acme/dev refuses acme/train's
# kubeconfig (same root, another intermediate); a revoked one is refused at
# once and revoked in Vault (its CRL); deleting acme/dev removes its Vault
# mount. Workloads' Vault access
# (vaultsim checks Kubernetes logins with a TokenReview, as Vault does): a
# token from `kubectl create token` in acme/train logs in at train's
# Kubernetes auth method and reads secret/data/tenants/acme/*, not globex's;
# the same token at acme/dev's method is refused; deleting acme/dev removes
# its auth method and policy. The Vault Secrets Operator's default
# VaultConnection and VaultAuth are in acme/train (kubectl get).
set -euo pipefail
septad=$1
kubectl=$2
vaultsim=$3
source "$(dirname "$0")/septad_lib.sh"

vault_pid=""
trap '[[ -n $vault_pid ]] && kill -9 "$vault_pid" 2>/dev/null; cleanup' EXIT
x509() { kc "$1" config view --raw -o 'jsonpath={.users[0].user.client-certificate-data}' | base64 -d |
  openssl x509 -noout -nameopt RFC2253 "${@:2}"; }
epoch_of() { date -u -d "$1" +%s; }
unauthorized() { grep -q -e Unauthorized -e 'asked for the client to provide credentials' <<<"$1"; }
vault_mounts() { curl -s -H "X-Vault-Token: $(cat "$dir/vault-token")" "$vault_addr/v1/sys/${2:-mounts}"; }
has_mount() { vault_mounts "$1" "${2:-mounts}" | python3 -c 'import json,sys; sys.exit(0 if sys.argv[1]+"/" in json.load(sys.stdin)["data"] else 1)' "$1"; }
# vault METHOD PATH [BODY] [TOKEN]: the HTTP status, the body in $dir/vault-reply;
# TOKEN none sends no token (a login), empty the root token.
vault() {
  local args=(-s -o "$dir/vault-reply" -w '%{http_code}' -X "$1") token=${4:-$(cat "$dir/vault-token")}
  [[ $token == none ]] || args+=(-H "X-Vault-Token: $token")
  [[ -z ${3:-} ]] || args+=(-d "$3")
  curl "${args[@]}" "$vault_addr/v1/$2"
}
vault_json() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$dir/vault-reply" "$1"; }

vault_port=$(free_port)
vault_addr=http://127.0.0.1:$vault_port
"$vaultsim" --listen "127.0.0.1:$vault_port" --root-token-file "$dir/vault-token" --review-kubernetes-logins \
  >"$dir/vaultsim.log" 2>&1 &
vault_pid=$!
wait_for "septa-vaultsim serving" 10 grep -q "serving" "$dir/vaultsim.log"
start --issuer vault --vault-addr "$vault_addr" --vault-token-file "$dir/vault-token" --vault-secrets-operator true
token=$(cat "$dir/data/admin.token")

[[ $(api POST /v1/tenants '{"name":"acme","trust_tier":"shared"}') == 201 ]] || fail "create tenant"
vc_body='{"name":"%s","capacity":{"shared":{"milli_gpu":100}},"quota":{"cpu_milli":1000,"memory_mib":1024,"pods":5}}'
for name in train dev; do
  # shellcheck disable=SC2059
  [[ $(api POST /v1/tenants/acme/vclusters "$(printf "$vc_body" "$name")") == 201 ]] || fail "create acme/$name"
done
ready() { [[ $(rest "$token" GET "/v1/tenants/acme/vclusters/$1") == 200 && $(json 'r["state"]') == READY ]]; }
wait_for "acme/train READY" 30 ready train
wait_for "acme/dev READY" 30 ready dev
for mount in septa-pki septa-acme-x-train-pki septa-acme-x-dev-pki; do
  has_mount "$mount" || fail "Vault has no mount $mount: $(vault_mounts)"
done
dev_endpoint=$(rest "$token" GET /v1/tenants/acme/vclusters/dev >/dev/null && json 'r["endpoint"]')

issue() {  # vcluster body: the kubeconfig in $issued
  [[ $(rest "$token" POST "/v1/tenants/acme/vclusters/$1:kubeconfig" "$2") == 200 ]] ||
    fail "IssueKubeconfig acme/$1 $2: $(reply)"
  issued=$dir/acme-$1-$(json 'r["serial"]').kubeconfig
  json 'r["kubeconfig"]' >"$issued"
}
issue train '{"ttl":"10m","role":"edit"}'
a1=$issued
a1_serial=$(json 'r["serial"]')
[[ $(json 'r["ttl_capped"]') == false ]] || fail "a 10m ttl reported capped: $(reply)"
# Read whole, then searched: `kubectl ... | grep -q` under pipefail fails
# when grep stops reading before kubectl has written its last line (SIGPIPE).
namespaces=$(kc "$a1" get namespaces -o name) || fail "kubectl with the Vault-issued kubeconfig"
grep -qx namespace/kube-system <<<"$namespaces" || fail "kubectl with the Vault-issued kubeconfig lists: $namespaces"
kc "$a1" create configmap settings --from-literal=mode=vault >/dev/null || fail "kubectl create configmap"

not_before=$(epoch_of "$(x509 "$a1" -startdate | cut -d= -f2)")
not_after=$(epoch_of "$(x509 "$a1" -enddate | cut -d= -f2)")
# vaultsim's certificate times pass through relative seconds: within 1 s.
((${#not_after} > 0 && not_after - not_before >= 629 && not_after - not_before <= 631)) ||
  fail "lives $((not_after - not_before)) s, not 600 s + Vault's 30 s back-dating"
[[ $(x509 "$a1" -issuer) == "issuer=CN=acme/train client CA" ]] || fail "not acme/train's Vault CA: $(x509 "$a1" -issuer)"
[[ $(x509 "$a1" -subject) == subject=CN=admin*,O=septa:edit ]] || fail "subject: $(x509 "$a1" -subject)"
[[ $(x509 "$a1" -serial | cut -d= -f2 | tr A-F a-f) == "$a1_serial" ]] || fail "serial: $(x509 "$a1" -serial)"
[[ $(x509 "$a1" -ext extendedKeyUsage | sed -n 2p | xargs) == "TLS Web Client Authentication" ]] ||
  fail "not for client authentication only: $(x509 "$a1" -text)"
[[ $(x509 "$a1" -text) == *"Subject Alternative Name"* ]] && fail "the certificate has SANs: $(x509 "$a1" -text)"

# Workloads' Vault access: the tenants' secrets, then a workload's login.
[[ $(vault POST sys/mounts/secret '{"type":"kv","options":{"version":"2"}}') == 204 ]] || fail "enable secret/"
for tenant in acme globex; do
  [[ $(vault POST "secret/data/tenants/$tenant/db" "{\"data\":{\"password\":\"$tenant-s3cret\"}}") == 200 ]] ||
    fail "write $tenant's secret: $(cat "$dir/vault-reply")"
done
has_mount septa-acme-x-train-kubernetes auth || fail "no Kubernetes auth method for acme/train: $(vault_mounts x auth)"
issue train '{"ttl":"10m","role":"admin"}'
jwt=$(kc "$issued" create token default --duration 10m) || fail "kubectl create token"
login() {  # vcluster: the login's HTTP status; its reply in $dir/vault-reply
  vault POST "auth/septa-acme-x-$1-kubernetes/login" "{\"role\":\"workloads\",\"jwt\":\"$jwt\"}" none
}
[[ $(login train) == 200 ]] || fail "a workload's login at acme/train: $(cat "$dir/vault-reply")"
workload_token=$(vault_json 'r["auth"]["client_token"]')
[[ $(vault_json 'r["auth"]["metadata"]["service_account_name"]') == default ]] || fail "login: $(cat "$dir/vault-reply")"
[[ $(vault GET secret/data/tenants/acme/db "" "$workload_token") == 200 ]] ||
  fail "the workload cannot read its tenant's secret: $(cat "$dir/vault-reply")"
[[ $(vault_json 'r["data"]["data"]["password"]') == acme-s3cret ]] || fail "secret: $(cat "$dir/vault-reply")"
[[ $(vault GET secret/data/tenants/globex/db "" "$workload_token") == 403 ]] ||
  fail "acme's workload read globex's secret: $(cat "$dir/vault-reply")"
[[ $(login dev) == 403 ]] || fail "acme/train's token logged in at acme/dev: $(cat "$dir/vault-reply")"
# The Vault Secrets Operator's defaults in the virtual cluster, read with kubectl.
vso() { kc "$issued" get "$1" default -n vault-secrets-operator-system -o "jsonpath=$2"; }
[[ $(vso vaultconnections.secrets.hashicorp.com '{.spec.address}') == "$vault_addr" ]] ||
  fail "no VaultConnection default at $vault_addr in acme/train"
[[ $(vso vaultauths.secrets.hashicorp.com '{.spec.mount} {.spec.kubernetes.role}') == \
  "septa-acme-x-train-kubernetes workloads" ]] || fail "VaultAuth default: $(vso vaultauths.secrets.hashicorp.com '{}')"

issue train '{"ttl":"48h","role":"view"}'
a2=$issued
[[ $(json 'r["ttl_capped"]') == true ]] || fail "a 48h ttl on the shared tier is not reported capped: $(reply)"
lifetime=$(($(epoch_of "$(x509 "$a2" -enddate | cut -d= -f2)") - $(epoch_of "$(x509 "$a2" -startdate | cut -d= -f2)")))
((lifetime >= 86429 && lifetime <= 86431)) || fail "a capped certificate lives $lifetime s, not 24 h (+30 s)"
kc "$a2" get configmap settings -o name >/dev/null || fail "the view kubeconfig reads"

refusal=$(kc "$a2" --server "$dev_endpoint" get namespaces 2>&1) && fail "acme/train's kubeconfig works on acme/dev"
unauthorized "$refusal" || fail "acme/train's kubeconfig on acme/dev: $refusal"

[[ $(rest "$token" DELETE "/v1/tenants/acme/vclusters/train/credentials/$a1_serial") == 200 ]] ||
  fail "RevokeCredential: $(reply)"
# The revocation reaches Vault's CRL too (NOTIFY -> the provisioner's reconcile of acme/train).
in_vault_crl() {
  [[ $(vault GET "septa-acme-x-train-pki/cert/$(sed 's/../&:/g; s/:$//' <<<"$a1_serial")") == 200 ]] &&
    (($(vault_json 'r["data"]["revocation_time"]') > 0))
}
wait_for "the revoked certificate revoked in Vault" 10 in_vault_crl
refusal=$(kc "$a1" get configmap settings 2>&1) && fail "the revoked kubeconfig still works"
unauthorized "$refusal" || fail "the revoked kubeconfig is not refused as Unauthorized: $refusal"
kc "$a2" get configmap settings -o name >/dev/null || fail "the unrevoked kubeconfig stopped working"

status=$(api DELETE /v1/tenants/acme/vclusters/dev)
[[ $status == 200 || $status == 202 || $status == 204 ]] || fail "delete acme/dev: $status"
gone() { ! has_mount septa-acme-x-dev-pki && ! has_mount septa-acme-x-dev-kubernetes auth; }
wait_for "acme/dev's Vault mount and auth method removed" 30 gone
[[ $(vault GET sys/policies/acl/septa-acme-x-dev-workloads) == 404 ]] || fail "acme/dev's workload policy stayed"
has_mount septa-acme-x-train-pki || fail "acme/train's mount went with acme/dev's"
[[ $(login train) == 200 ]] || fail "acme/train's workload login went with acme/dev: $(cat "$dir/vault-reply")"
echo "ok"
