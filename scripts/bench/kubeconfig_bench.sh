#!/usr/bin/env bash
# Benchmark of the credentials issue: POST /v1/tenants/acme/vclusters/train:kubeconfig
# ({"ttl":"1h","role":"view"}, the built-in CA) against septad on its embedded,
# durable PostgreSQL and simulated cluster, loaded by wrk over keep-alive
# connections from the same machine. Target: >= 500/s, p99 <= 20 ms.
# Usage: scripts/bench/kubeconfig_bench.sh [build-dir] [seconds] [connections...]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
secs=${2:-15}
shift $(($# < 2 ? $# : 2))
connections=("${@:-2 4 8}")
septad=$PWD/$build/bin/septad
source tests/e2e/septad/septad_lib.sh
start
token=$(cat "$dir/data/admin.token")
create_acme_train
ready() { [[ $(field "$(get /v1/tenants/acme/vclusters/train)" state) == READY ]]; }
wait_for "acme/train READY" 60 ready

cat >"$dir/kubeconfig.lua" <<LUA
wrk.method = "POST"
wrk.body = '{"ttl":"1h","role":"view"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $token"
LUA
for c in ${connections[*]}; do
  echo "== POST .../vclusters/train:kubeconfig (wrk -t1 -c$c, ${secs}s)"
  wrk -t1 -c"$c" -d"${secs}s" --latency -s "$dir/kubeconfig.lua" \
    "http://127.0.0.1:$http_port/v1/tenants/acme/vclusters/train:kubeconfig" | sed -n '1,20p'
done
