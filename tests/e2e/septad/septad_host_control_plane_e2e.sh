#!/usr/bin/env bash
# septad with `control_plane: host` on its simulated host: a virtual cluster
# created over REST gets a stock control plane in its host namespace (the
# StatefulSet of kube-apiserver, kine and kube-controller-manager, CoreDNS,
# the Services and Secrets; read back with kubectl) and turns READY once
# kubesim reports the control plane pod ready, with the endpoint of the API
# server's Service; DELETE removes it all. kubesim runs no container, so
# nothing answers at that endpoint here: this is as far as these machines go.
set -euo pipefail
septad=$1
source "$(dirname "$0")/septad_lib.sh"

start --control-plane host --control-plane-database-address postgres.septa-system.svc:5432 \
  --control-plane-database-sslmode disable
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

[[ $(api DELETE /v1/tenants/acme/vclusters/train) == 200 ]] || fail "delete virtual cluster"
gone() { [[ $(api GET /v1/tenants/acme/vclusters/train) == 404 ]]; }
wait_for "the virtual cluster gone" 20 gone
k get namespace "$ns" >/dev/null 2>&1 && fail "the host namespace is left behind"
[[ -z $(k get sts,deploy,job,svc,secret -A -l septa.dev/vcluster=train -o name) ]] || fail "control plane objects left behind"

kill -TERM "$pid"
wait "$pid" || fail "septad exited non-zero after SIGTERM"
pid=""
echo "septad host control plane e2e: ok"
