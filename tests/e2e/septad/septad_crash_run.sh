#!/usr/bin/env bash
# Crash convergence (issue 13): septad is SIGKILLed at random points during a
# run of creates, resizes and deletes of virtual clusters, and started again
# at once each time; at the end the host must match the desired state
# exactly (septad_crash_check.py): every virtual cluster the driver believes
# exists is READY with all its host objects, and nothing else exists: no
# lost or duplicated virtual cluster, no leaked namespace, queue, node label
# or taint, no reservation of a deleted one, and every object written inside
# a virtual cluster's own API is still there.
#
# The host is a separate septa-kubesim process (its objects outlive septad),
# the database a throwaway PostgreSQL (the test run's with --testdb, else
# one of its own). Requests a kill left unanswered are sent again: creates
# with the same Idempotency-Key, resizes with the same absolute values, a
# delete answered 404 on a retry counts as done. While septad is down, the
# driver issues admin kubeconfigs of a few live virtual clusters
# (septa-vcp-admin, on the database), which later operations write
# ConfigMaps through.
#
#   tests/e2e/septad/septad_crash_run.sh --build build [--ops 200] [--kills 4] [--seed S] [--testdb DIR]
# The seed decides the operations, the kill points and delays; it is
# printed first, so a failing run can be replayed (timing still varies).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=septad_crash_lib.sh
source "$here/septad_crash_lib.sh"
usage="--build DIR [--ops N] [--kills K] [--seed S] [--testdb DIR] [--kubectl PATH]"
crash_args "$usage" "$@"
ops=${crash_extra[ops]:-200} kills=${crash_extra[kills]:-4}
unset 'crash_extra[ops]' 'crash_extra[kills]'
if [[ ${#crash_extra[@]} != 0 || ! $ops =~ ^[0-9]+$ || ! $kills =~ ^[0-9]+$ ]] || ((kills > ops)); then
  crash_usage "$usage"
fi
crash_setup "$build" "$kubectl" "$seed"
echo "seed $seed: $ops operations, $kills kills (replay: $0 --build $build --ops $ops --kills $kills --seed $seed)"
fail() {
  echo "FAIL (seed $seed): $*"
  echo "--- septad logs (earlier starts, then the last):"
  cat "$dir/septad-earlier.log" "$log" 2>/dev/null | tail -200
  exit 1
}

# --- the world: PostgreSQL, the host, septad --------------------------------
begun_run=$(now_ms)
crash_world "crash_$$_$(date +%s%N)"
run_septad
token=$(cat "$dir/data/admin.token")

# call METHOD PATH [BODY [IDEMPOTENCY-KEY]]: $code ("000": no answer) and $body.
call() {
  code=$(curl -s -o "$dir/body" -w '%{http_code}' --max-time 20 -X "$1" -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' ${4:+-H "Idempotency-Key: $4"} ${3:+-d "$3"} \
    "http://127.0.0.1:$http_port$2") || true
  body=$(cat "$dir/body" 2>/dev/null || true)
}

# write_configmap KUBECONFIG NAME VALUE: $code 200 once it exists with the value, 000 otherwise.
write_configmap() {
  local out
  if out=$("$kubectl" --kubeconfig "$1" --request-timeout=10s create configmap "$2" --from-literal=op="$3" 2>&1) ||
    grep -q AlreadyExists <<<"$out"; then
    code=200
  else
    code=000
    body=$out
  fi
}

tenants=(t-shared t-isolated t-dedicated t-exclusive)
for t in "${tenants[@]}"; do
  call POST /v1/tenants "{\"name\":\"$t\",\"trust_tier\":\"${t#t-}\"}"
  [[ $code == 201 ]] || fail "create tenant $t: $code $body"
done

# --- what the driver believes -------------------------------------------------
declare -A live=()        # "tenant/name" -> pods quota
declare -A kubeconfig=()  # "tenant/name" -> admin kubeconfig file
declare -A configmaps=()  # "tenant/name" -> " name:value ..."
deleted=()
mkdir -p "$dir/kc"
max_live=16
killed=0 retries=0 restart_ms_total=0 restart_ms_max=0
declare -A kill_at=()
while ((${#kill_at[@]} < kills)); do
  draw "$ops"
  kill_at[$((r + 1))]=1
done

capacity_of() {  # tenant: a random capacity its tier allows, in $capacity
  case $1 in
  t-shared) draw 5; capacity="{\"shared\":{\"milli_gpu\":$(((r + 1) * 100))}}" ;;
  t-isolated)
    local profiles=(1g.10gb 2g.20gb 3g.40gb)
    draw 3; local profile=${profiles[r]}
    draw 2; capacity="{\"mig\":[{\"profile\":\"$profile\",\"count\":$((r + 1))}]}"
    ;;
  t-dedicated) draw 2; capacity="{\"gpus\":{\"count\":$((r + 1))}}" ;;
  t-exclusive) capacity='{"nodes":{"count":1}}' ;;
  esac
}
pods_draw() { draw 3; if ((r == 0)); then pods=0; else draw 10; pods=$(((r + 1) * 5)); fi; }
pick_live() {  # a random live virtual cluster in $vc; false when none
  local keys=("${!live[@]}")
  ((${#keys[@]} > 0)) || return 1
  draw "${#keys[@]}"
  vc=${keys[r]}
}

# While septad is down: admin kubeconfigs for up to two live virtual
# clusters without one (their control plane loads the token at its next load).
while_down() {
  local keys=() k n=0
  for k in "${!live[@]}"; do [[ -z ${kubeconfig[$k]:-} ]] && keys+=("$k"); done
  while ((n < 2 && ${#keys[@]} > 0)); do
    draw "${#keys[@]}"
    k=${keys[r]}
    keys=("${keys[@]:0:r}" "${keys[@]:r+1}")
    "$admin" kubeconfig "$db_url" "https://127.0.0.1:$vport" "$k" >"$dir/kc/${k/\//.}" || fail "kubeconfig of $k"
    kubeconfig[$k]=$dir/kc/${k/\//.}
    n=$((n + 1))
  done
}

# attempt FUNCTION ARGS...: runs it once; at a kill point in the background,
# with septad SIGKILLed 0-199 ms after it began (mid-request, or during the
# provisioner's work after the answer; half of the kills within 30 ms),
# started again at once.
attempt() {
  if [[ -z ${kill_at[$i]:-} ]]; then
    "$@"
    return
  fi
  unset "kill_at[$i]"
  draw 2
  if ((r == 0)); then draw 30; else draw 200; fi  # half of them early, while most requests are under way
  local delay=$r killed_at
  rm -f "$dir/bg.code"
  ("$@"; echo "$code" >"$dir/bg.code"; printf '%s' "$body" >"$dir/bg.body") &
  local request=$!
  sleep "$(printf '0.%03d' "$delay")"
  kill -9 "$pid"
  killed_at=$(now_ms)
  wait "$pid" 2>/dev/null || true
  wait "$request" || true
  code=$(cat "$dir/bg.code"); body=$(cat "$dir/bg.body")
  killed=$((killed + 1))
  while_down
  run_septad
  restart_ms_total=$((restart_ms_total + ready_ms))
  if ((ready_ms > restart_ms_max)); then restart_ms_max=$ready_ms; fi
  echo "kill $killed at operation $i ($op $target, $delay ms in): answer $code;" \
    "serving again $ready_ms ms after the restart ($(($(now_ms) - killed_at)) ms after the kill)"
}

# send FUNCTION ARGS...: attempt, then again until answered.
send() {
  local tries=1
  attempt "$@"
  while [[ $code == 000 ]]; do
    ((tries < 10)) || fail "operation $i ($op $target): no answer after $tries tries: $body"
    retries=$((retries + 1)) tries=$((tries + 1))
    "$@"
  done
  first_try=$((tries == 1))
}

# --- the run ------------------------------------------------------------------
begun_ops=$(now_ms)
for ((i = 1; i <= ops; i++)); do
  draw 100
  if ((${#live[@]} == 0)) || ((r < 40 && ${#live[@]} < max_live)); then
    op=create
    draw 4; t=${tenants[r]}
    target=$t/vc-$i
    capacity_of "$t"; pods_draw
    send call POST "/v1/tenants/$t/vclusters" \
      "{\"name\":\"vc-$i\",\"capacity\":$capacity,\"quota\":{\"pods\":$pods}}" "crash-$seed-$i"
    case $code in
    200 | 201) live[$target]=$pods ;;
    429) ;;  # no room: nothing was created
    *) fail "create $target: $code $body" ;;
    esac
  elif ((r < 60)); then
    op=resize; pick_live; target=$vc
    capacity_of "${vc%%/*}"
    send call PATCH "/v1/tenants/${vc%%/*}/vclusters/${vc#*/}?update_mask=capacity" "{\"capacity\":$capacity}"
    [[ $code == 200 || $code == 429 ]] || fail "resize $vc: $code $body"
  elif ((r < 72)); then
    op=quota; pick_live; target=$vc
    pods_draw
    send call PATCH "/v1/tenants/${vc%%/*}/vclusters/${vc#*/}?update_mask=quota" "{\"quota\":{\"pods\":$pods}}"
    [[ $code == 200 ]] || fail "quota of $vc: $code $body"
    live[$vc]=$pods
  elif ((r < 84)) && [[ -n ${!kubeconfig[*]} ]]; then
    op=write
    keys=("${!kubeconfig[@]}")
    draw "${#keys[@]}"; target=${keys[r]}
    send write_configmap "${kubeconfig[$target]}" "op-$i" "$i"
    configmaps[$target]+=" op-$i:$i"
  else
    op=delete; pick_live; target=$vc
    # No longer live once the delete is sent: while_down (during a kill in
    # this very request) must not issue a kubeconfig for it, which would
    # store its rows again.
    unset "live[$vc]" "kubeconfig[$vc]" "configmaps[$vc]"
    deleted+=("$vc")
    send call DELETE "/v1/tenants/${vc%%/*}/vclusters/${vc#*/}"
    # 404 on a retry: the unanswered first try deleted it.
    [[ $code == 200 || ($code == 404 && $first_try == 0) ]] || fail "delete $vc: $code $body"
  fi
done
ops_ms=$(($(now_ms) - begun_ops))

# --- convergence and the exact check --------------------------------------------
{
  for vc in "${!live[@]}"; do echo "live $vc ${live[$vc]} ${kubeconfig[$vc]:--}${configmaps[$vc]:-}"; done
  for vc in "${deleted[@]}"; do echo "deleted $vc"; done
} >"$dir/belief"
converge_begun=$(now_ms)
python3 "$here/septad_crash_check.py" --belief "$dir/belief" --api "http://127.0.0.1:$http_port" --token "$token" \
  --host-kubeconfig "$dir/host.kubeconfig" --kubectl "$kubectl" --admin "$admin" --db-url "$db_url" \
  --tenants "${tenants[@]}" --timeout 120 ||
  fail "the host did not converge to the desired state"
converge_ms=$(($(now_ms) - converge_begun))

kill -TERM "$pid"
wait "$pid" || fail "septad exited non-zero after SIGTERM"
pid=""
echo "septad crash run (seed $seed): ok: $ops operations, $killed kills, $retries retried requests," \
  "${#live[@]} live and ${#deleted[@]} deleted virtual clusters; restart to serving avg" \
  "$((killed ? restart_ms_total / killed : 0)) ms, max $restart_ms_max ms; operations $ops_ms ms," \
  "convergence $converge_ms ms, total $(($(now_ms) - begun_run)) ms"
