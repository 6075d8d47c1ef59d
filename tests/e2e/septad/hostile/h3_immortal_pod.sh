# H3: a tenant's pod labelled `app.kubernetes.io/managed-by: septa` was
# taken for Septa's own and ran on through sleep; with the reservation
# released, its MIG slice went to another tenant as well. Septa's keys are
# refused at creation and never copied later, sleep stops every pod of the
# tenant, and the slice is released only once the host admits no new pod
# and none is left.

hostile_case() {
  tenant ivy isolated
  vcluster ivy e1 '{"mig":[{"profile":"3g.40gb","count":1}]}'
  local ns
  ns=$(host_ns ivy e1)
  restricted_pod immortal 'nvidia.com/gpu: 1' |
    sed 's|^  name: immortal|  name: immortal\n  labels: {app.kubernetes.io/managed-by: septa}|' |
    vk ivy e1 apply -f - >/dev/null || fail "apply the labelled pod"
  h3_refused() {
    vk ivy e1 get events --field-selector reason=SyncRefused,involvedObject.name=immortal \
      -o 'jsonpath={.items[*].message}' | grep -q 'app.kubernetes.io/managed-by'
  }
  wait_for "the labelled pod refused naming the label" 15 h3_refused
  k get pod immortal-x-default-x-e1 -n "$ns" -o name >/dev/null 2>&1 && fail "the labelled pod reached the host"

  # Labelled once it runs: the label never reaches its host pod.
  restricted_pod worker 'nvidia.com/gpu: 1' | vk ivy e1 apply -f - >/dev/null || fail "apply the worker"
  h3_running() { [[ $(vk ivy e1 get pod worker -o 'jsonpath={.status.phase}') == Running ]]; }
  wait_for "the worker Running" 20 h3_running
  vk ivy e1 label pod worker app.kubernetes.io/managed-by=septa septa.dev/synced=false >/dev/null ||
    fail "label the worker"
  vk ivy e1 annotate pod worker probe=1 >/dev/null || fail "annotate the worker"
  h3_probe_copied() { [[ $(k get pod worker-x-default-x-e1 -n "$ns" -o 'jsonpath={.metadata.annotations.probe}') == 1 ]]; }
  wait_for "a later annotation copied to the host pod" 10 h3_probe_copied
  [[ -z $(k get pod worker-x-default-x-e1 -n "$ns" -o 'jsonpath={.metadata.labels.app\.kubernetes\.io/managed-by}') ]] ||
    fail "Septa's ownership label reached the running host pod"
  [[ $(k get pod worker-x-default-x-e1 -n "$ns" -o 'jsonpath={.metadata.labels.septa\.dev/synced}') == true ]] ||
    fail "the tenant overwrote septa.dev/synced on the host pod"

  # Sleep: no pod of the tenant left, the namespace closed, the slice released.
  [[ $(api POST /v1/tenants/ivy/vclusters/e1:sleep '{}') == 200 ]] || fail "sleep e1: $(reply)"
  h3_asleep() {
    local vc; vc=$(get /v1/tenants/ivy/vclusters/e1)
    [[ $(condition "$vc" Sleeping) == True && $(condition "$vc" CapacityReady reason) == ReleasedWhileSleeping ]]
  }
  wait_for "e1 asleep with its reservation released" 20 h3_asleep
  [[ -z $(k get pods -n "$ns" -o name) ]] || fail "pods survive sleep: $(k get pods -n "$ns" -o name)"
  [[ $(k get resourcequota septa-quota -n "$ns" -o 'jsonpath={.status.hard.pods}') == 0 ]] ||
    fail "the sleeping namespace admits pods: $(k get resourcequota septa-quota -n "$ns" -o json)"
  [[ $(api DELETE /v1/tenants/ivy/vclusters/e1) == 200 ]] || fail "delete e1: $(reply)"
}
