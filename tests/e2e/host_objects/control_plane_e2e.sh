#!/usr/bin/env bash
# The rendered control plane of a virtual cluster on a real host (the golden
# file of tests/unit/tenancy/host/golden_control_plane, which
# tenancy_host_test (control_plane_manifests_test.cc) keeps equal to what the renderer produces)
# read by the real kubectl: every object through `apply --dry-run=client` as a
# second parser, then applied server-side to septa-kubesim (with one node, so
# the StatefulSet's and Deployment's pods are scheduled and turn Ready) and
# read back. No kube-apiserver, kine or CoreDNS image runs here: kubesim
# schedules pods and reports them Running without running containers.
# Usage: control_plane_e2e.sh <septa-kubesim> <kubectl> <golden file>
set -uo pipefail
SIM=${1:?septa-kubesim binary}
KUBECTL=${2:-kubectl}
GOLDEN=${3:?golden file}
[[ -x $KUBECTL ]] || KUBECTL=$(command -v kubectl) || { echo "kubectl not found"; exit 1; }

source "$(dirname "${BASH_SOURCE[0]}")/../kubectl/lib.sh"
cat >"$WORK/nodes.yaml" <<'YAML'
nodes:
  - name: cpu-0
    cpu: "16"
    memory: 64Gi
YAML
start_kubesim "$SIM" --inventory "$WORK/nodes.yaml" --pod-start-delay-ms 0

ns=septa-regulated-x-secure
out=$(k create namespace "$ns" 2>&1)
record "host namespace created" $((!$?)) "failed:" "$out"

want=$(k label --local -f "$GOLDEN" septa.dev/probe=1 -o name 2>&1)
count=$(grep -c . <<<"$want")
got=$(k apply --dry-run=client --validate=false -f - -o name <"$GOLDEN" 2>&1)
[[ $got == "$want" && $count -eq 13 ]]
record "kubectl parses all $count objects (apply --dry-run=client)" $((!$?)) "failed:" "$got"
out=$(k apply --server-side --validate=false --field-manager=septa -f "$GOLDEN" 2>&1)
record "applied server-side" $((!$?)) "failed:" "$out"
# Not re-applied here: kubesim's server-side apply keys list items by one
# field (Service ports by none), so a second apply would double the DNS
# Service's two port-53 entries; HostControlPlanes compares before it writes
# and its tests check that a second Ensure writes nothing.

out=$(k rollout status statefulset/septa-control-plane -n "$ns" --timeout=60s 2>&1)
record "control plane StatefulSet rolled out (kubesim reports its pod Ready)" $((!$?)) "failed:" "$out"
out=$(k rollout status deployment/septa-coredns -n "$ns" --timeout=60s 2>&1)
record "CoreDNS Deployment rolled out" $((!$?)) "failed:" "$out"
# kubesim's pods run until annotated otherwise: the Job stays active here.
out=$(k wait --for=jsonpath='{.status.active}'=1 job/septa-control-plane-bootstrap -n "$ns" --timeout=60s 2>&1)
record "bootstrap Job runs its pod" $((!$?)) "failed:" "$out"
expect_eq "one control plane pod, three containers" "septa-control-plane-0 kine kube-apiserver kube-controller-manager" \
  k get pods -n "$ns" -l app.kubernetes.io/name=septa-control-plane \
  -o 'jsonpath={.items[0].metadata.name} {.items[0].spec.containers[*].name}'
expect_eq "kine's endpoint comes from its Secret" "septa-control-plane-kine/endpoint" \
  k get sts septa-control-plane -n "$ns" \
  -o 'jsonpath={.spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.name}/{.spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.key}'
expect_eq "CoreDNS reads its Corefile on the virtual DNS port" ".:1053 {" \
  bash -c "'$KUBECTL' get cm septa-coredns -n $ns -o 'jsonpath={.data.Corefile}' | head -1"
expect_eq "API server Service: 443 -> 6443" "443 6443" \
  k get svc septa-apiserver -n "$ns" -o 'jsonpath={.spec.ports[0].port} {.spec.ports[0].targetPort}'
expect_eq "DNS Service: 53 -> the virtual DNS port" "53 1053" \
  k get svc septa-coredns -n "$ns" -o 'jsonpath={.spec.ports[0].port} {.spec.ports[0].targetPort}'
expect_eq "restricted pod security: non-root, RuntimeDefault seccomp" "true RuntimeDefault" \
  k get sts septa-control-plane -n "$ns" \
  -o 'jsonpath={.spec.template.spec.securityContext.runAsNonRoot} {.spec.template.spec.securityContext.seccompProfile.type}'
expect_eq "every container drops ALL capabilities" "ALL ALL ALL" \
  k get sts septa-control-plane -n "$ns" -o 'jsonpath={.spec.template.spec.containers[*].securityContext.capabilities.drop[0]}'
expect_eq "Septa's field manager owns the StatefulSet" septa \
  k get sts septa-control-plane -n "$ns" --show-managed-fields -o 'jsonpath={.metadata.managedFields[0].manager}'
expect_eq "every object listed by the virtual cluster's labels" 13 \
  bash -c "'$KUBECTL' get sa,secret,cm,svc,networkpolicy,sts,deploy,job -n $ns -l septa.dev/vcluster=secure -o name | wc -l"

finish
