#!/usr/bin/env bash
# The rendered host objects (the golden files of tests/unit/tenancy/host,
# which tenancy_host_test keeps equal to what the renderer produces) read by
# the real kubectl: every object through `apply --dry-run=client` as a
# second parser, then applied server-side to septa-kubesim with Septa's field
# manager and read back.
# Usage: host_objects_e2e.sh <septa-kubesim> <kubectl> <golden dir> <crds.yaml>
set -uo pipefail
SIM=${1:?septa-kubesim binary}
KUBECTL=${2:-kubectl}
GOLDEN=${3:?golden dir}
CRDS=${4:?crds.yaml}
[[ -x $KUBECTL ]] || KUBECTL=$(command -v kubectl) || { echo "kubectl not found"; exit 1; }

source "$(dirname "${BASH_SOURCE[0]}")/../kubectl/lib.sh"
start_kubesim "$SIM"

# The scheduler kinds are served once their CRDs exist (kubesim answers
# discovery from its live CRD list, so the create is all it takes).
out=$(k apply --server-side -f "$CRDS" 2>&1)
record "scheduler CRDs created" $((!$?)) "failed:" "$out"

mapfile -t files < <(find "$GOLDEN" -name '*.json' ! -name '*-nodes.json' | sort)
((${#files[@]} == 12)) || record "12 golden object files (4 tiers x 3 schedulers)" 0 "found ${#files[@]}" ""

for f in "${files[@]}"; do
  name=$(basename "$f" .json)
  # What the file holds, as kubectl reads it offline...
  want=$(k label --local -f "$f" septa.dev/probe=1 -o name 2>&1)
  count=$(grep -c . <<<"$want")
  # ...and every object of it through client-side dry-run apply, from stdin.
  got=$(k apply --dry-run=client --validate=false -f - -o name <"$f" 2>&1)
  [[ $got == "$want" && $count -ge 8 ]]
  record "$name: kubectl parses all $count objects (apply --dry-run=client)" $((!$?)) "failed:" "$got"
  out=$(k apply --server-side --validate=false --field-manager=septa -f "$f" 2>&1)
  record "$name: applied server-side" $((!$?)) "failed:" "$out"
  # Applying the same objects again changes nothing.
  out=$(k diff --server-side --field-manager=septa -f "$f" 2>&1)
  record "$name: re-apply is a no-op (kubectl diff)" $((!$?)) "failed:" "$out"
done

# Read back what matters, from the server.
ns=septa-acme-x-train
expect_eq "isolated: namespace enforces baseline" baseline \
  k get ns "$ns" -o 'jsonpath={.metadata.labels.pod-security\.kubernetes\.io/enforce}'
expect_eq "exclusive: namespace enforces restricted" restricted \
  k get ns septa-regulated-x-secure -o 'jsonpath={.metadata.labels.pod-security\.kubernetes\.io/enforce}'
expect_eq "isolated: quota counts the 3g.40gb instances" 2 \
  k get resourcequota septa-quota -n "$ns" -o 'jsonpath={.spec.hard.requests\.nvidia\.com/mig-3g\.40gb}'
expect_eq "exclusive: quota counts the reserved nodes' GPUs" 12 \
  k get quota septa-quota -n septa-regulated-x-secure -o 'jsonpath={.spec.hard.requests\.nvidia\.com/gpu}'
expect_eq "limit range defaults" "100m 1500m" \
  k get limitrange septa-limits -n "$ns" -o 'jsonpath={.spec.limits[0].defaultRequest.cpu} {.spec.limits[0].default.cpu}'
expect_eq "network policies" "septa-allow septa-default-deny" \
  k get networkpolicy -n "$ns" -o 'jsonpath={.items[*].metadata.name}'
expect_eq "workload service account mounts no token" false \
  k get sa septa-workload -n "$ns" -o 'jsonpath={.automountServiceAccountToken}'
expect_eq "syncer bound to its role" "Role/septa-syncer septa-syncer" \
  k get rolebinding septa-syncer -n "$ns" -o 'jsonpath={.roleRef.kind}/{.roleRef.name} {.subjects[0].name}'
expect_eq "KAI leaf queue under its tier's queue, 8 GPU units" "septa-tier-isolated 8" \
  k get queues.scheduling.run.ai "$ns" -o 'jsonpath={.spec.parentQueue} {.spec.resources.gpu.quota}'
expect_eq "KAI: shared fractions as decimals" 0.75 \
  k get queues.scheduling.run.ai septa-acme-x-notebooks -o 'jsonpath={.spec.resources.gpu.quota}'
expect_eq "Kueue cluster queue in the tenant's cohort" "acme $ns" \
  k get clusterqueues.kueue.x-k8s.io "$ns" \
  -o 'jsonpath={.spec.cohortName} {.spec.namespaceSelector.matchLabels.kubernetes\.io/metadata\.name}'
expect_eq "exclusive: Kueue workload priority class" 200 \
  k get workloadpriorityclasses.kueue.x-k8s.io septa-regulated-x-secure -o 'jsonpath={.value}'
expect_eq "Kueue local queue" "$ns" \
  k get localqueues.kueue.x-k8s.io septa -n "$ns" -o 'jsonpath={.spec.clusterQueue}'
expect_eq "Septa's field manager owns the quota" septa \
  k get quota septa-quota -n "$ns" --show-managed-fields -o 'jsonpath={.metadata.managedFields[0].manager}'
expect_eq "managed objects listed by tenant label" "septa-acme-x-notebooks septa-acme-x-train" \
  k get ns -l septa.dev/tenant=acme -o 'jsonpath={.items[*].metadata.name}'

finish
