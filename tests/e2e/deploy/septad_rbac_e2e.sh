#!/usr/bin/env bash
# Zero 403s: septad run against a septa-kubesim with the token of its own
# ServiceAccount (not admin), holding exactly the RBAC the kustomize tree
# grants (applied to kubesim server-side), once as a KAI install (the kubesim
# overlay) and once as a Kueue install (that overlay with components/kueue
# instead of septa-kai). In each, an isolated virtual cluster (reservation,
# MIG layout in gpu-operator, node labels and taints) and a dedicated one (a
# whole A100) sync GPU pods that turn Running, with a mounted ConfigMap and an exposed
# Service, then both are deleted and their host namespaces go. Every request
# kubesim's RBAC refuses is in its log (septa-kubesim prints each 403, as an
# audit log would) and septad logs the 403s its controllers and informers
# meet: both must show none. Then, in the KAI install, one rule is removed
# from the septa-kai ClusterRole (queues) and a new virtual cluster must meet
# the 403, in both logs, and not turn QueueReady: the check checks; after a
# restart the queue informer, which may list but no longer watch, must log
# its refused watch.
# Usage: septad_rbac_e2e.sh SEPTA_KUBESIM SEPTAD SEPTA_VCP_ADMIN TESTDB_DIR REPO_ROOT
set -euo pipefail
kubesim=$1
septad=$2
admin=$3
testdb_dir=$4
root=$5
source "$root/tests/e2e/septad/septad_lib.sh"
kubectl=$("$root/deploy/tools/kubectl.sh")
kubesim_pid=
cleanup_rbac() {
  if [[ -n $kubesim_pid ]]; then kill "$kubesim_pid" 2>/dev/null || true; fi
  cleanup
}
trap cleanup_rbac EXIT
fail() {
  echo "FAIL: $*"
  echo "--- septad log:"
  tail -60 "$log"
  echo "--- septa-kubesim log:"
  tail -30 "$dir/kubesim.log"
  exit 1
}
sa_user=system:serviceaccount:septa-system:septad
# RBAC's 403s: kubesim prints each it answers; septad logs what its
# controllers and informers meet (quota's 403s, "exceeded quota", are not
# RBAC's and not counted).
kubesim_403s() { grep -c "403 Forbidden: .*User \"$sa_user\" cannot" "$dir/kubesim.log" || true; }
septad_403s() { grep -c "Forbidden: .* is forbidden: User \"$sa_user\" cannot" "$log" || true; }
kc_admin() { "$kubectl" --kubeconfig "$dir/admin.kubeconfig" --request-timeout=10s "$@"; }

# install SCHEDULER: a fresh septa-kubesim with the install's objects applied
# server-side; $dir/septad.kubeconfig holds septad's ServiceAccount token.
install() {
  local scheduler=$1 tree=$root/deploy/kustomize/overlays/kubesim
  [[ -n $kubesim_pid ]] && { kill "$kubesim_pid"; wait "$kubesim_pid" 2>/dev/null || true; }
  rm -f "$dir/admin.kubeconfig"
  "$kubesim" --inventory "$root/deploy/dev/inventory.yaml" --listen 127.0.0.1:0 --kubeconfig-out "$dir/admin.kubeconfig" \
    --scheduler-name default-scheduler --scheduler-name kai-scheduler --dcgm-exporter 4.8.3 --mig-delay-ms 200 \
    >"$dir/kubesim.log" 2>&1 &
  kubesim_pid=$!
  written() { [[ -s $dir/admin.kubeconfig ]]; }
  wait_for "septa-kubesim's kubeconfig" 10 written
  if [[ $scheduler == kueue ]]; then
    # The kubesim overlay as a Kueue install: components/kueue on top, septa-kai gone.
    tree=$dir/kueue-install
    mkdir -p "$tree"
    cat >"$tree/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - $(realpath --relative-to="$tree" "$root/deploy/kustomize/overlays/kubesim")
components:
  - $(realpath --relative-to="$tree" "$root/deploy/kustomize/components/kueue")
patches:
  - patch: |-
      \$patch: delete
      apiVersion: rbac.authorization.k8s.io/v1
      kind: ClusterRole
      metadata: {name: septa-kai}
  - patch: |-
      \$patch: delete
      apiVersion: rbac.authorization.k8s.io/v1
      kind: ClusterRoleBinding
      metadata: {name: septa-kai}
YAML
  fi
  "$kubectl" kustomize "$tree" >"$dir/install.yaml" || fail "render the $scheduler install"
  grep -q "SEPTA_SCHEDULER: $scheduler" "$dir/install.yaml" || fail "the $scheduler install does not set SEPTA_SCHEDULER"
  kc_admin apply --server-side --field-manager septa-install -f "$dir/install.yaml" >"$dir/apply.out" 2>&1 ||
    { cat "$dir/apply.out"; fail "the $scheduler install was not accepted"; }
  echo '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":3600}}' >"$dir/tr.json"
  local token server
  token=$(kc_admin create --raw /api/v1/namespaces/septa-system/serviceaccounts/septad/token -f "$dir/tr.json" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["status"]["token"])')
  server=$(kc_admin config view --minify -o jsonpath='{.clusters[0].cluster.server}')
  kc_admin config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' |
    base64 -d >"$dir/ca.crt"
  local sk=(--kubeconfig "$dir/septad.kubeconfig")
  rm -f "$dir/septad.kubeconfig"
  "$kubectl" "${sk[@]}" config set-cluster host --server "$server" --certificate-authority "$dir/ca.crt" \
    --embed-certs >/dev/null
  "$kubectl" "${sk[@]}" config set-credentials septad --token "$token" >/dev/null
  "$kubectl" "${sk[@]}" config set-context host --cluster host --user septad >/dev/null
  "$kubectl" "${sk[@]}" config use-context host >/dev/null
  [[ $("$kubectl" "${sk[@]}" auth whoami -o jsonpath='{.status.userInfo.username}' 2>/dev/null) == "$sa_user" ]] ||
    [[ $("$kubectl" "${sk[@]}" get nodes -o name 2>/dev/null | wc -l) -gt 0 ]] || fail "septad's token does not work"
}

# run_septad SCHEDULER: septad on a fresh database with septad's kubeconfig.
run_septad() {
  [[ -n $pid ]] && { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }
  rm -rf "$dir/data"
  db_url=$("$admin" createdb "$testdb_dir" "rbac_e2e_$1_$$_$RANDOM")
  vport=$(free_port)
  listener=https://127.0.0.1:$vport
  start --database-url "$db_url" --kubeconfig "$dir/septad.kubeconfig" --scheduler "$1" \
    --vcluster-addr "127.0.0.1:$vport" --usage-scrape-interval 1s
  token=$(cat "$dir/data/admin.token")
}

# through_vclusters SCHEDULER: an isolated and a dedicated virtual cluster with
# running GPU pods, then deleted.
through_vclusters() {
  local s=$1
  [[ $(api POST /v1/tenants "{\"name\":\"iso-$s\",\"trust_tier\":\"isolated\"}") == 201 ]] || fail "create tenant iso-$s"
  [[ $(api POST /v1/tenants "{\"name\":\"ded-$s\",\"trust_tier\":\"dedicated\"}") == 201 ]] || fail "create tenant ded-$s"
  [[ $(api POST "/v1/tenants/iso-$s/vclusters" \
    '{"name":"infer","capacity":{"mig":[{"profile":"3g.40gb","count":1,"model":"H100-80GB"}]},"quota":{"cpu_milli":4000,"memory_mib":8192,"pods":20}}') == 201 ]] ||
    fail "create iso-$s/infer: $(reply)"
  [[ $(api POST "/v1/tenants/ded-$s/vclusters" \
    '{"name":"train","capacity":{"gpus":{"model":"A100-80GB","count":1}},"quota":{"cpu_milli":4000,"memory_mib":8192,"pods":20}}') == 201 ]] ||
    fail "create ded-$s/train: $(reply)"
  both_ready() { vcluster_ready "$token" "iso-$s" infer && vcluster_ready "$token" "ded-$s" train; }
  wait_for "iso-$s/infer and ded-$s/train READY" 30 both_ready
  local vc
  for vc in "iso-$s/infer" "ded-$s/train"; do
    "$admin" kubeconfig "$db_url" "$listener" "$vc" >"$dir/${vc/\//.}.kubeconfig"
    cat <<YAML | "$kubectl" --kubeconfig "$dir/${vc/\//.}.kubeconfig" --request-timeout=10s apply -f - >/dev/null ||
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: default}
data: {mode: fast}
---
apiVersion: v1
kind: Pod
metadata: {name: llm, namespace: default, labels: {app: llm}}
spec:
  securityContext:
    runAsNonRoot: true
    runAsUser: 1000
    seccompProfile: {type: RuntimeDefault}
  volumes: [{name: settings, configMap: {name: settings}}]
  containers:
    - name: main
      image: busybox
      securityContext:
        allowPrivilegeEscalation: false
        capabilities: {drop: [ALL]}
      volumeMounts: [{name: settings, mountPath: /etc/settings}]
      resources:
        limits: {nvidia.com/gpu: 1, cpu: 500m, memory: 256Mi}
YAML
      fail "kubectl apply the GPU pod in $vc"
    "$kubectl" --kubeconfig "$dir/${vc/\//.}.kubeconfig" --request-timeout=10s expose pod llm --port 80 >/dev/null ||
      fail "kubectl expose the GPU pod in $vc"
  done
  gpu_pods_running() {
    local vc
    for vc in "iso-$s/infer" "ded-$s/train"; do
      [[ $("$kubectl" --kubeconfig "$dir/${vc/\//.}.kubeconfig" --request-timeout=10s get pod llm \
        -o 'jsonpath={.status.phase}') == Running ]] || return 1
    done
  }
  wait_for "the GPU pods Running in iso-$s/infer and ded-$s/train" 30 gpu_pods_running
  local iso_ns ded_ns
  iso_ns=$(field "$(get "/v1/tenants/iso-$s/vclusters/infer")" host_namespace)
  ded_ns=$(field "$(get "/v1/tenants/ded-$s/vclusters/train")" host_namespace)
  [[ -n $(kc_admin get service llm-x-default-x-train -n "$ded_ns" -o name 2>/dev/null) ]] ||
    fail "the exposed service is not on the host"
  [[ $(api DELETE "/v1/tenants/iso-$s/vclusters/infer") == 200 ]] || fail "delete iso-$s/infer"
  [[ $(api DELETE "/v1/tenants/ded-$s/vclusters/train") == 200 ]] || fail "delete ded-$s/train"
  namespaces_gone() {
    ! kc_admin get namespace "$iso_ns" -o name >/dev/null 2>&1 && ! kc_admin get namespace "$ded_ns" -o name >/dev/null 2>&1
  }
  wait_for "the host namespaces $iso_ns and $ded_ns deleted" 20 namespaces_gone
}

# zero_403s WHAT: neither log shows a 403.
zero_403s() {
  local k s
  k=$(kubesim_403s)
  s=$(septad_403s)
  ((k == 0 && s == 0)) || {
    grep "403 Forbidden" "$dir/kubesim.log" | sort | uniq -c | head -20
    grep "is forbidden: User" "$log" | head -20
    fail "$1: kubesim refused septad $k request(s), septad logged $s 403(s)"
  }
}

for scheduler in kai kueue; do
  begun_run=$(now_ms)
  install "$scheduler"
  run_septad "$scheduler"
  through_vclusters "$scheduler"
  zero_403s "the $scheduler install"
  echo "septad_rbac_e2e: $scheduler install: zero 403s through an isolated and a dedicated virtual cluster" \
    "with running GPU pods ($(($(now_ms) - begun_run)) ms)"
  [[ $scheduler == kai ]] || continue

  # One rule gone from septa-kai: the next virtual cluster's KAI queue is refused.
  python3 - "$dir/install.yaml" >"$dir/septa-kai.yaml" <<'PY'
import sys, yaml
for doc in yaml.safe_load_all(open(sys.argv[1])):
    if doc and doc["kind"] == "ClusterRole" and doc["metadata"]["name"] == "septa-kai":
        doc["rules"] = [r for r in doc["rules"] if "queues" not in r["resources"]]
        print(yaml.safe_dump(doc))
PY
  if ! grep -q podgroups "$dir/septa-kai.yaml" || grep -q ' queues' "$dir/septa-kai.yaml"; then
    fail "septa-kai without queues: $(cat "$dir/septa-kai.yaml")"
  fi
  kc_admin apply --server-side --field-manager septa-install -f "$dir/septa-kai.yaml" >/dev/null ||
    fail "apply septa-kai without its queues rule"
  [[ $(api POST /v1/tenants/ded-kai/vclusters '{"name":"starved","capacity":{"gpus":{"model":"A100-80GB","count":1}}}') == 201 ]] ||
    fail "create ded-kai/starved: $(reply)"
  refused() { (($(kubesim_403s) > 0 && $(septad_403s) > 0)); }
  wait_for "the 403 on queues, in kubesim's log and septad's" 15 refused
  grep -q "403 Forbidden: queues.scheduling.run.ai .*User \"$sa_user\" cannot \(patch\|create\|list\|watch\|get\)" \
    "$dir/kubesim.log" || fail "kubesim refused something else than queues: $(grep '403 Forbidden' "$dir/kubesim.log")"
  [[ $(condition "$(get /v1/tenants/ded-kai/vclusters/starved)" QueueReady) != True ]] ||
    fail "QueueReady True without the right to write queues"
  grep -o 'cannot [a-z]* resource "[a-z]*"' "$dir/kubesim.log" | sort | uniq -c
  echo "septad_rbac_e2e: without septa-kai's queues rule: $(kubesim_403s) request(s) refused, septad logged" \
    "$(septad_403s): $(grep -m1 -o "Forbidden: .* is forbidden: User .*" "$log" | cut -c1-200)"
  # Restarted so: its queue informer lists (septa-core grants list) but may
  # not watch, and must say so in the log rather than retry in silence.
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=
  start --database-url "$db_url" --kubeconfig "$dir/septad.kubeconfig" --scheduler kai \
    --vcluster-addr "127.0.0.1:$vport" --usage-scrape-interval 1s
  informer_said() { grep -q 'informer scheduling.run.ai/v2 queues: watch failed, retrying with backoff: .*is forbidden' "$log"; }
  wait_for "the queue informer's refused watch in septad's log" 10 informer_said
  echo "septad_rbac_e2e: the refused informer logged: $(grep -m1 -o 'informer scheduling.run.ai/v2 queues: watch failed.*' "$log" | cut -c1-120)"
done
echo "ok"
