#!/usr/bin/env bash
# septad with `control_plane: host` on its simulated host: a virtual cluster
# created over REST gets a stock control plane in its host namespace (the
# StatefulSet of kube-apiserver, kine and kube-controller-manager, CoreDNS,
# the Services and Secrets; read back with kubectl) and turns READY once
# kubesim reports the control plane pod ready, with the endpoint of the API
# server's Service; DELETE removes it all. A tenant's kubeconfig points at
# that Service, trusts the CA the API server serves with, and its client
# certificate verifies (openssl) against the bundle kube-apiserver's
# --client-ca-file reads; the bootstrap Job binds the credential roles'
# groups inside the virtual cluster. With a septa-vaultsim as the second
# argument, septad runs with issuer vault: the certificate then comes from
# the virtual cluster's Vault intermediate, which the bundle holds too, and
# Vault gets the cluster's Kubernetes auth method pointed at the Service;
# DELETE removes both from Vault. The syncer tries the virtual cluster's API
# at its Service, and so does septad, restarted with the Vault Secrets
# Operator on, for the operator's objects. kubesim runs no container, so
# nothing answers at that endpoint here: this is as far as these machines go.
set -euo pipefail
septad=$1
vaultsim=${2:-}
source "$(dirname "$0")/septad_lib.sh"

vault_args=()
if [[ -n $vaultsim ]]; then
  vault_pid=""
  trap '[[ -n $vault_pid ]] && kill -9 "$vault_pid" 2>/dev/null; cleanup' EXIT
  vault_port=$(free_port)
  vault_addr=http://127.0.0.1:$vault_port
  "$vaultsim" --listen "127.0.0.1:$vault_port" --root-token-file "$dir/vault-token" >"$dir/vaultsim.log" 2>&1 &
  vault_pid=$!
  wait_for "septa-vaultsim serving" 10 grep -q "serving" "$dir/vaultsim.log"
  vault_args=(--issuer vault --vault-addr "$vault_addr" --vault-token-file "$dir/vault-token")
fi
# vault_read PATH: the JSON of a read with the root token (empty when absent).
vault_read() { curl -s -H "X-Vault-Token: $(cat "$dir/vault-token")" "$vault_addr/v1/$1"; }
vault_has() {  # sys/mounts|sys/auth PATH: whether the mount is there
  vault_read "$1" | python3 -c 'import json,sys; sys.exit(0 if sys.argv[1]+"/" in json.load(sys.stdin)["data"] else 1)' "$2"
}

start --control-plane host --control-plane-database-address postgres.septa-system.svc:5432 \
  --control-plane-database-sslmode disable "${vault_args[@]}"
grep -q "virtual control planes: on the host cluster" "$log" || fail "septad did not choose the host control planes"
token=$(cat "$dir/data/admin.token")
create_acme_train

ready() {
  local vc; vc=$(get /v1/tenants/acme/vclusters/train)
  [[ $(field "$vc" state) == READY && $(condition "$vc" ControlPlaneReady) == True ]]
}
wait_for "READY with its control plane on the host" 30 ready
echo "create -> READY with a host control plane: $(($(now_ms) - created)) ms (kubesim starts pods after 500 ms)"
vc=$(get /v1/tenants/acme/vclusters/train)
ns=$(field "$vc" host_namespace)
endpoint=$(field "$vc" endpoint)
[[ $endpoint == "https://septa-apiserver.$ns.svc.cluster.local" ]] || fail "endpoint is '$endpoint': $vc"

[[ $(k get sts septa-control-plane -n "$ns" -o jsonpath='{.status.readyReplicas}') == 1 ]] || fail "StatefulSet not ready"
[[ $(k get pod septa-control-plane-0 -n "$ns" -o jsonpath='{.spec.containers[*].name}') == \
  "kine kube-apiserver kube-controller-manager" ]] || fail "the control plane pod's containers"
[[ $(k get secret septa-control-plane-kine -n "$ns" -o jsonpath='{.data.endpoint}' | base64 -d) == \
  postgres://septa_vc_*@postgres.septa-system.svc:5432/septa_vc_*?sslmode=disable ]] || fail "kine's endpoint"
[[ $(k get deploy septa-coredns -n "$ns" -o jsonpath='{.status.readyReplicas}') == 1 ]] || fail "CoreDNS not ready"
[[ $(k get svc septa-apiserver -n "$ns" -o jsonpath='{.spec.ports[0].port}') == 443 ]] || fail "API server Service"
[[ $(k get job septa-control-plane-bootstrap -n "$ns" -o jsonpath='{.spec.template.spec.containers[0].args[2]}') == \
  apply ]] || fail "the bootstrap Job (CoreDNS's rights inside the virtual cluster)"

# A tenant's kubeconfig: the Service's URL, the serving CA, and a client
# certificate the API server's --client-ca-file accepts.
[[ $(api POST /v1/tenants/acme/vclusters/train:kubeconfig '{"ttl":"10m","role":"edit"}') == 200 ]] ||
  fail "IssueKubeconfig: $(reply)"
json 'r["kubeconfig"]' >"$dir/train.kubeconfig"
kv() { kubectl --kubeconfig "$dir/train.kubeconfig" config view --raw -o "jsonpath=$1"; }
[[ $(kv '{.clusters[0].cluster.server}') == "$endpoint" ]] || fail "the kubeconfig's server: $(kv '{}')"
secret_key() {  # SECRET KEY: the decoded value
  local escaped=${2//./\\.}
  k get secret "$1" -n "$ns" -o "jsonpath={.data.$escaped}" | base64 -d
}
secret_key septa-control-plane-certs ca.crt >"$dir/ca.crt"
secret_key septa-control-plane-certs client-ca.crt >"$dir/client-ca.crt"
kv '{.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$dir/kubeconfig-ca.crt"
cmp -s "$dir/kubeconfig-ca.crt" "$dir/ca.crt" || fail "the kubeconfig does not trust the CA the API server serves with"
kv '{.users[0].user.client-certificate-data}' | base64 -d >"$dir/client.crt"
openssl verify -partial_chain -purpose sslclient -CAfile "$dir/client-ca.crt" "$dir/client.crt" >/dev/null ||
  fail "kube-apiserver's client CA bundle does not accept the kubeconfig's certificate: $(openssl x509 -noout -issuer -in "$dir/client.crt")"
subject=$(openssl x509 -noout -subject -nameopt RFC2253 -in "$dir/client.crt")
[[ $subject == *O=septa:edit* ]] || fail "the certificate's groups: $subject"
bound=$(secret_key septa-control-plane-bootstrap objects.json | python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
print(" ".join(sorted(i["subjects"][0]["name"] + "=" + i["roleRef"]["name"] for i in items if i["kind"] == "ClusterRoleBinding")))')
[[ $bound == *septa:edit=edit* && $bound == *septa:admin=cluster-admin* && $bound == *septa:view=view* ]] ||
  fail "the bootstrap Job does not bind the credential groups: $bound"
if [[ -n $vaultsim ]]; then
  openssl verify -CAfile "$dir/ca.crt" "$dir/client.crt" >/dev/null 2>&1 &&
    fail "with issuer vault the certificate comes from the cluster's own CA, not Vault's intermediate"
  vault_has sys/mounts septa-acme-x-train-pki || fail "Vault has no PKI mount for acme/train: $(vault_read sys/mounts)"
  wait_for "the workloads' Kubernetes auth method in Vault" 10 vault_has sys/auth septa-acme-x-train-kubernetes
  host_in_vault=$(vault_read auth/septa-acme-x-train-kubernetes/config | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["kubernetes_host"])')
  [[ $host_in_vault == "$endpoint" ]] || fail "Vault checks logins at '$host_in_vault', not the Service"
  [[ $bound == *system:serviceaccounts=system:auth-delegator* ]] ||
    fail "service accounts may not ask for their own TokenReview (Vault's logins): $bound"
fi

# The syncer watches the virtual cluster at its Service; no API server
# answers there on kubesim, and septad's log says so.
wait_for "the syncer trying the virtual cluster's API server" 40 \
  grep -q "reconciling acme/train failed .*its pods were not listed within" "$log"

# The Vault Secrets Operator's objects go the syncer's way too: restarted
# with the operator on, septad tries to write them at the Service, and the
# virtual cluster says which step waits for what.
if [[ -n $vaultsim ]]; then
  kill -TERM "$pid"
  wait "$pid" || fail "septad exited non-zero after SIGTERM"
  start --control-plane host --control-plane-database-address postgres.septa-system.svc:5432 \
    --control-plane-database-sslmode disable "${vault_args[@]}" --vault-secrets-operator true
  plane_message() { condition "$(get /v1/tenants/acme/vclusters/train)" ControlPlaneReady message; }
  operator_tried() {
    local message; message=$(plane_message)
    [[ $message == *"the Vault Secrets Operator's objects"* && $message == *"septa-apiserver.$ns.svc"* ]]
  }
  wait_for "the operator's objects tried at the Service" 30 operator_tried
  echo "with the operator on: $(plane_message)"
fi

[[ $(api DELETE /v1/tenants/acme/vclusters/train) == 200 ]] || fail "delete virtual cluster"
gone() { [[ $(api GET /v1/tenants/acme/vclusters/train) == 404 ]]; }
wait_for "the virtual cluster gone" 20 gone
k get namespace "$ns" >/dev/null 2>&1 && fail "the host namespace is left behind"
[[ -z $(k get sts,deploy,job,svc,secret -A -l septa.dev/vcluster=train -o name) ]] || fail "control plane objects left behind"
if [[ -n $vaultsim ]]; then
  vault_has sys/mounts septa-acme-x-train-pki && fail "acme/train's Vault PKI mount is left behind"
  vault_has sys/auth septa-acme-x-train-kubernetes && fail "acme/train's Vault auth method is left behind"
fi

kill -TERM "$pid"
wait "$pid" || fail "septad exited non-zero after SIGTERM"
pid=""
echo "septad host control plane e2e: ok"
