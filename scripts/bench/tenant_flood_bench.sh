#!/usr/bin/env bash
# Benchmark of hostile-tenant finding M7: one tenant floods its virtual
# cluster (small and big ConfigMaps, namespaces, watches of every ConfigMap)
# while another tenant's GET p99 must stay <= 100 ms with no timeout. Runs
# septad on its embedded PostgreSQL and simulated cluster, two isolated
# tenants (victim/v1, mallory/m1) with admin kubeconfigs from the credentials
# API, then services/cmd/septa-flood-bench: the victim alone for BASELINE
# seconds, then the attacker (its own process) and, 2 s into the flood, the
# victim again for FLOOD seconds. Prints septad's RSS before and after and
# the machine's load, which docs/BENCHMARKS.md records with the figures.
# Extra arguments go to the attacker (--writers, --watches, --big, ...).
# Usage: [SEPTAD=path] [BASELINE=10] [FLOOD=30] scripts/bench/tenant_flood_bench.sh [build-dir] [attacker options...]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
shift $(($# < 1 ? $# : 1))
septad=${SEPTAD:-$PWD/$build/bin/septad}  # SEPTAD: another build to compare
source tests/e2e/septad/septad_lib.sh

vcluster_port=$(free_port)
start --vcluster-addr "127.0.0.1:$vcluster_port"
token=$(cat "$dir/data/admin.token")
for t in victim mallory; do
  [[ $(api POST /v1/tenants "{\"name\":\"$t\",\"trust_tier\":\"isolated\"}") == 201 ]] || fail "create tenant $t"
done
for vc in victim/v1 mallory/m1; do
  [[ $(api POST "/v1/tenants/${vc%/*}/vclusters" \
    "{\"name\":\"${vc#*/}\",\"capacity\":{\"mig\":[{\"profile\":\"1g.10gb\",\"count\":1}]}}") == 201 ]] ||
    fail "create $vc: $(reply)"
done
ready() { [[ $(field "$(get "/v1/tenants/${1%/*}/vclusters/${1#*/}")" state) == READY ]]; }
for vc in victim/v1 mallory/m1; do
  wait_for "$vc READY" 60 ready "$vc"
  [[ $(api POST "/v1/tenants/${vc%/*}/vclusters/${vc#*/}:kubeconfig" '{"ttl":"2h","role":"admin"}') == 200 ]] ||
    fail "kubeconfig of $vc: $(reply)"
  json "r['kubeconfig']" >"$dir/${vc%/*}.kubeconfig"
done
rss() { echo "$(($(awk '/VmRSS/ {print $2}' "/proc/$pid/status") / 1024)) MB"; }
echo "septad RSS before: $(rss); load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
baseline=${BASELINE:-10}
flood=${FLOOD:-30}
bench=$build/bin/septa-flood-bench
status=0
"$bench" victim --kubeconfig "$dir/victim.kubeconfig" --seconds "$baseline" --label alone || status=$?
nice -n "${ATTACKER_NICE:-19}" "$bench" attacker --kubeconfig "$dir/mallory.kubeconfig" --seconds $((flood + 4)) "$@" >"$dir/attacker.out" 2>&1 &
attacker=$!
sleep 2
"$bench" victim --kubeconfig "$dir/victim.kubeconfig" --seconds "$flood" --label flooded || status=$?
echo "septad RSS at the end of the flood: $(rss); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
wait "$attacker" || status=$?
cat "$dir/attacker.out"
exit "$status"
