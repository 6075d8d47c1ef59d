#!/usr/bin/env bash
# The septad binary as a person runs it: embedded PostgreSQL under a fresh
# data directory, the bootstrap admin token printed once and written 0600,
# the simulated host cluster answering real kubectl through the kubeconfig
# septad writes, REST and gRPC answering, SIGTERM draining cleanly, and a
# second start reusing everything (no new token, no re-applied migration),
# then a third start with TLS: HTTPS for REST (curl), TLS for gRPC (septactl),
# and a SIGKILLed septad whose PostgreSQL stops anyway.
set -euo pipefail
septad=$1
septactl=$2
source "$(dirname "$0")/septad_lib.sh"

stop() {
  kill -TERM "$pid"
  wait "$pid" || fail "septad exited non-zero after SIGTERM"
  pid=""
  grep -q "septad stopped" "$log" || fail "no clean stop logged"
}

# A --config file that exists but cannot be read stops septad (exit 2) instead
# of starting on defaults. As root every mode is readable, so the file is
# /proc/self/mem: a regular file whose first page read fails with EIO.
code=0
timeout 30 "$septad" --data-dir "$dir/data" --config /proc/self/mem --database-url postgresql://127.0.0.1:1/none \
  >"$log" 2>&1 || code=$?
[[ $code == 2 ]] || fail "septad with an unreadable --config exited $code, not 2"
grep -q "cannot read /proc/self/mem: Input/output error" "$log" || fail "the --config error does not name the file"

start
grep -q "Bootstrap admin token" "$log" || fail "bootstrap token not printed"
token=$(cat "$dir/data/admin.token")
[[ $(stat -c %a "$dir/data/admin.token") == 600 ]] || fail "admin.token is not mode 0600"
grep -q "$token" "$log" || fail "printed token differs from admin.token"
curl -sf "http://127.0.0.1:$http_port/readyz" >/dev/null || fail "/readyz"
[[ $(stat -c %a "$dir/data/kubeconfig") == 600 ]] || fail "kubeconfig is not mode 0600"
nodes=$(kubectl --kubeconfig "$dir/data/kubeconfig" get nodes -o name) || fail "kubectl get nodes"
grep -q "node/h100-0" <<<"$nodes" || fail "the simulated cluster has no h100-0: $nodes"
[[ $(kubectl --kubeconfig "$dir/data/kubeconfig" get node t4-0 -o jsonpath='{.status.allocatable.nvidia\.com/gpu}') == 4 ]] ||
  fail "t4-0 does not offer 4 GPUs"
curl -sf -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  -d '{"name":"e2e","trust_tier":"shared"}' "http://127.0.0.1:$http_port/v1/tenants" >/dev/null || fail "create tenant"
echo "first start: $(grep -o 'ready in [0-9]* ms' "$log" | head -1)"
stop

start
grep -q "Bootstrap admin token" "$log" && fail "second start printed a new token"
grep -q "applied migration" "$log" && fail "second start re-applied a migration"
tenant=$(curl -sf -H "Authorization: Bearer $token" "http://127.0.0.1:$http_port/v1/tenants/e2e") ||
  fail "tenant did not survive a restart"
grep -q '"name":"e2e"' <<<"$tenant" || fail "tenant did not survive a restart: $tenant"
echo "second start: $(grep -o 'ready in [0-9]* ms' "$log" | tail -1)"
stop

# TLS: a self-signed certificate for 127.0.0.1 serves as its own CA.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=septad \
  -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" -keyout "$dir/tls.key" -out "$dir/tls.crt" 2>/dev/null
start --tls-cert-file "$dir/tls.crt" --tls-key-file "$dir/tls.key"
grep -q "REST https://" "$log" || fail "the ready line does not say https"
curl -sf --cacert "$dir/tls.crt" "https://127.0.0.1:$http_port/healthz" >/dev/null || fail "HTTPS /healthz"
curl -sf --cacert "$dir/tls.crt" -H "Authorization: Bearer $token" "https://127.0.0.1:$http_port/v1/tenants/e2e" |
  grep -q '"name":"e2e"' || fail "HTTPS GET tenant"
curl -sf "http://127.0.0.1:$http_port/healthz" >/dev/null 2>&1 && fail "plain HTTP answered on the TLS port"
"$septactl" --server "127.0.0.1:$grpc_port" --ca-file "$dir/tls.crt" --token "$token" tenant get e2e -o json |
  grep -q '"name": *"e2e"' || fail "septactl over TLS"
if "$septactl" --server "127.0.0.1:$grpc_port" --token "$token" --timeout 2s tier list >/dev/null 2>&1; then
  fail "septactl in plaintext reached the TLS port"
fi
stop

# SIGKILL: septad cannot stop its PostgreSQL; its lifeline process does.
start
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
pid=""
for _ in $(seq 1 150); do
  [[ -f $dir/data/postgres/data/postmaster.pid ]] || break
  sleep 0.1
done
[[ -f $dir/data/postgres/data/postmaster.pid ]] && fail "PostgreSQL still runs 15 s after septad was killed"
start
grep -q "adopted" "$log" && fail "the next start found a server left running"
stop
echo "septad e2e: ok"
