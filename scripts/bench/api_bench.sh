#!/usr/bin/env bash
# API benchmark of the foundation issue: septad with its embedded PostgreSQL
# on this machine, loaded from a second process on loopback.
#   GET  /v1/tenants/{name}  wrk, keep-alive           (target >= 5,000/s, p99 < 10 ms)
#   POST /v1/tenants         wrk with unique names     (target >= 500/s)
#   gRPC GetTenant           septa-grpc-load
# Usage: scripts/bench/api_bench.sh [build-dir] [seconds]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
secs=${2:-15}
dir=$(mktemp -d /tmp/septa-bench.XXXXXX)
http_port=18480; grpc_port=18490
"$build/bin/septad" --data-dir "$dir" --http-addr 127.0.0.1:$http_port --grpc-addr 127.0.0.1:$grpc_port \
  --log-level warn >"$dir/septad.log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 1 300); do [[ -f $dir/admin.token ]] && curl -sf localhost:$http_port/readyz >/dev/null && break; sleep 0.1; done
token=$(cat "$dir/admin.token")
auth="Authorization: Bearer $token"
curl -sf -H "$auth" -H 'Content-Type: application/json' -d '{"name":"bench","trust_tier":"shared"}' \
  localhost:$http_port/v1/tenants >/dev/null

echo "== GET /v1/tenants/bench (wrk -t1 -c32, ${secs}s)"
wrk -t1 -c32 -d"${secs}s" --latency -H "$auth" "http://127.0.0.1:$http_port/v1/tenants/bench" | sed -n '1,20p'

cat >"$dir/post.lua" <<LUA
counter = 0
request = function()
  counter = counter + 1
  local body = string.format('{"name":"b-%d-%d","trust_tier":"shared"}', math.random(1, 1000000000), counter)
  return wrk.format("POST", "/v1/tenants", {["Content-Type"]="application/json", ["Authorization"]="Bearer $token"}, body)
end
LUA
echo "== POST /v1/tenants (wrk -t1 -c16, ${secs}s)"
wrk -t1 -c16 -d"${secs}s" --latency -s "$dir/post.lua" "http://127.0.0.1:$http_port" | sed -n '1,20p'

echo "== gRPC GetTenant (16 callers, ${secs}s)"
"$build/bin/septa-grpc-load" --server 127.0.0.1:$grpc_port --token "$token" --tenant bench --threads 16 --seconds "$secs"
