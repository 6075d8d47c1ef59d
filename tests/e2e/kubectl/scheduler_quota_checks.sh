# Sourced by kubectl_e2e.sh (its k/expect/expect_fail helpers and $WORK): the
# KAI-Scheduler and Kueue kinds kubesim installs at start, and ResourceQuota /
# LimitRange admission of pods, through the real kubectl.
cat >"$WORK/kai.yaml" <<'YAML'
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: tier-shared}
spec: {resources: {gpu: {quota: -1, limit: -1, overQuotaWeight: 1}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: acme-dev}
spec:
  parentQueue: tier-shared
  resources:
    gpu: {quota: 2, limit: 2, overQuotaWeight: 1}
    cpu: {quota: 8000, limit: -1, overQuotaWeight: 1}
    memory: {quota: 64000, limit: -1, overQuotaWeight: 1}
YAML
cat >"$WORK/kueue.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
spec: {nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: acme-dev}
spec:
  cohortName: acme
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: team}}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources: [{name: nvidia.com/gpu, nominalQuota: 2}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: default, namespace: team}
spec: {clusterQueue: acme-dev}
YAML
cat >"$WORK/quota.yaml" <<'YAML'
apiVersion: v1
kind: ResourceQuota
metadata: {name: team-quota, namespace: team}
spec:
  hard:
    pods: "3"
    requests.cpu: "1"
    requests.memory: 1Gi
    limits.cpu: "2"
    limits.memory: 2Gi
    requests.nvidia.com/gpu: "1"
YAML
cat >"$WORK/limits.yaml" <<'YAML'
apiVersion: v1
kind: LimitRange
metadata: {name: defaults, namespace: team}
spec:
  limits:
  - type: Container
    default: {cpu: 500m, memory: 256Mi}
    defaultRequest: {cpu: 250m, memory: 128Mi}
YAML
# run_pod <name> <resources JSON>: kubectl run with the container's resources.
run_pod() {
  k -n team run "$1" --image=busybox --restart=Never \
    --overrides="{\"spec\":{\"containers\":[{\"name\":\"$1\",\"image\":\"busybox\",\"resources\":$2}]}}"
}

expect "KAI Queue CRD installed at start" "queues.scheduling.run.ai" k get crd
expect "Kueue ClusterQueue CRD installed at start" "clusterqueues.kueue.x-k8s.io" k get crd
expect "KAI queues created" "queue.scheduling.run.ai/acme-dev created" k create -f "$WORK/kai.yaml"
expect "get queues.scheduling.run.ai" "acme-dev" k get queues.scheduling.run.ai
expect "leaf queue's parent" "tier-shared" k get queues.scheduling.run.ai acme-dev -o 'jsonpath={.spec.parentQueue}'
expect "create namespace team" "namespace/team created" k create namespace team
expect "Kueue objects created" "localqueue.kueue.x-k8s.io/default created" k create -f "$WORK/kueue.yaml"
expect "get clusterqueues" "acme-dev" k get clusterqueues
expect "ClusterQueue cohort" "acme" k get cq acme-dev -o 'jsonpath={.spec.cohortName}'
expect "get localqueues.kueue.x-k8s.io" "default" k -n team get localqueues.kueue.x-k8s.io
expect "get resourceflavors" "h100" k get resourceflavors
expect "quota created" "resourcequota/team-quota created" k create -f "$WORK/quota.yaml"
expect "quota status.hard kept by the quota controller" "1Gi" \
  k -n team get quota team-quota -o 'jsonpath={.status.hard.requests\.memory}'
expect "a pod that sets nothing is refused while cpu/memory are under quota" \
  'pods "bare" is forbidden: failed quota: team-quota: must specify limits.cpu for: bare; limits.memory for: bare; requests.cpu for: bare; requests.memory for: bare' \
  run_pod bare '{}'
expect "LimitRange created" "limitrange/defaults created" k create -f "$WORK/limits.yaml"
expect "the same pod with LimitRange defaults" "pod/bare created" run_pod bare '{}'
expect "defaultRequest became its request" "250m" k -n team get pod bare -o 'jsonpath={.spec.containers[0].resources.requests.cpu}'
expect "default became its limit" "256Mi" k -n team get pod bare -o 'jsonpath={.spec.containers[0].resources.limits.memory}'
expect "quota status.used charged" "250m" k -n team get quota team-quota -o 'jsonpath={.status.used.requests\.cpu}'
expect "describe quota shows used and hard" "requests.cpu             250m   1" k -n team describe quota team-quota
expect "over the cpu quota: refused with the API server's words" \
  'Error from server (Forbidden): pods "big" is forbidden: exceeded quota: team-quota, requested: requests.cpu=1, used: requests.cpu=250m, limited: requests.cpu=1' \
  run_pod big '{"requests":{"cpu":"1"},"limits":{"cpu":"1"}}'
expect_fail "the refused pod was not stored" k -n team get pod big
expect "over the GPU quota: refused" \
  'pods "gpu" is forbidden: exceeded quota: team-quota, requested: requests.nvidia.com/gpu=2, used: requests.nvidia.com/gpu=0, limited: requests.nvidia.com/gpu=1' \
  run_pod gpu '{"limits":{"nvidia.com/gpu":"2"}}'
expect "one GPU fits" "pod/gpu created" run_pod gpu '{"limits":{"nvidia.com/gpu":"1"}}'
expect "third pod fits" "pod/third created" run_pod third '{}'
expect "over the pod count: refused" \
  'pods "fourth" is forbidden: exceeded quota: team-quota, requested: pods=1, used: pods=3, limited: pods=3' \
  run_pod fourth '{}'
expect "delete a pod" 'pod "third" deleted' k -n team delete pod third
expect "its share is given back" "2" k -n team get quota team-quota -o 'jsonpath={.status.used.pods}'
expect "now the fourth fits" "pod/fourth created" run_pod fourth '{}'

# --no-scheduler-crds: a second kubesim without them.
BARE_KUBECONFIG=$WORK/bare-kubeconfig
"$SIM" --listen 127.0.0.1:0 --no-scheduler-crds --kubeconfig-out "$BARE_KUBECONFIG" >"$WORK/bare-sim.log" 2>&1 &
BARE_PID=$!
for _ in $(seq 100); do [[ -s $BARE_KUBECONFIG ]] && break; sleep 0.05; done
expect "--no-scheduler-crds: no CRDs at start" "No resources found" \
  "$KUBECTL" --request-timeout=10s --kubeconfig "$BARE_KUBECONFIG" get crd
expect "--no-scheduler-crds: queues.scheduling.run.ai not served" "doesn't have a resource type" \
  "$KUBECTL" --request-timeout=10s --kubeconfig "$BARE_KUBECONFIG" get queues.scheduling.run.ai
kill "$BARE_PID" 2>/dev/null
wait "$BARE_PID" 2>/dev/null
