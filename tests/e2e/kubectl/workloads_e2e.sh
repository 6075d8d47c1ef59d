#!/usr/bin/env bash
# kubectl's workload commands against septa-kubesim with simulated nodes: a
# Deployment created, rolled out, scaled and updated; Jobs that complete and
# that fail; a StatefulSet coming up in order; cascading deletes.
# Usage: workloads_e2e.sh <septa-kubesim> <kubectl> <inventory.yaml>
set -uo pipefail
SIM=${1:?septa-kubesim binary}
KUBECTL=${2:-kubectl}
INVENTORY=${3:?inventory}
[[ -x $KUBECTL ]] || KUBECTL=$(command -v kubectl) || { echo "kubectl not found"; exit 1; }

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_kubesim "$SIM" --inventory "$INVENTORY" --pod-start-delay-ms 200

# expect_lines <description> <expected> <command...>: the command's output,
# sorted and without duplicates, is exactly the expected text.
expect_lines() {
  local what=$1 want=$2 out passed=0
  shift 2
  out=$("$@" 2>&1 | sort -u)
  [[ $out == "$want" ]] && passed=1
  record "$what" $passed "expected exactly \"$want\", got:" "$out"
}
lines() { "$@" | tr ' ' '\n' | sed '/^$/d'; }

# Deployment: create, roll out, scale, new template, delete.
expect "create deployment" "deployment.apps/web created" k create deployment web --image=nginx --replicas=3
expect "rollout status" 'deployment "web" successfully rolled out' k rollout status deployment/web --timeout=60s
hash=$(k get rs -l app=web -o 'jsonpath={.items[0].metadata.labels.pod-template-hash}')
expect_lines "its ReplicaSet is web-<pod-template-hash>" "web-$hash" \
  lines k get rs -l app=web -o 'jsonpath={.items[*].metadata.name}'
pods=$(k get pods -l app=web -o 'jsonpath={.items[*].metadata.name}')
passed=1
for p in $pods; do [[ $p =~ ^web-$hash-[a-z0-9]{5}$ ]] || passed=0; done
(($(wc -w <<<"$pods") == 3)) || passed=0
record "three pods named web-<hash>-<5 chars>" $passed "pods:" "$pods"
expect_lines "pods are Running" "Running" lines k get pods -l app=web -o 'jsonpath={.items[*].status.phase}'
expect_lines "pods are controlled by the ReplicaSet" "ReplicaSet/true" \
  lines k get pods -l app=web -o 'jsonpath={range .items[*]}{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].controller} {end}'
expect "Progressing: NewReplicaSetAvailable" "NewReplicaSetAvailable" \
  k get deployment web -o 'jsonpath={.status.conditions[?(@.type=="Progressing")].reason}'
expect "scale" "deployment.apps/web scaled" k scale deployment web --replicas=5
expect "rollout status after scale" 'deployment "web" successfully rolled out' k rollout status deployment/web --timeout=60s
expect "five ready replicas" "5" k get deployment web -o 'jsonpath={.status.readyReplicas}'
expect "set image" "deployment.apps/web image updated" k set image deployment/web nginx=nginx:1.27
expect "rollout status of the new template" 'deployment "web" successfully rolled out' \
  k rollout status deployment/web --timeout=60s
expect_lines "new ReplicaSet has the 5 replicas, the old one none" $'nginx:1.27=5\nnginx=0' \
  lines k get rs -l app=web -o 'jsonpath={range .items[*]}{.spec.template.spec.containers[0].image}={.spec.replicas} {end}'
expect_lines "every pod runs the new image" "nginx:1.27" \
  lines k get pods -l app=web -o 'jsonpath={.items[*].spec.containers[0].image}'
expect "revision 2" "2" k get deployment web -o 'jsonpath={.metadata.annotations.deployment\.kubernetes\.io/revision}'
expect "rollout history lists both revisions" "2 " k rollout history deployment/web
expect "rollout undo" "deployment.apps/web rolled back" k rollout undo deployment/web
expect "rollout status of the rollback" 'deployment "web" successfully rolled out' \
  k rollout status deployment/web --timeout=60s
expect_lines "every pod runs the old image again" "nginx" \
  lines k get pods -l app=web -o 'jsonpath={.items[*].spec.containers[0].image}'
expect "the rollback is revision 3" "3" \
  k get deployment web -o 'jsonpath={.metadata.annotations.deployment\.kubernetes\.io/revision}'
expect "delete deployment" 'deployment.apps "web" deleted' k delete deployment web
expect "its ReplicaSets and pods are gone" "No resources found" k get rs,pods -l app=web

# Jobs: simulated containers finish after kubesim.septa.dev/run-for-ms.
job() { # job <name> <patch>: kubectl create job, with a patch applied before it is created
  k create job "$1" --image=busybox --dry-run=client -o yaml -- true |
    "$KUBECTL" patch --local -f - --type merge -p "$2" -o yaml | k create -f -
}
expect "create job" "job.batch/done created" \
  job done '{"spec":{"completions":2,"template":{"metadata":{"annotations":{"kubesim.septa.dev/run-for-ms":"300"}}}}}'
expect "job completes" "job.batch/done condition met" k wait --for=condition=complete job/done --timeout=60s
expect "two pods succeeded" "2" k get job done -o 'jsonpath={.status.succeeded}'
expect_lines "its pods are labelled with the job" "done" lines k get pods -l batch.kubernetes.io/job-name=done \
  -o 'jsonpath={.items[*].metadata.labels.job-name}'
expect "create failing job" "job.batch/fails created" \
  job fails '{"spec":{"backoffLimit":2,"template":{"metadata":{"annotations":{"kubesim.septa.dev/exit-code":"1"}}}}}'
expect "job fails" "job.batch/fails condition met" k wait --for=condition=failed job/fails --timeout=60s
expect "reason BackoffLimitExceeded" "BackoffLimitExceeded" \
  k get job fails -o 'jsonpath={.status.conditions[?(@.type=="Failed")].reason}'
expect "three pods failed (one try, two retries)" "3" k get job fails -o 'jsonpath={.status.failed}'
expect "delete job" 'job.batch "done" deleted' k delete job done
expect "its pods are gone" "No resources found" k get pods -l job-name=done

# StatefulSet: db-1 is created only once db-0 runs, and so on. kubectl lists
# before it watches, so once the marker is printed no later event is missed.
cat >"$WORK/sts.yaml" <<'YAML'
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 3
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: postgres}]}
YAML
k run marker --image=pause --labels=app=db >/dev/null
timeout 60 "$KUBECTL" get pods -l app=db -w --output-watch-events \
  -o 'jsonpath={.type} {.object.metadata.name} {.object.status.phase}{"\n"}' >"$WORK/sts-watch.out" 2>&1 &
WATCH_PID=$!
if wait_for_line "$WORK/sts-watch.out" "ADDED marker" 20; then
  expect "create statefulset" "statefulset.apps/db created" k create -f "$WORK/sts.yaml"
  expect "statefulset rollout status" "roll out complete: 3 new pods" k rollout status sts/db --timeout=60s
  wait_for_line "$WORK/sts-watch.out" "db-2 Running" 20
else
  record "get -w lists before it watches" 0 "marker not listed within 20 s" "$(cat "$WORK/sts-watch.out")"
fi
kill $WATCH_PID 2>/dev/null; wait $WATCH_PID 2>/dev/null
# Each pod's creation, and the moment it turned Running, in watch order.
order=$(grep -E "^(ADDED db-[0-9]|MODIFIED db-[0-9] Running)" "$WORK/sts-watch.out" | awk '{print $1 "-" $2}' | uniq |
  tr '\n' ' ')
want="ADDED-db-0 MODIFIED-db-0 ADDED-db-1 MODIFIED-db-1 ADDED-db-2 MODIFIED-db-2 "
record "pods come up in order: each created once the one before runs" $([[ $order == "$want" ]] && echo 1 || echo 0) \
  "expected \"$want\", got:" "$order"
expect "scale statefulset down" "statefulset.apps/db scaled" k scale sts db --replicas=1
expect "the statefulset reports one replica" "condition met" \
  k wait --for=jsonpath='{.status.replicas}'=1 sts/db --timeout=60s
expect_lines "db-0 stays" "db-0" lines k get pods -l app=db,statefulset.kubernetes.io/pod-name -o 'jsonpath={.items[*].metadata.name}'

finish
