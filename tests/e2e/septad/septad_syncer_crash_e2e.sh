#!/usr/bin/env bash
# The syncer's crash convergence: septad is SIGKILLed at five moments while
# the syncer works on two virtual clusters (acme/train, beta/dev), and twice
# more while it runs without its syncer, and is started again at once each
# time; at the end the host holds exactly what the virtual clusters dictate
# (septad_syncer_crash_check.py): every virtual pod Running on a node with
# exactly one host pod (web in default of train: web-x-default-x-train in
# septa-acme-x-train), no orphan and no duplicate host pod, every host copy
# of a service, config map or secret matching a live virtual object that
# needs it, no token secret of a gone pod, every virtual service holding its
# host copy's cluster IP, nothing that the tenant created lost and nothing
# that the tenant deleted back.
#
# The kills: (1) while the first workload (a Deployment, bare pods, config
# maps, a secret, services, a second namespace) is applied and synced;
# (2) while the syncer catches up after (1), once the first service is on the
# host; (3) inside the syncer's service readdressing (the virtual service
# moved to ExternalName and back with the host's cluster IP, the host
# copy's septa.dev/service-recreate annotation recording it first): a watch
# on the host's services sees the annotation written and septad is killed
# 0-24 ms later; (4) while the syncer catches up after (3); (5) while a batch of
# deletes, edits and creates is under way. After kills (2) and (3) septad
# first comes back without its syncer (--syncer false: the virtual APIs
# serve, as another replica's would, and nothing syncs) and the tenant
# deletes pods, services, a config map still mounted and a Deployment, edits
# config maps, scales and creates, before septad is killed again and started
# with its syncer: what was deleted then must go from the host although
# the syncer never saw it happen. After kill (3) the services whose host
# copy records a pending readdressing are listed with their virtual state
# (the old address, the ExternalName marker between the two updates, or
# the host's address already); none may be gone (the syncer never deletes a
# virtual service), the first is deleted by the tenant and must stay
# deleted, the others must end with the host's address.
#
# The host is a separate septa-kubesim process (its objects outlive septad),
# the database a throwaway PostgreSQL (the test run's with --testdb, else one
# of its own). The tenant uses the real kubectl with admin kubeconfigs from
# septa-vcp-admin; a request a kill left unanswered is sent again (apply,
# scale, patch and delete --ignore-not-found are idempotent).
#
#   tests/e2e/septad/septad_syncer_crash_e2e.sh --build build [--seed S] [--testdb DIR] [--kubectl PATH]
# The seed decides the kill points and the replica counts; it is printed
# first, so a failing run can be replayed (timing still varies).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=septad_crash_lib.sh
source "$here/septad_crash_lib.sh"
crash_args "--build DIR [--seed S] [--testdb DIR] [--kubectl PATH]" "$@"
((${#crash_extra[@]} == 0)) || crash_usage "--build DIR [--seed S] [--testdb DIR] [--kubectl PATH]"
crash_setup "$build" "$kubectl" "$seed"
echo "seed $seed (replay: $0 --build $build --seed $seed)"
watch_pid="" batch_pid=""
helpers_cleanup() {
  [[ -n $watch_pid ]] && kill "$watch_pid" 2>/dev/null
  [[ -n $batch_pid ]] && kill "$batch_pid" 2>/dev/null
  crash_cleanup
}
trap helpers_cleanup EXIT
fail() {
  echo "FAIL (seed $seed): $*"
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
    write_belief
    echo "--- the state now (what the end check would say):"
    check 0 || true
  fi
  echo "--- septad logs (earlier starts, then the last):"
  cat "$dir/septad-earlier.log" "$log" 2>/dev/null | tail -150
  exit 1
}

sleep_ms() { sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"; }

# --- the world: PostgreSQL, the host, septad --------------------------------
begun_run=$(now_ms)
# The host schedules what the syncer writes (schedulerName kai-scheduler), as septad's own simulated host does.
crash_world "syncer_crash_$$_$(date +%s%N)" --scheduler-name default-scheduler kai-scheduler --pod-start-delay-ms 100
h() { kc "$dir/host.kubeconfig" "$@"; }

killed=0
# kill_septad WHAT: SIGKILL, no grace; waits until it is gone.
kill_septad() {
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
  killed=$((killed + 1))
  echo "kill $killed: $*"
}
run_septad
restarts_ms=0  # from here: restarts only
grep -q "syncer: started" "$log" || fail "the syncer did not start"
token=$(cat "$dir/data/admin.token")

# --- the tenants and their virtual clusters ---------------------------------------
c1=acme/train c2=beta/dev
clusters=("$c1" "$c2")
create_acme_train
[[ $(api POST /v1/tenants '{"name":"beta","trust_tier":"shared"}') == 201 ]] || fail "create tenant beta"
[[ $(api POST /v1/tenants/beta/vclusters \
  '{"name":"dev","capacity":{"shared":{"milli_gpu":200}},"quota":{"cpu_milli":4000,"memory_mib":8192,"pods":20}}') == 201 ]] ||
  fail "create virtual cluster beta/dev"
declare -A kcfg=() hostns=()
for c in "${clusters[@]}"; do
  ready() { [[ $(field "$(get "/v1/tenants/${c%/*}/vclusters/${c#*/}")" state) == READY ]]; }
  wait_for "$c READY" 20 ready
  hostns[$c]=$(field "$(get "/v1/tenants/${c%/*}/vclusters/${c#*/}")" host_namespace)
  kcfg[$c]=$dir/${c/\//.}.kubeconfig
  "$admin" kubeconfig "$db_url" "https://127.0.0.1:$vport" "$c" >"${kcfg[$c]}" || fail "kubeconfig of $c"
done

# --- what the tenants do, and what the driver believes ---------------------------
# belief["<cluster> <kind> <ns>/<name>"]: present, absent, either, a
# deployment's replicas or a config map's mode=<value> (septad_syncer_crash_check.py).
declare -A belief=()
write_belief() {
  local k
  for k in "${!belief[@]}"; do echo "$k ${belief[$k]}"; done >"$dir/belief"
}
# check SECONDS: the end check, waiting up to SECONDS for the state to converge.
check() {
  local args=() c
  for c in "${clusters[@]}"; do args+=(--cluster "$c=${kcfg[$c]}=${hostns[$c]}"); done
  python3 "$here/septad_syncer_crash_check.py" --kubectl "$kubectl" --host-kubeconfig "$dir/host.kubeconfig" \
    --belief "$dir/belief" --timeout "$1" "${args[@]}"
}

# tenant CLUSTER KUBECTL-ARGS...: the tenant's kubectl, a few tries (a
# request right after a restart may meet the virtual control plane loading).
# tenant_tries=1 in the background, where a kill is expected.
tenant_tries=5
tenant() {
  local c=$1 tries=0 out
  shift
  until out=$(kc "${kcfg[$c]}" "$@" 2>&1); do
    tries=$((tries + 1))
    ((tries < tenant_tries)) || { echo "$c: kubectl $*: $out" >&2; return 1; }
    sleep 0.2
  done
}

pod_yaml() {  # NAME NAMESPACE [CONFIGMAP [SECRET]]
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $2, labels: {app: $1}}
spec:
  containers:
    - name: main
      image: busybox
      resources: {requests: {cpu: 10m, memory: 16Mi}, limits: {cpu: 10m, memory: 16Mi}}
YAML
  if [[ -n ${4:-} ]]; then
    printf '      env: [{name: PASSWORD, valueFrom: {secretKeyRef: {name: %s, key: password}}}]\n' "$4"
  fi
  if [[ -n ${3:-} ]]; then
    printf '      volumeMounts: [{name: config, mountPath: /etc/config}]\n'
    printf '  volumes: [{name: config, configMap: {name: %s}}]\n' "$3"
  fi
}
service_yaml() {  # NAME NAMESPACE APP
  printf -- '---\napiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: %s}\n' "$1" "$2"
  printf 'spec: {selector: {app: %s}, ports: [{port: 80, targetPort: 8080}]}\n' "$3"
}
configmap_yaml() {  # NAME NAMESPACE MODE
  printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {mode: %s}\n' "$1" "$2" "$3"
}

# The first workload of each virtual cluster.
{
  printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n'
  configmap_yaml cfg-a default a1
  configmap_yaml cfg-b default b1
  configmap_yaml cfg-c default c1
  configmap_yaml cfg-unused default u1
  configmap_yaml cfg-t team t1
  printf -- '---\napiVersion: v1\nkind: Secret\nmetadata: {name: db-pass, namespace: default}\n'
  printf 'stringData: {password: hunter2}\n'
  cat <<'YAML'
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      volumes: [{name: config, configMap: {name: cfg-a}}]
      containers:
        - name: main
          image: busybox
          volumeMounts: [{name: config, mountPath: /etc/config}]
          resources: {requests: {cpu: 10m, memory: 16Mi}, limits: {cpu: 10m, memory: 16Mi}}
YAML
  echo ---; pod_yaml p1 default
  echo ---; pod_yaml p2 default cfg-b db-pass
  echo ---; pod_yaml p3 default cfg-c
  echo ---; pod_yaml p4 default cfg-b
  echo ---; pod_yaml t1 team cfg-t
  service_yaml web default web
  service_yaml s1 default p1
  service_yaml s2 default p2
  service_yaml s3 default p3
  service_yaml t1 team t1
} >"$dir/workload.yaml"
believe_workload() {  # CLUSTER
  local c=$1 name
  for name in default/p1 default/p2 default/p3 default/p4 team/t1; do belief["$c pod $name"]=present; done
  for name in default/web default/s1 default/s2 default/s3 team/t1; do belief["$c service $name"]=present; done
  belief["$c deployment default/web"]=3
  belief["$c configmap default/cfg-a"]=mode=a1 belief["$c configmap default/cfg-b"]=mode=b1
  belief["$c configmap default/cfg-c"]=mode=c1 belief["$c configmap default/cfg-unused"]=mode=u1
  belief["$c configmap team/cfg-t"]=mode=t1
  belief["$c secret default/db-pass"]=present
}

# The tenants' operations (each idempotent, so a retry after a kill is safe);
# each also records what the driver believes from then on.
op_apply_workload() { tenant "$1" apply -f "$dir/workload.yaml" && believe_workload "$1"; }
op_delete() {  # CLUSTER KIND NS/NAME
  tenant "$1" delete "$2" "${3#*/}" -n "${3%/*}" --ignore-not-found --wait=false && belief["$1 $2 $3"]=absent
}
op_scale() { tenant "$1" scale deployment web --replicas="$2" && belief["$1 deployment default/web"]=$2; }
op_mode() {  # CLUSTER CONFIGMAP VALUE
  tenant "$1" patch configmap "$2" --type merge -p "{\"data\":{\"mode\":\"$3\"}}" &&
    belief["$1 configmap default/$2"]=mode=$3
}
op_pod() {  # CLUSTER NAME [CONFIGMAP]
  local file=$dir/pod-${1/\//.}-$2.yaml
  pod_yaml "$2" default "${3:-}" >"$file"
  tenant "$1" apply -f "$file" && belief["$1 pod default/$2"]=present
}
op_services() {  # CLUSTER NAME...: services of the Deployment's pods
  local c=$1 name file
  shift
  file=$dir/services-${c/\//.}-$(IFS=-; echo "$*").yaml
  for name in "$@"; do service_yaml "$name" default web; done >"$file"
  tenant "$c" apply -f "$file" || return 1
  for name in "$@"; do belief["$c service default/$name"]=present; done
}

# batch DELAY-MS STEP...: the steps (each "op_... args") sent in the
# background one after the other, septad SIGKILLed DELAY-MS after they began
# and started again at once; then every step is sent again, as a client
# retries what the kill left unanswered, this time recording the belief.
batch() {
  local delay=$1 step words
  shift
  (
    tenant_tries=1
    for step in "$@"; do
      read -ra words <<<"$step"
      "${words[@]}" 2>/dev/null || exit 0
    done
  ) &
  batch_pid=$!
  sleep_ms "$delay"
  kill_septad "$delay ms into: ${*}"
  wait "$batch_pid" || true
  batch_pid=""
  run_septad
  for step in "$@"; do
    read -ra words <<<"$step"
    "${words[@]}" || fail "$step after the restart"
  done
}

# --- kill 1: while the first workload is applied and synced -------------------------
draw 800
batch "$r" "op_apply_workload $c1" "op_apply_workload $c2"

# --- kill 2: while the syncer catches up, once the first service is on the host -----
first_service() { h get service web-x-default-x-train -n "${hostns[$c1]}" -o name >/dev/null 2>&1; }
wait_for "the host copy of $c1's service default/web" 20 first_service
draw 400
sleep_ms "$r"
kill_septad "$r ms after the first host service of $c1 showed"

# Down: septad without its syncer; the tenants work meanwhile.
run_septad --syncer false
draw 4
op_services "$c1" s4 s5 s6 || fail "create services in $c1"
op_delete "$c1" pod default/p1 || fail "delete a pod in $c1"
op_delete "$c1" service default/s1 || fail "delete a service in $c1"
op_delete "$c1" configmap default/cfg-c || fail "delete a mounted config map in $c1"
op_mode "$c1" cfg-a a2 || fail "edit a config map in $c1"
op_scale "$c1" $((r + 2)) || fail "scale in $c1"
op_pod "$c1" p5 cfg-unused || fail "create a pod in $c1"
op_delete "$c2" pod default/p4 || fail "delete a pod in $c2"
op_delete "$c2" service default/s2 || fail "delete a service in $c2"
op_delete "$c2" pod team/t1 || fail "delete the last pod that mounts team/cfg-t in $c2"
op_mode "$c2" cfg-b b2 || fail "edit a config map in $c2"
kill_septad "the syncer-less septad"
run_septad

# --- kill 3: inside the syncer's service readdressing ----------------------------------
# A watch on the host's synced services of $c1 prints each one's name and,
# while a readdressing is recorded, "recreate-pending".
recreate_template='{{.metadata.name}}{{with .metadata.annotations}}{{if index . "septa.dev/service-recreate"}} recreate-pending{{end}}{{end}}{{"\n"}}'
exec {watch_fd}< <(exec "$kubectl" --kubeconfig "$dir/host.kubeconfig" --request-timeout=60s get services \
  -n "${hostns[$c1]}" -l septa.dev/synced=true -w -o go-template="$recreate_template" 2>"$dir/watch.err")
watch_pid=$!
read -r -t 10 -u "$watch_fd" line || fail "the host watch listed nothing: $(cat "$dir/watch.err")"
# Past the list (and the catch-up's readdressings of s4-s6): the next recorded one is one of these.
recreated=(s7 s8 s9 s10 s11 s12)
wait_caught_up() {  # the syncer has given s4-s6 their host addresses
  local name
  for name in s4 s5 s6; do
    [[ $(h get service "$name-x-default-x-train" -n "${hostns[$c1]}" -o 'jsonpath={.spec.clusterIP}' 2>/dev/null) == \
      "$(kc "${kcfg[$c1]}" get service "$name" -o 'jsonpath={.spec.clusterIP}' 2>/dev/null)" ]] || return 1
  done
}
wait_for "the services created while the syncer was down given their host addresses" 20 wait_caught_up
while read -r -t 0.01 -u "$watch_fd" line; do :; done  # what the catch-up wrote
draw 25
delay=$r
(tenant_tries=1 op_services "$c1" "${recreated[@]}" 2>/dev/null) &
batch_pid=$!
seen=""
begun=$(now_ms)
while [[ -z $seen ]]; do
  read -r -t 10 -u "$watch_fd" line || fail "no service readdressing recorded on the host within 10 s"
  # s4-s6 are done: only a readdressing of these counts.
  [[ $line == *recreate-pending && " ${recreated[*]} " == *" ${line%%-x-*} "* ]] && seen=${line%% *}
done
sleep_ms "$delay"
kill_septad "$delay ms after the host copy $seen recorded its readdressing ($(($(now_ms) - begun)) ms after the creates began)"
kill "$watch_pid" 2>/dev/null || true
exec {watch_fd}<&-
watch_pid=""
wait "$batch_pid" || true
batch_pid=""

# Down again. Which readdressings the kill interrupted, and how far each got.
run_septad --syncer false
pending=$(h get services -n "${hostns[$c1]}" -l septa.dev/synced=true \
  -o 'go-template={{range .items}}{{with .metadata.annotations}}{{if index . "septa.dev/service-recreate"}}{{index . "septa.dev/object-name"}} {{end}}{{end}}{{end}}')
probed=""
for name in $pending; do
  host_ip=$(h get service "$name-x-default-x-train" -n "${hostns[$c1]}" -o 'jsonpath={.spec.clusterIP}')
  virtual=$(kc "${kcfg[$c1]}" get service "$name" -o 'jsonpath={.spec.type} {.spec.clusterIP}' 2>/dev/null) ||
    fail "the virtual service $name is gone after its readdressing was interrupted: the syncer deleted it"
  if [[ $virtual == ExternalName* ]]; then
    when="between its two updates (ExternalName)"
  elif [[ ${virtual#* } == "$host_ip" ]]; then
    when="after the second update"
  else
    when="before the first update"
  fi
  if [[ -z $probed ]]; then
    echo "  readdressing of $name interrupted $when: the tenant deletes it now, it must stay deleted"
    op_delete "$c1" service "default/$name" || fail "delete $name"
    probed=$name
  else
    echo "  readdressing of $name interrupted $when: it must end with the host's address"
  fi
done
[[ -n $pending ]] || echo "  no readdressing was pending at the kill"
# The creates the kill left unanswered: those without a host copy are sent again.
for name in "${recreated[@]}"; do
  if [[ $name != "$probed" ]] && ! h get service "$name-x-default-x-train" -n "${hostns[$c1]}" -o name >/dev/null 2>&1; then
    op_services "$c1" "$name" || fail "create service $name again"
  fi
  [[ $name == "$probed" ]] || belief["$c1 service default/$name"]=present
done
op_delete "$c1" pod default/p5 || fail "delete a pod in $c1"
op_pod "$c1" p6 cfg-b || fail "create a pod in $c1"
op_delete "$c2" deployment default/web || fail "delete the Deployment in $c2"
op_delete "$c2" service default/web || fail "delete a service in $c2"
kill_septad "the syncer-less septad"
run_septad

# --- kill 4: while the syncer catches up -----------------------------------------
draw 400
sleep_ms "$r"
kill_septad "$r ms into the syncer's catch-up"
run_septad

# --- kill 5: while deletes, edits and creates are under way -----------------------
draw 3
replicas=$((r + 1))
draw 600
# (s7-s12 are left alone: the one the tenant deleted after kill 3 must stay deleted by itself.)
batch "$r" "op_delete $c1 pod default/p2" "op_delete $c2 pod default/p3" "op_delete $c1 service default/s3" \
  "op_scale $c1 $replicas" "op_mode $c1 cfg-b b3" "op_delete $c2 service default/s3" "op_delete $c1 service default/s5" \
  "op_pod $c2 p7 cfg-a" "op_delete $c1 service default/s4"

# --- the exact end state ------------------------------------------------------------
write_belief
converge_begun=$(now_ms)
check 30 || fail "the host did not converge to what the virtual clusters dictate${probed:+ (service $probed was\
 deleted by the tenant while the host copy recorded its interrupted readdressing)}"
converge_ms=$(($(now_ms) - converge_begun))
interrupted=$(wc -w <<<"$pending")

kill -TERM "$pid"
wait "$pid" || fail "septad exited non-zero after SIGTERM"
pid=""
echo "septad syncer crash run (seed $seed): ok: $killed kills, restart to serving avg $((restarts_ms / killed)) ms;" \
  "$interrupted service readdressings interrupted by kill 3; convergence $converge_ms ms," \
  "total $(($(now_ms) - begun_run)) ms"
