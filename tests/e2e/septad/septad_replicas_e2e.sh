#!/usr/bin/env bash
# Two septad replicas on one database (the test run's PostgreSQL, CTest
# fixture "postgres") and one host (a standalone septa-kubesim both reach
# through the `kubeconfig` key), each on its own free ports. The first
# started holds every provisioner shard: virtual clusters created through
# either replica are provisioned by it alone. It is then killed with
# SIGKILL (no lease released): virtual clusters created through the other
# turn READY once that one took the shards over, the moment the leases
# expire: within the lease TTL (15 s) of the kill, plus the reconciles (2 s
# allowed on a busy machine). Prints the measured handover. Both replicas
# run the usage scraper every second against the host's dcgm-exporter
# double: at the end no GPU-minute holds more than 60 s of capacity and
# every GPU-minute's reserved seconds are what its holders were billed
# (nothing accounted twice by the two replicas, before or after the
# handover).
set -euo pipefail
septad=$1
admin=$2
kubesim=$3
testdb_dir=$4
inventory=$5
source "$(dirname "$0")/septad_lib.sh"

pids=()
cleanup_replicas() {
  local p
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  cleanup
}
trap cleanup_replicas EXIT
fail() {
  echo "FAIL: $*"
  for f in "$dir"/*.log; do echo "--- $f:"; cat "$f"; done
  exit 1
}

db_url=$("$admin" createdb "$testdb_dir" "replicas_e2e_$$_$RANDOM")
"$kubesim" --inventory "$inventory" --dcgm-exporter 4.8.3 --listen 127.0.0.1:0 --kubeconfig-out "$dir/host.kubeconfig" >"$dir/kubesim.log" 2>&1 &
pids+=($!)
begun=$(now_ms)
until [[ -f $dir/host.kubeconfig ]]; do
  (($(now_ms) - begun < 10000)) || fail "septa-kubesim did not write its kubeconfig"
  sleep 0.05
done

# start_replica NAME: septad on port 0 everywhere; sets ${NAME}_pid and ${NAME}_port (REST).
start_replica() {
  local name=$1 log=$dir/$1.log begun line port
  mkdir -p "$dir/$name"
  [[ -f $dir/admin.token ]] && cp "$dir/admin.token" "$dir/$name/admin.token"
  # Replicas share one key-encryption key for the CA keys at rest (kek_file).
  [[ -f $dir/kek ]] && cp -p "$dir/kek" "$dir/$name/kek"
  begun=$(now_ms)
  "$septad" --data-dir "$dir/$name" --database-url "$db_url" --kubeconfig "$dir/host.kubeconfig" \
    --http-addr 127.0.0.1:0 --grpc-addr 127.0.0.1:0 --vcluster-addr 127.0.0.1:0 --usage-scrape-interval 1s \
    >"$log" 2>&1 &
  pids+=($!)
  printf -v "${name}_pid" %s $!
  until line=$(grep -m1 "septad ready" "$log"); do
    kill -0 "${pids[-1]}" 2>/dev/null || fail "septad $name exited during start"
    (($(now_ms) - begun < 30000)) || fail "septad $name not ready after 30 s"
    sleep 0.05
  done
  port=$(sed -E 's|.*REST https?://[^ ]*:([0-9]+) gRPC.*|\1|' <<<"$line")
  [[ $port =~ ^[0-9]+$ ]] || fail "no REST port in: $line"
  printf -v "${name}_port" %s "$port"
  [[ -f $dir/admin.token ]] || cp "$dir/$name/admin.token" "$dir/admin.token"
  [[ -f $dir/kek ]] || cp -p "$dir/$name/kek" "$dir/kek"
}

api() {  # port method path [body]: the HTTP status
  curl -s -o /dev/null -w '%{http_code}' -X "$2" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    ${4:+-d "$4"} "http://127.0.0.1:$1$3"
}
state() {  # port vcluster
  curl -s -H "Authorization: Bearer $token" "http://127.0.0.1:$1/v1/tenants/acme/vclusters/$2" |
    python3 -c 'import json,sys; print(json.load(sys.stdin).get("state", ""))'
}
# Reconciles the provisioner of the replica at port $1 has run.
reconciles() {
  curl -s -H "Authorization: Bearer $token" "http://127.0.0.1:$1/metrics" |
    awk '/^septa_reconcile_total\{/ && /controller="provisioner"/ { n += $NF } END { printf "%d\n", n }'
}
create() {  # port vcluster
  [[ $(api "$1" POST /v1/tenants/acme/vclusters "{\"name\":\"$2\",\"capacity\":{\"shared\":{\"milli_gpu\":100}}}") == 201 ]] ||
    fail "create $2 through :$1"
}
all_ready() {  # port vcluster...
  local port=$1 vc
  shift
  for vc in "$@"; do [[ $(state "$port" "$vc") == READY ]] || return 1; done
}
wait_ready() {  # seconds port vcluster...
  local seconds=$1 begun
  shift
  begun=$(now_ms)
  until all_ready "$@"; do
    (($(now_ms) - begun < seconds * 1000)) || fail "${*:2} not READY within $seconds s"
    sleep 0.05
  done
}

start_replica a
token=$(cat "$dir/admin.token")
start_replica b
[[ $(api "$a_port" POST /v1/tenants '{"name":"acme","trust_tier":"shared"}') == 201 ]] || fail "create tenant"

# Through either replica, provisioned by A, which holds every shard.
create "$a_port" one
create "$b_port" two
wait_ready 10 "$b_port" one two
(($(reconciles "$a_port") > 0)) || fail "A reconciled nothing"
[[ $(reconciles "$b_port") == 0 ]] || fail "B reconciled virtual clusters whose shards A holds"

# A dies without releasing its leases; what is created through B waits for them to expire.
kill -9 "$a_pid"
killed=$(now_ms)
create "$b_port" three
create "$b_port" four
wait_ready 25 "$b_port" three four
handover=$(($(now_ms) - killed))
(($(reconciles "$b_port") > 0)) || fail "B never reconciled"
all_ready "$b_port" one two || fail "A's virtual clusters are no longer READY"
echo "handover: virtual clusters created after SIGKILL of the holder READY through the other replica in $handover ms (lease TTL 15000 ms, taken at the expiry)"
((handover <= 17000)) || fail "handover took $handover ms, more than the TTL and 2 s for the reconciles"

# Usage: accounted (by A, then by B), and never twice.
usage=$(psql "$db_url" -XAtqc "SELECT count(*),
    count(*) FILTER (WHERE p.capacity_gpu_seconds > 60 + 1e-6
                        OR abs(p.reserved_gpu_seconds - coalesce(m.billed, 0)) > 1e-6)
  FROM usage_pool_minutes p LEFT JOIN
       (SELECT minute, node, gpu_uuid, sum(allocated_gpu_seconds) AS billed FROM usage_minutes GROUP BY 1, 2, 3) m
       USING (minute, node, gpu_uuid)") || fail "read the usage tables"
if ! [[ $usage =~ ^([0-9]+)\|0$ ]] || ((BASH_REMATCH[1] == 0)); then
  fail "usage (GPU-minutes, of them over 60 s of capacity or not what was billed): $usage"
fi
echo "usage: ${BASH_REMATCH[1]} GPU-minutes accounted by the two replicas, none twice"

kill -TERM "$b_pid"
wait "$b_pid" || fail "septad b exited non-zero after SIGTERM"
echo "septad replicas e2e: ok"
