#!/usr/bin/env bash
# Benchmark of the credentials issue: POST /v1/tenants/acme/vclusters/train:kubeconfig
# ({"ttl":"1h","role":"view"}) against septad on its embedded, durable
# PostgreSQL and simulated cluster, loaded by wrk over keep-alive connections
# from the same machine. Targets: the built-in CA >= 500/s with p99 <= 20 ms;
# through septa-vaultsim (ISSUER=vault) p99 <= 50 ms.
# Usage: [ISSUER=builtin|vault] scripts/bench/kubeconfig_bench.sh [build-dir] [seconds] [connections...]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
secs=${2:-15}
shift $(($# < 2 ? $# : 2))
connections=("${@:-2 4 8}")
septad=$PWD/$build/bin/septad
source tests/e2e/septad/septad_lib.sh

issuer_args=()
if [[ ${ISSUER:-builtin} == vault ]]; then
  vault_pid=""
  trap '[[ -n $vault_pid ]] && kill -9 "$vault_pid" 2>/dev/null; cleanup' EXIT
  vault_port=$(free_port)
  "$build/bin/septa-vaultsim" --listen "127.0.0.1:$vault_port" --root-token-file "$dir/vault-token" \
    >"$dir/vaultsim.log" 2>&1 &
  vault_pid=$!
  wait_for "septa-vaultsim serving" 10 grep -q "serving" "$dir/vaultsim.log"
  issuer_args=(--issuer vault --vault-addr "http://127.0.0.1:$vault_port" --vault-token-file "$dir/vault-token")
fi
start "${issuer_args[@]}"
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
  echo "== ${ISSUER:-builtin}: POST .../vclusters/train:kubeconfig (wrk -t1 -c$c, ${secs}s)"
  wrk -t1 -c"$c" -d"${secs}s" --latency -s "$dir/kubeconfig.lua" \
    "http://127.0.0.1:$http_port/v1/tenants/acme/vclusters/train:kubeconfig" | sed -n '1,20p'
done
