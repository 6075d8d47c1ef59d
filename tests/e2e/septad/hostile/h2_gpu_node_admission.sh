# H2: a tenant must not reach a GPU node it holds nothing on. Before the
# fix, an isolated tenant's CPU pod pinned to a dedicated tenant's A100 node
# with `cpu: 63, memory: 500Gi` ran there and left that tenant's new GPU pod
# Pending; a toleration of the platform's GPU taint put CPU pods on H100s.

h2_refusal() {  # TENANT VCLUSTER POD: the SyncRefused messages about POD
  vk "$1" "$2" get events --field-selector "reason=SyncRefused,involvedObject.name=$3" \
    -o 'jsonpath={range .items[*]}{.message}{"\n"}{end}'
}

hostile_case() {
  tenant h2victim dedicated
  vcluster h2victim g1 '{"gpus":{"model":"A100-80GB","count":1}}'
  local node
  node=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["reservation"]["gpus"][0]["node"])' \
    "$(get /v1/tenants/h2victim/vclusters/g1)")
  tenant hank isolated
  vcluster hank m1 '{"mig":[{"profile":"3g.40gb","count":1}]}'
  local ns_m
  ns_m=$(host_ns hank m1)

  # The CPU hog pinned to the victim's node: it never lands there.
  restricted_pod hog 'cpu: "63"' 'memory: 500Gi' |
    sed "s|^spec:|spec:\n  nodeSelector: {kubernetes.io/hostname: $node}|" | vk hank m1 apply -f - >/dev/null ||
    fail "apply the CPU hog"
  # A CPU pod tolerating the H100s' dedicated=gpu taint: the toleration does not reach the host.
  restricted_pod tolerant |
    sed 's|^spec:|spec:\n  tolerations: [{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}]|' |
    vk hank m1 apply -f - >/dev/null || fail "apply the tolerant pod"
  h2_on_host() { k get pod "$1-x-default-x-m1" -n "$ns_m" -o name >/dev/null 2>&1; }
  wait_for "hank's host pods" 15 h2_on_host hog
  wait_for "hank's host pods" 15 h2_on_host tolerant
  h2_running() { [[ $(k get pod tolerant-x-default-x-m1 -n "$ns_m" -o 'jsonpath={.status.phase}') == Running ]]; }
  wait_for "the tolerant pod Running" 15 h2_running
  local where
  where=$(k get pod tolerant-x-default-x-m1 -n "$ns_m" -o 'jsonpath={.spec.nodeName}')
  [[ -z $(k get node "$where" -o 'jsonpath={.metadata.labels.nvidia\.com/gpu\.product}') ]] ||
    fail "a CPU pod runs on GPU node $where"
  [[ $(k get pod tolerant-x-default-x-m1 -n "$ns_m" -o 'jsonpath={.spec.tolerations[*].key}') != *dedicated* ]] ||
    fail "the platform's taint is tolerated on the host: $(k get pod tolerant-x-default-x-m1 -n "$ns_m" -o json)"

  # The victim's new GPU pod (4 CPUs, 32 GiB: within its share of the node) runs on its node.
  restricted_pod train 'nvidia.com/gpu: 1' 'cpu: "4"' 'memory: 32Gi' | vk h2victim g1 apply -f - >/dev/null ||
    fail "apply the victim's GPU pod"
  h2_victim_running() { [[ $(vk h2victim g1 get pod train -o 'jsonpath={.status.phase}') == Running ]]; }
  wait_for "the victim's GPU pod Running beside the hog" 20 h2_victim_running
  [[ $(k get pod hog-x-default-x-m1 -n "$ns_m" -o 'jsonpath={.spec.nodeName}') != "$node" ]] ||
    fail "the CPU hog runs on the victim's node $node"

  # A GPU pod may not take more of a node's CPU than its holder's share.
  restricted_pod greedy 'nvidia.com/gpu: 1' 'cpu: "60"' | vk hank m1 apply -f - >/dev/null ||
    fail "apply the greedy GPU pod"
  h2_refused() { [[ $(h2_refusal hank m1 greedy) == *"requests[cpu]"*"share of node"* ]]; }
  wait_for "the greedy GPU pod refused naming its CPU request" 15 h2_refused
  vk hank m1 delete pod hog tolerant greedy --wait=false >/dev/null
  vk h2victim g1 delete pod train --wait=false >/dev/null
}
