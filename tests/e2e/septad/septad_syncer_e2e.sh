#!/usr/bin/env bash
# The syncer through septad with real kubectl: a virtual cluster made READY
# over REST, a pod applied to its Kubernetes API runs on septad's simulated
# host (schedulerName kai-scheduler there, which the embedded kubesim
# schedules as KAI would); `kubectl get pod -o jsonpath` in the virtual
# cluster shows its phase, IP and node; a virtual delete deletes the host
# pod; a host pod deleted behind Septa's back deletes its virtual pod. The
# config map the pod mounts is copied to the host namespace under the name
# its renamed reference uses, follows an edit, and goes with the pod; an
# event recorded on the host about its pod shows in `kubectl get events`;
# `kubectl expose` puts its service on the host with the host's address; a
# service without a selector and its Endpoints (`kubectl apply`) lead to the
# host pod, and an address that is not one of the tenant's pods is refused;
# a gang's pods get their KAI PodGroup, which goes with the last of them;
# a claim a pod uses (`kubectl apply`) is copied to the host, bound there
# (the test plays the storage provisioner) and shows Bound in `kubectl get
# pvc`, outlives the pod and goes with the claim. septad listens on every
# address and advertises 127.0.0.2: the endpoint, the host pod's
# KUBERNETES_SERVICE_HOST and the host NetworkPolicy's egress say so.
# Then an isolated tenant's `nvidia.com/gpu: 1` pod runs on an H100 of its
# reservation as nvidia.com/mig-3g.40gb: 1 with runtimeClassName nvidia,
# tolerating the sample inventory's dedicated=gpu:NoSchedule taint there;
# `kubectl get nodes` in its virtual cluster shows that node, Ready, with the
# MIG slice as its capacity, until the pod goes.
# Prints how long a pod took from the virtual apply to Running up there.
set -euo pipefail
septad=$1
admin=$2
kubectl=$3
testdb_dir=$4
source "$(dirname "$0")/septad_lib.sh"

db_url=$("$admin" createdb "$testdb_dir" "syncer_e2e_$$_$RANDOM")
vport=$(free_port)
# The listener on every address, advertised at another loopback address:
# the endpoints, the synced pods' API address and the host NetworkPolicy
# name the advertised one.
listener=https://127.0.0.2:$vport
start --database-url "$db_url" --vcluster-addr "0.0.0.0:$vport" --vcluster-advertise-address 127.0.0.2
grep -q "syncer: started" "$log" || fail "the syncer did not start"
token=$(cat "$dir/data/admin.token")
create_acme_train
ready() { [[ $(field "$(get /v1/tenants/acme/vclusters/train)" state) == READY ]]; }
wait_for "READY" 15 ready
ns=$(field "$(get /v1/tenants/acme/vclusters/train)" host_namespace)
[[ $(field "$(get /v1/tenants/acme/vclusters/train)" endpoint) == "$listener/vc/acme/train" ]] ||
  fail "the endpoint is not at the advertised address: $(get /v1/tenants/acme/vclusters/train)"
[[ $(k get networkpolicy septa-allow -n "$ns" -o 'jsonpath={.spec.egress[2].to[0].ipBlock.cidr}:{.spec.egress[2].ports[0].port}') == \
  "127.0.0.2/32:$vport" ]] || fail "the host NetworkPolicy does not let pods reach the listener: $(k get networkpolicy septa-allow -n "$ns" -o json)"

"$admin" kubeconfig "$db_url" "$listener" acme/train >"$dir/train.kubeconfig"
v() { "$kubectl" --request-timeout=10s --kubeconfig "$dir/train.kubeconfig" "$@"; }

cat >"$dir/web.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: default
  labels: {app: web}
spec:
  volumes:
    - name: config
      configMap: {name: web-config}
  containers:
    - name: main
      image: busybox
      volumeMounts:
        - {name: config, mountPath: /etc/web}
      resources:
        requests: {cpu: 100m, memory: 64Mi}
        limits: {cpu: 100m, memory: 64Mi}
YAML
v create configmap web-config --from-literal=mode=fast >/dev/null || fail "kubectl create the config map"
v create configmap unused-config --from-literal=x=y >/dev/null || fail "kubectl create the unused config map"
applied=$(now_ms)
v apply -f "$dir/web.yaml" >/dev/null || fail "kubectl apply the pod in the virtual cluster"
host_pod=web-x-default-x-train
on_host() { k get pod "$host_pod" -n "$ns" -o name >/dev/null 2>&1; }
wait_for "the host pod $ns/$host_pod" 10 on_host
[[ $(k get pod "$host_pod" -n "$ns" -o 'jsonpath={.metadata.labels.septa\.dev/synced}') == true ]] ||
  fail "the host pod lacks septa.dev/synced=true"
api_env=$(k get pod "$host_pod" -n "$ns" -o 'jsonpath={range .spec.containers[0].env[?(@.name=="KUBERNETES_SERVICE_HOST")]}{.value}{end}:{range .spec.containers[0].env[?(@.name=="KUBERNETES_SERVICE_PORT")]}{.value}{end}')
[[ $api_env == "127.0.0.2:$vport" ]] || fail "the host pod reaches its API server at '$api_env'"
[[ $(k get pod "$host_pod" -n "$ns" -o 'jsonpath={.metadata.annotations.septa\.dev/object-uid}') == \
  $(v get pod web -o 'jsonpath={.metadata.uid}') ]] || fail "the host pod does not record the virtual pod's UID"
running_up() { [[ $(v get pod web -o 'jsonpath={.status.phase}') == Running ]]; }
wait_for "the virtual pod Running" 15 running_up
echo "virtual pod Running $(($(now_ms) - applied)) ms after kubectl apply"
node=$(v get pod web -o 'jsonpath={.spec.nodeName}')
[[ -n $node && $node == $(k get pod "$host_pod" -n "$ns" -o 'jsonpath={.spec.nodeName}') ]] ||
  fail "the virtual pod's nodeName '$node' is not the host pod's"
[[ $(v get pod web -o 'jsonpath={.status.podIP}') == $(k get pod "$host_pod" -n "$ns" -o 'jsonpath={.status.podIP}') ]] ||
  fail "the pod IP did not flow up"

# An event about the host pod (as the host's kubelet records one) shows in
# `kubectl get events` of the virtual cluster, about the virtual pod.
k create -n "$ns" -f - >/dev/null <<YAML || fail "kubectl create a host event"
apiVersion: v1
kind: Event
metadata:
  name: $host_pod.17a2b3c4d5e6f708
involvedObject:
  kind: Pod
  apiVersion: v1
  namespace: $ns
  name: $host_pod
type: Normal
reason: Pulled
message: Container image "busybox" already present on machine for $host_pod
count: 1
source:
  component: kubelet
YAML
event_up() {
  [[ $(v get events --field-selector involvedObject.name=web -o 'jsonpath={.items[*].reason}') == *Pulled* ]]
}
wait_for "the host pod's event in the virtual cluster" 10 event_up
[[ $(v get event web.17a2b3c4d5e6f708 -o 'jsonpath={.message}') ==   'Container image "busybox" already present on machine for web' ]] ||
  fail "the virtual event's message still names the host pod: $(v get event web.17a2b3c4d5e6f708 -o json)"

# The config map it mounts is on the host, under the name the host pod uses; an unused one is not.
host_config=web-config-x-default-x-train
[[ $(k get pod "$host_pod" -n "$ns" -o 'jsonpath={.spec.volumes[0].configMap.name}') == "$host_config" ]] ||
  fail "the host pod does not mount $host_config"
[[ $(k get configmap "$host_config" -n "$ns" -o 'jsonpath={.data.mode}') == fast ]] ||
  fail "the config map's host copy $ns/$host_config is missing or differs"
k get configmap unused-config-x-default-x-train -n "$ns" -o name >/dev/null 2>&1 &&
  fail "a config map no pod uses was copied to the host"
v patch configmap web-config --type merge -p '{"data":{"mode":"safe"}}' >/dev/null || fail "kubectl patch the config map"
edited() { [[ $(k get configmap "$host_config" -n "$ns" -o 'jsonpath={.data.mode}') == safe ]]; }
wait_for "the config map's edit on the host" 10 edited

# kubectl expose: the service is on the host, its selector picks the pod's
# host pod (and only that virtual cluster's namespace), and the virtual
# service has the host's cluster IP.
v expose pod web --port 80 --target-port 8080 >/dev/null || fail "kubectl expose the virtual pod"
host_service=web-x-default-x-train
service_synced() {
  local host_ip
  host_ip=$(k get service "$host_service" -n "$ns" -o 'jsonpath={.spec.clusterIP}' 2>/dev/null) &&
    [[ -n $host_ip && $host_ip == "$(v get service web -o 'jsonpath={.spec.clusterIP}' 2>/dev/null)" ]]
}
wait_for "the service on the host, its address in the virtual cluster" 10 service_synced
selector=$(k get service "$host_service" -n "$ns" \
  -o 'go-template={{range $k, $v := .spec.selector}}{{$k}}={{$v}},{{end}}')
[[ $(k get pods -n "$ns" -l "${selector%,}" -o name) == "pod/$host_pod" ]] ||
  fail "the host service's selector $selector does not pick the host pod $host_pod"
v delete service web >/dev/null || fail "kubectl delete the virtual service"
service_gone() { ! k get service "$host_service" -n "$ns" -o name >/dev/null 2>&1; }
wait_for "the host service deleted after the virtual delete" 10 service_gone

# A service without a selector: the tenant's Endpoints lead to the host pod.
pod_ip=$(v get pod web -o 'jsonpath={.status.podIP}')
endpoints() {  # ip: a selector-less service db and its Endpoints at ip
  cat <<YAML
apiVersion: v1
kind: Service
metadata: {name: db}
spec: {ports: [{port: 5432}]}
---
apiVersion: v1
kind: Endpoints
metadata: {name: db}
subsets: [{addresses: [{ip: "$1"}], ports: [{port: 5432}]}]
YAML
}
endpoints "$pod_ip" | v apply -f - >/dev/null || fail "kubectl apply a service without a selector and its endpoints"
endpoints_synced() {
  [[ $(k get endpoints db-x-default-x-train -n "$ns" -o 'jsonpath={.subsets[0].addresses[0].targetRef.name}' \
    2>/dev/null) == "$host_pod" ]]
}
wait_for "the endpoints on the host, leading to the host pod" 10 endpoints_synced
endpoints 10.96.0.1 | v apply -f - >/dev/null || fail "kubectl apply endpoints at the API server's address"
endpoints_refused() {
  v get events --field-selector reason=SyncRefused -o 'jsonpath={range .items[*]}{.involvedObject.kind}:{.message}{"\n"}{end}' |
    grep -q '^Endpoints:subsets\[0\].addresses\[0\].ip: 10.96.0.1 is not the address of a live pod of this virtual cluster' &&
    ! k get endpoints db-x-default-x-train -n "$ns" -o name >/dev/null 2>&1
}
wait_for "endpoints at another's address refused with an event, the host copy gone" 10 endpoints_refused
v delete service db >/dev/null || fail "kubectl delete service db"

# A gang: two workers annotated as gang allreduce of 2 have a KAI PodGroup
# on the host (minMember 2), name it, and it goes with the last of them.
for worker in worker-0 worker-1; do
  v run "$worker" --image busybox --restart Never --annotations septa.dev/gang=allreduce \
    --annotations septa.dev/gang-size=2 --overrides \
    '{"spec":{"containers":[{"name":"main","image":"busybox","resources":{"requests":{"cpu":"50m","memory":"32Mi"},"limits":{"cpu":"50m","memory":"32Mi"}}}]}}' \
    >/dev/null || fail "kubectl run $worker"
done
group=allreduce-x-default-x-train
gang_on_host() {
  [[ $(k get podgroups.scheduling.run.ai "$group" -n "$ns" -o 'jsonpath={.spec.minMember}' 2>/dev/null) == 2 &&
    $(k get pod worker-1-x-default-x-train -n "$ns" -o 'jsonpath={.metadata.annotations.pod-group-name}' \
      2>/dev/null) == "$group" ]]
}
wait_for "the gang's PodGroup on the host, its members naming it" 10 gang_on_host
v delete pod worker-0 worker-1 --wait=false >/dev/null || fail "kubectl delete the workers"
gang_gone() { ! k get podgroups.scheduling.run.ai "$group" -n "$ns" -o name >/dev/null 2>&1; }
wait_for "the gang's PodGroup deleted with its last member" 15 gang_gone

# A claim and a pod that mounts it: the claim's copy is on the host, its
# binding there shows in the virtual cluster, and only deleting the claim
# deletes the copy (it holds the data).
cat <<'YAML' | v apply -f - >/dev/null || fail "kubectl apply a claim and its pod"
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: db, namespace: default}
spec:
  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
  containers:
    - name: main
      image: busybox
      volumeMounts: [{name: data, mountPath: /data}]
      resources: {requests: {cpu: 50m, memory: 32Mi}, limits: {cpu: 50m, memory: 32Mi}}
YAML
host_claim=data-x-default-x-train
claim_on_host() {
  [[ $(k get pvc "$host_claim" -n "$ns" -o 'jsonpath={.spec.resources.requests.storage}' 2>/dev/null) == 1Gi &&
    $(k get pod db-x-default-x-train -n "$ns" -o 'jsonpath={.spec.volumes[0].persistentVolumeClaim.claimName}' \
      2>/dev/null) == "$host_claim" ]]
}
wait_for "the claim's host copy, the host pod mounting it" 10 claim_on_host
k patch pvc "$host_claim" -n "$ns" --subresource=status --type=merge \
  -p '{"status":{"phase":"Bound","accessModes":["ReadWriteOnce"],"capacity":{"storage":"1Gi"}}}' >/dev/null ||
  fail "kubectl patch the host claim's status"
claim_bound() { [[ $(v get pvc data -o 'jsonpath={.status.phase}/{.status.capacity.storage}') == Bound/1Gi ]]; }
wait_for "the virtual claim Bound" 10 claim_bound
v delete pod db --wait=false >/dev/null || fail "kubectl delete pod db"
db_gone() { ! k get pod db-x-default-x-train -n "$ns" -o name >/dev/null 2>&1; }
wait_for "db's host pod deleted" 10 db_gone
k get pvc "$host_claim" -n "$ns" -o name >/dev/null 2>&1 || fail "the claim's copy went with its pod"
v delete pvc data --wait=false >/dev/null || fail "kubectl delete pvc data"
claim_gone() { ! k get pvc "$host_claim" -n "$ns" -o name >/dev/null 2>&1; }
wait_for "the claim's host copy deleted with the claim" 10 claim_gone

# Virtual delete -> host delete, the config map's copy with it.
v delete pod web --wait=false >/dev/null || fail "kubectl delete the virtual pod"
host_gone() { ! on_host; }
wait_for "the host pod deleted after the virtual delete" 10 host_gone
config_gone() { ! k get configmap "$host_config" -n "$ns" -o name >/dev/null 2>&1; }
wait_for "the config map's host copy deleted with its last pod" 10 config_gone

# Host pod deleted behind Septa's back -> the started virtual pod is deleted, not recreated.
v apply -f "$dir/web.yaml" >/dev/null || fail "kubectl apply the pod again"
wait_for "the virtual pod Running again" 15 running_up
k delete pod "$host_pod" -n "$ns" --wait=false >/dev/null || fail "kubectl delete the host pod"
virtual_gone() { ! v get pod web -o name >/dev/null 2>&1; }
wait_for "the virtual pod deleted after its host pod went" 10 virtual_gone
sleep 0.5  # a recreated host pod would show by now: the syncer acts within milliseconds
on_host && fail "the host pod was created again for a deleted virtual pod"

[[ $(api DELETE /v1/tenants/acme/vclusters/train) == 200 ]] || fail "delete the virtual cluster"

# An isolated tenant's `nvidia.com/gpu: 1` runs on an H100 MIG slice of its reservation.
[[ $(api POST /v1/tenants '{"name":"iso","trust_tier":"isolated"}') == 201 ]] || fail "create tenant iso"
[[ $(api POST /v1/tenants/iso/vclusters \
  '{"name":"infer","capacity":{"mig":[{"profile":"3g.40gb","count":1,"model":"H100-80GB"}]},"quota":{"cpu_milli":4000,"memory_mib":8192,"pods":20}}') == 201 ]] ||
  fail "create virtual cluster iso/infer"
iso_ready() { [[ $(field "$(get /v1/tenants/iso/vclusters/infer)" state) == READY ]]; }
wait_for "iso/infer READY" 30 iso_ready
iso_ns=$(field "$(get /v1/tenants/iso/vclusters/infer)" host_namespace)
"$admin" kubeconfig "$db_url" "$listener" iso/infer >"$dir/infer.kubeconfig"
vi() { "$kubectl" --request-timeout=10s --kubeconfig "$dir/infer.kubeconfig" "$@"; }
cat >"$dir/gpu.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: llm
  namespace: default
spec:
  containers:
    - name: main
      image: busybox
      resources:
        limits: {nvidia.com/gpu: 1, cpu: 500m, memory: 256Mi}
YAML
vi apply -f "$dir/gpu.yaml" >/dev/null || fail "kubectl apply the GPU pod in iso/infer"
gpu_running() { [[ $(vi get pod llm -o 'jsonpath={.status.phase}') == Running ]]; }
begun_gpu=$(now_ms)
until gpu_running; do
  (($(now_ms) - begun_gpu < 20000)) || fail "the GPU pod Running not within 20 s: virtual $(vi get pod llm -o json); host $(k get pods -n "$iso_ns" -o json)"
  sleep 0.05
done
gpu_host=llm-x-default-x-infer
[[ $(k get pod "$gpu_host" -n "$iso_ns" -o 'jsonpath={.spec.containers[0].resources.limits.nvidia\.com/mig-3g\.40gb}') == 1 ]] ||
  fail "the host pod does not ask for nvidia.com/mig-3g.40gb: 1: $(k get pod "$gpu_host" -n "$iso_ns" -o json)"
[[ $(k get pod "$gpu_host" -n "$iso_ns" -o 'jsonpath={.spec.runtimeClassName}') == nvidia ]] ||
  fail "the host pod's runtimeClassName is not nvidia"
gpu_node=$(k get pod "$gpu_host" -n "$iso_ns" -o 'jsonpath={.spec.nodeName}')
[[ $(k get node "$gpu_node" -o 'jsonpath={.metadata.labels.nvidia\.com/gpu\.product}') == *H100* ]] ||
  fail "the GPU pod runs on $gpu_node, not an H100"
[[ $(vi get pod llm -o 'jsonpath={.spec.nodeName}') == "$gpu_node" ]] || fail "the GPU pod's node did not flow up"
# `kubectl get nodes` in the virtual cluster: that node, with the MIG slice the tenant holds as its capacity.
node_shown() { [[ $(vi get nodes -o 'jsonpath={.items[*].metadata.name}') == "$gpu_node" ]]; }
wait_for "the virtual node $gpu_node" 10 node_shown
[[ $(vi get node "$gpu_node" -o 'jsonpath={.status.capacity.nvidia\.com/mig-3g\.40gb}') == 1 ]] ||
  fail "the virtual node does not show the reserved MIG slice: $(vi get node "$gpu_node" -o json)"
[[ -z $(vi get node "$gpu_node" -o 'jsonpath={.status.capacity.nvidia\.com/gpu}') ]] ||
  fail "the virtual node shows whole GPUs to an isolated tenant"
[[ $(vi get nodes --no-headers | awk '{print $2}') == Ready ]] || fail "the virtual node is not Ready: $(vi get nodes)"
[[ $(vi get node "$gpu_node" -o 'jsonpath={.metadata.labels.nvidia\.com/gpu\.product}') == *H100* ]] ||
  fail "the virtual node does not name its GPU product"
vi delete pod llm --wait=false >/dev/null || fail "kubectl delete the GPU pod"
node_gone() { [[ -z $(vi get nodes -o 'jsonpath={.items[*].metadata.name}') ]]; }
wait_for "the virtual node gone with its last pod" 15 node_gone
echo "ok"
