#!/usr/bin/env bash
# septad and its embedded PostgreSQL across crashes (issue 9 #2 and #3).
#   restart:       septad is SIGKILLed and started again at once, as systemd's
#                  Restart=always does, several times in a row: every start is
#                  ready within 5 s and nothing committed is lost: tenants,
#                  virtual clusters with exactly the reservation each had,
#                  and the inventory the controller keeps (no node lost or
#                  stored twice). Each round also deletes the previous
#                  round's virtual cluster just before the kill; at the end
#                  the provisioner has converged the (fresh) simulated host
#                  to exactly the live virtual cluster's host namespace
#                  (none missing, none leaked) and every deleted one is
#                  gone from the API. Every restart takes back all of the
#                  killed septad's shard leases at once (same replica id).
#   postgres-kill: the PostgreSQL server is SIGKILLed under a running septad:
#                  septad starts it again by itself; /readyz turns 200 again,
#                  writes succeed and the data is intact.
set -euo pipefail
septad=$1
mode=$2
source "$(dirname "$0")/septad_lib.sh"

api() {  # method path [body]
  curl -s -o /dev/null -w '%{http_code}' -X "$1" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    ${3:+-d "$3"} "http://127.0.0.1:$http_port$2"
}

create_tenant() {
  [[ $(api POST /v1/tenants "{\"name\":\"$1\",\"trust_tier\":\"shared\"}") == 201 ]] || fail "create tenant $1"
}

get() {  # path: the body
  curl -s -H "Authorization: Bearer $token" "http://127.0.0.1:$http_port$1"
}

create_vcluster() {  # tenant: a shared virtual cluster of 300 milli-GPU
  [[ $(api POST "/v1/tenants/$1/vclusters" '{"name":"vc","capacity":{"shared":{"milli_gpu":300}}}') == 201 ]] ||
    fail "create virtual cluster $1/vc"
}

expect_vclusters() {  # each tenant's virtual cluster holds exactly its one share
  local name shares
  for name in "$@"; do
    shares=$(get "/v1/tenants/$name/vclusters/vc" | grep -o '"shares":\[[^]]*\]') || fail "virtual cluster $name/vc was lost"
    [[ $(grep -o '"milli_gpu":300' <<<"$shares" | wc -l) == 1 ]] || fail "$name/vc holds $shares"
  done
}

expect_inventory() {  # the sample inventory's 9 nodes, each once
  local nodes
  nodes=$(get /v1/inventory/nodes | grep -o '"name":"[a-z0-9-]*","health"' | sort)
  [[ $(wc -l <<<"$nodes") == 9 && -z $(uniq -d <<<"$nodes") ]] || fail "inventory after restart: $nodes"
}

wait_until() {  # what command...: up to 30 s
  local what=$1 begun; shift
  begun=$(now_ms)
  until "$@"; do
    (($(now_ms) - begun < 30000)) || fail "$what not within 30 s"
    sleep 0.1
  done
}

host_namespaces_are() {  # tenant...: the host holds exactly their virtual clusters' namespaces
  local want got
  want=$(for name in "$@"; do echo "namespace/septa-$name-x-vc"; done | sort)
  got=$(kubectl --kubeconfig "$dir/data/kubeconfig" --request-timeout=5s get namespaces \
    -l app.kubernetes.io/managed-by=septa -o name | sort) || return 1
  [[ $got == "$want" ]]
}

gone() { [[ $(api GET "/v1/tenants/$1/vclusters/vc") == 404 ]]; }

expect_tenants() {  # every tenant named so far is still there
  local name
  for name in "$@"; do
    [[ $(api GET "/v1/tenants/$name") == 200 ]] || fail "tenant $name was lost"
  done
}

case $mode in
restart)
  start
  token=$(cat "$dir/data/admin.token")
  names=()
  for round in 1 2 3 4 5; do
    create_tenant "round-$round"
    create_vcluster "round-$round"
    names+=("round-$round")
    live=("round-$round")
    if ((round > 1)); then
      [[ $(api DELETE "/v1/tenants/round-$((round - 1))/vclusters/vc") == 200 ]] || fail "delete round-$((round - 1))/vc"
    fi
    kill -9 "$pid"
    wait "$pid" 2>/dev/null || true
    start  # at once: the killed septad's lifeline is stopping its PostgreSQL right now
    echo "round $round: ready ${ready_ms} ms after a kill -9"
    ((ready_ms < 5000)) || fail "round $round: ready only after $ready_ms ms"
    # The same replica id (data_dir/replica_id): the killed septad's shard
    # leases are taken back at start, not after their 15 s TTL.
    grep -q "inventory: first sync in [0-9]* ms (8 of 8 shards held)" "$log" || fail "round $round: inventory shards"
    grep -q "provisioner: started (scheduler kai; 8 of 8 shards held)" "$log" || fail "round $round: provisioner shards"
    expect_tenants "${names[@]}"
    expect_vclusters "${live[@]}"
    expect_inventory
  done
  # The restarted septad's provisioner holds its leases already: the last
  # round's delete completes well within the leases' 15 s TTL.
  for name in round-1 round-2 round-3 round-4; do
    wait_until "$name/vc deleted after the restarts" gone "$name"
  done
  wait_until "the host namespaces of exactly ${live[*]}" host_namespaces_are "${live[@]}"
  ;;
postgres-kill)
  start
  token=$(cat "$dir/data/admin.token")
  create_tenant before
  pid_file=$dir/data/postgres/data/postmaster.pid
  old_postmaster=$(head -1 "$pid_file")
  kill -9 "$old_postmaster"
  killed_at=$(now_ms)
  # Recovered: a new postmaster, ready, and a write goes through.
  until [[ -f $pid_file && $(head -1 "$pid_file") != "$old_postmaster" ]] &&
    [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$http_port/readyz") == 200 ]] &&
    [[ $(api POST /v1/tenants '{"name":"after","trust_tier":"shared"}') == 201 ]]; do
    (($(now_ms) - killed_at < 30000)) || fail "septad did not recover within 30 s of its PostgreSQL being killed"
    sleep 0.1
  done
  echo "recovered $(($(now_ms) - killed_at)) ms after PostgreSQL was killed"
  [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$http_port/healthz") == 200 ]] || fail "/healthz"
  expect_tenants before after
  ;;
*)
  echo "usage: $0 <septad> restart|postgres-kill" >&2
  exit 2
  ;;
esac
kill -TERM "$pid"
wait "$pid" || fail "septad exited non-zero after SIGTERM"
pid=""
echo "septad crash e2e ($mode): ok"
