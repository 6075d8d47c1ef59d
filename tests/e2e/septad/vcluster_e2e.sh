#!/usr/bin/env bash
# The simulated virtual control planes through septad with the real kubectl:
# two virtual clusters on septad's one listener (kubeconfigs with admin
# tokens from septa-vcp-admin), `get ns`, `create`, `apply --server-side`,
# `get -w`, `create deployment` (pods stay Pending: no nodes), one virtual
# cluster's token refused by the other (401), and every object still there
# after septad is killed with SIGKILL and started again on the same database
# (the test run's PostgreSQL, CTest fixture "postgres").
set -euo pipefail
septad=$1
admin=$2
kubectl=$3
testdb_dir=$4
source "$(dirname "$0")/septad_lib.sh"

db_url=$("$admin" createdb "$testdb_dir" "vcluster_e2e_$$_$RANDOM")
vport=$(free_port)
# No provisioner: these control planes are stored by septa-vcp-admin without
# virtual-cluster rows, which a provisioner removes as orphans (a restarted
# septad holds its leases at once, so it would, before the checks below).
listener=https://127.0.0.1:$vport
start --database-url "$db_url" --vcluster-addr "127.0.0.1:$vport" --provisioner false
grep -q "virtual control planes serving $listener/vc/<tenant>/<vcluster>" "$log" || fail "listener not logged"

"$admin" kubeconfig "$db_url" "$listener" acme/dev >"$dir/dev.kubeconfig"
"$admin" kubeconfig "$db_url" "$listener" acme/prod >"$dir/prod.kubeconfig"
dev() { "$kubectl" --request-timeout=10s --kubeconfig "$dir/dev.kubeconfig" "$@"; }
prod() { "$kubectl" --request-timeout=10s --kubeconfig "$dir/prod.kubeconfig" "$@"; }

# Reads: the namespaces every cluster has.
out=$(dev get ns -o name) || fail "kubectl get ns: $out"
for ns in default kube-system kube-public kube-node-lease; do
  grep -qx "namespace/$ns" <<<"$out" || fail "namespace $ns missing from: $out"
done
dev get serviceaccount default -n default >/dev/null || fail "no default service account"

# Same names, different objects.
dev create configmap same --from-literal=owner=dev >/dev/null || fail "create in acme/dev"
prod create configmap same --from-literal=owner=prod >/dev/null || fail "create in acme/prod"
[[ $(dev get configmap same -o 'jsonpath={.data.owner}') == dev ]] || fail "acme/dev sees another cluster's object"
[[ $(prod get configmap same -o 'jsonpath={.data.owner}') == prod ]] || fail "acme/prod sees another cluster's object"

# One virtual cluster's token at the other's prefix: 401.
if out=$(dev --server "$listener/vc/acme/prod" get ns 2>&1); then fail "acme/dev's token was accepted by acme/prod"; fi
grep -q "Unauthorized" <<<"$out" || fail "expected Unauthorized, got: $out"

# Server-side apply, twice (the second is a no-op for the same manager).
cat >"$dir/applied.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata:
  name: applied
data:
  key: value
YAML
dev apply --server-side -f "$dir/applied.yaml" >/dev/null || fail "apply --server-side"
dev apply --server-side -f "$dir/applied.yaml" >/dev/null || fail "second apply --server-side"
[[ $(dev get configmap applied -o 'jsonpath={.metadata.managedFields[0].manager}') == kubectl ]] ||
  fail "apply did not record kubectl as the field manager"

# A watch sees a create.
dev get configmaps -w --output-watch-events -o name >"$dir/watch.out" 2>&1 &
watch_pid=$!
for _ in $(seq 100); do grep -q "configmap/same" "$dir/watch.out" && break; sleep 0.05; done
dev create configmap watched --from-literal=a=b >/dev/null || fail "create while watching"
for _ in $(seq 200); do grep -q "ADDED.*configmap/watched\|configmap/watched" "$dir/watch.out" && break; sleep 0.05; done
kill "$watch_pid" 2>/dev/null || true
grep -q "configmap/watched" "$dir/watch.out" || fail "the watch did not see the create: $(cat "$dir/watch.out")"

# A Deployment gets its pods from the workload controllers; no node runs them.
dev create deployment web --image=nginx --replicas=2 >/dev/null || fail "create deployment"
pods=""
for _ in $(seq 200); do
  pods=$(dev get pods -l app=web -o 'jsonpath={range .items[*]}{.status.phase}{"\n"}{end}')
  [[ $(grep -c Pending <<<"$pods") == 2 ]] && break
  sleep 0.05
done
[[ $(grep -c Pending <<<"$pods") == 2 ]] || fail "expected 2 Pending pods, got: $pods"

# SIGKILL, then start again on the same database: nothing is lost.
kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=""
start --database-url "$db_url" --vcluster-addr "127.0.0.1:$vport" --provisioner false
[[ $(dev get configmap same -o 'jsonpath={.data.owner}') == dev ]] || fail "acme/dev lost its configmap"
[[ $(prod get configmap same -o 'jsonpath={.data.owner}') == prod ]] || fail "acme/prod lost its configmap"
dev get configmap applied watched >/dev/null || fail "objects lost in the restart"
[[ $(dev get deployment web -o 'jsonpath={.spec.replicas}') == 2 ]] || fail "the deployment was lost"
[[ $(dev get pods -l app=web -o name | wc -l) == 2 ]] || fail "pods lost or duplicated in the restart"
before=$(dev get configmap same -o 'jsonpath={.metadata.resourceVersion}')
dev create configmap after --from-literal=a=b >/dev/null || fail "create after the restart"
after=$(dev get configmap after -o 'jsonpath={.metadata.resourceVersion}')
((after > before)) || fail "resourceVersion went back after the restart: $after <= $before"
rows=$("$admin" rows "$db_url" acme/dev)
((rows > 10)) || fail "only $rows objects stored for acme/dev"
echo "PASS vcluster e2e (acme/dev: $rows stored objects)"
