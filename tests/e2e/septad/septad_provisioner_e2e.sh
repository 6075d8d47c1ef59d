#!/usr/bin/env bash
# The provisioner through septad's REST API and real kubectl against the
# simulated host: a virtual cluster created over REST gets its host
# namespace, quota and KAI queue (read back with kubectl), its conditions
# turn True and it is READY with an endpoint that serves its Kubernetes API; a host object deleted behind Septa's back is restored;
# :sleep deletes a pod placed in its host namespace and keeps the quota, :wake makes it READY again; DELETE
# removes every host object, then the virtual cluster.
# Prints how long after a create its host objects were applied (20 at once).
set -euo pipefail
septad=$1
source "$(dirname "$0")/septad_lib.sh"

start
token=$(cat "$dir/data/admin.token")
create_acme_train

host_parts_true() {
  local vc; vc=$(get /v1/tenants/acme/vclusters/train)
  [[ $(condition "$vc" NamespaceReady) == True && $(condition "$vc" QuotaReady) == True &&
    $(condition "$vc" QueueReady) == True ]]
}
wait_for "NamespaceReady, QuotaReady and QueueReady" 10 host_parts_true
echo "host objects ready $(($(now_ms) - created)) ms after the create"
ready() {
  local vc; vc=$(get /v1/tenants/acme/vclusters/train)
  [[ $(field "$vc" state) == READY && $(condition "$vc" ControlPlaneReady) == True ]]
}
wait_for "READY with its control plane" 10 ready
vc=$(get /v1/tenants/acme/vclusters/train)
endpoint=$(field "$vc" endpoint)
[[ $endpoint == https://127.0.0.1:*/vc/acme/train ]] || fail "endpoint is '$endpoint': $vc"
# The virtual cluster's API answers there, and wants its own credential.
[[ $(curl -sk -o /dev/null -w '%{http_code}' "$endpoint/api/v1/namespaces") == 401 ]] ||
  fail "the virtual cluster's API at $endpoint does not answer 401 without a credential"
ns=$(field "$vc" host_namespace)
[[ $ns == septa-acme-x-train ]] || fail "host namespace is '$ns': $vc"

[[ $(k get namespace "$ns" -o jsonpath='{.metadata.labels.pod-security\.kubernetes\.io/enforce}') == baseline ]] ||
  fail "the namespace lacks its Pod Security label"
[[ $(k get resourcequota septa-quota -n "$ns" -o jsonpath='{.spec.hard.pods}') == 20 ]] || fail "quota pods"
[[ $(k get limitrange septa-limits -n "$ns" -o name) == limitrange/septa-limits ]] || fail "limit range"
[[ $(k get queues.scheduling.run.ai "$ns" -o jsonpath='{.spec.parentQueue}') == septa-tier-shared ]] ||
  fail "the KAI leaf queue"

# Drift: deleted behind Septa's back, restored from the informer's event.
k delete resourcequota septa-quota -n "$ns" >/dev/null || fail "kubectl delete quota"
deleted=$(now_ms)
quota_back() { k get resourcequota septa-quota -n "$ns" -o name >/dev/null 2>&1; }
wait_for "the deleted quota restored" 10 quota_back
echo "drift repaired $(($(now_ms) - deleted)) ms after the delete"

# Sleep: the tenant's pod on the host goes, Septa's objects stay; wake: READY again.
k run nap-pod -n "$ns" --image=busybox --restart=Never >/dev/null || fail "kubectl run a pod in the host namespace"
[[ $(api POST /v1/tenants/acme/vclusters/train:sleep) == 200 ]] || fail "sleep"
asleep() { [[ $(condition "$(get /v1/tenants/acme/vclusters/train)" Sleeping) == True ]]; }
wait_for "Sleeping True" 10 asleep
k get pod nap-pod -n "$ns" >/dev/null 2>&1 && fail "the pod survived the sleep"
[[ $(k get resourcequota septa-quota -n "$ns" -o name) == resourcequota/septa-quota ]] || fail "sleep took the quota"
[[ $(field "$(get /v1/tenants/acme/vclusters/train)" state) == SLEEPING ]] || fail "not SLEEPING"
[[ $(api POST /v1/tenants/acme/vclusters/train:wake) == 200 ]] || fail "wake"
wait_for "READY again after the wake" 10 ready

# 20 more, at once: from each create's commit to its last host condition
# turning True, by the server's own timestamps (create_time and the
# conditions' last_transition_time).
for i in $(seq 1 20); do
  [[ $(api POST /v1/tenants/acme/vclusters "{\"name\":\"burst-$i\",\"capacity\":{\"shared\":{\"milli_gpu\":100}}}") == 201 ]] ||
    fail "create burst-$i"
done
all_host_parts_true() {
  local i vc
  for i in $(seq 1 20); do
    vc=$(get "/v1/tenants/acme/vclusters/burst-$i")
    [[ $(condition "$vc" NamespaceReady) == True && $(condition "$vc" QuotaReady) == True &&
      $(condition "$vc" QueueReady) == True ]] || return 1
  done
}
wait_for "20 virtual clusters' host objects" 30 all_host_parts_true
get "/v1/tenants/acme/vclusters?page_size=100" | python3 -c '
import json, sys
from datetime import datetime
def t(s): return datetime.fromisoformat(s.replace("Z", "+00:00"))
ms = sorted((max(t(c["last_transition_time"]) for c in vc["conditions"]
                 if c["type"] in ("NamespaceReady", "QuotaReady", "QueueReady")) - t(vc["create_time"])).total_seconds() * 1000
            for vc in json.load(sys.stdin)["virtual_clusters"] if vc["name"].startswith("burst-"))
assert len(ms) == 20, len(ms)
print("create -> host objects applied, 20 at once: p50 %.0f ms, max %.0f ms" % (ms[len(ms) // 2], ms[-1]))
' || fail "reading the burst's conditions"

[[ $(api DELETE /v1/tenants/acme/vclusters/train) == 200 ]] || fail "delete virtual cluster"
gone() { [[ $(api GET /v1/tenants/acme/vclusters/train) == 404 ]]; }
wait_for "the virtual cluster gone" 10 gone
k get namespace "$ns" >/dev/null 2>&1 && fail "the host namespace is left behind"
[[ -z $(k get queues.scheduling.run.ai -l septa.dev/tenant=acme,septa.dev/vcluster=train -o name) ]] || fail "the leaf queue is left behind"
[[ -n $(k get queues.scheduling.run.ai septa-tier-shared -o name) ]] || fail "the shared tier queue was deleted"

kill -TERM "$pid"
wait "$pid" || fail "septad exited non-zero after SIGTERM"
pid=""
echo "septad provisioner e2e: ok"
