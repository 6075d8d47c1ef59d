# M1: an init container with restartPolicy Always (a sidecar) holds its GPU
# beside the pod's containers, but the syncer counted max(containers, init
# containers): its assignment named one GPU while the host's scheduler and
# quota held two, and a node ended with 9 of 8 GPUs allocated. The syncer
# now counts as kube-scheduler does, so what the assignments name is what
# the host holds.

m1_assigned() {  # the GPUs the host pods' assignments name, summed
  k get pods -n "$1" -o json | python3 -c '
import json, sys
pods = json.load(sys.stdin)["items"]
print(sum(len(json.loads(p["metadata"].get("annotations", {}).get("septa.dev/assignment", "{}")).get("gpus", []))
          for p in pods if p.get("status", {}).get("phase") not in ("Succeeded", "Failed")))'
}

m1_held() {  # what the host's quota holds of the namespace's GPUs
  k get resourcequota -n "$1" -o 'jsonpath={.items[*].status.used.requests\.nvidia\.com/gpu}' | tr ' ' '\n' |
    grep -m1 . || echo 0
}

hostile_case() {
  tenant gwen dedicated
  vcluster gwen g1 '{"gpus":{"model":"A100-80GB","count":2}}'
  local ns
  ns=$(host_ns gwen g1)
  # Restricted, with a GPU sidecar beside a GPU container: two GPUs at once.
  restricted_pod duo 'nvidia.com/gpu: 1' | python3 -c '
import sys
text = sys.stdin.read()
sidecar = """  initContainers:
    - name: proxy
      image: busybox
      restartPolicy: Always
      securityContext:
        allowPrivilegeEscalation: false
        capabilities: {drop: [ALL]}
      resources:
        limits: {cpu: 100m, memory: 64Mi, nvidia.com/gpu: 1}
"""
print(text.replace("  containers:\n", sidecar + "  containers:\n"), end="")' |
    vk gwen g1 apply -f - >/dev/null || fail "apply the sidecar pod"
  m1_decided() {
    k get pod duo-x-default-x-g1 -n "$ns" -o name >/dev/null 2>&1 ||
      vk gwen g1 get events --field-selector reason=SyncRefused,involvedObject.name=duo \
        -o 'jsonpath={.items[*].message}' | grep -q '2 GPUs requested'
  }
  wait_for "the sidecar pod placed on 2 GPUs or refused for want of 2 on one node" 15 m1_decided
  if k get pod duo-x-default-x-g1 -n "$ns" -o name >/dev/null 2>&1; then
    [[ $(m1_assigned "$ns") == 2 ]] || fail "the sidecar pod's assignment names $(m1_assigned "$ns") GPUs, not 2"
    # Both reserved GPUs are the sidecar pod's: a third is refused, not over-committed.
    restricted_pod solo 'nvidia.com/gpu: 1' | vk gwen g1 apply -f - >/dev/null || fail "apply the one-GPU pod"
    m1_solo_refused() {
      vk gwen g1 get events --field-selector reason=SyncRefused,involvedObject.name=solo \
        -o 'jsonpath={.items[*].message}' | grep -q 'the reservation has 0 free of 2'
    }
    wait_for "a third GPU refused" 15 m1_solo_refused
  fi
  # The host holds exactly what the assignments name.
  m1_agree() { [[ $(m1_held "$ns") == $(m1_assigned "$ns") ]]; }
  wait_for "the host's quota to hold what the assignments name" 10 m1_agree
  [[ $(api DELETE /v1/tenants/gwen/vclusters/g1) == 200 ]] || fail "delete g1: $(reply)"
}
