#!/usr/bin/env bash
# septa-syncer-bench end to end with small numbers: every phase reports, the
# restarted syncer writes nothing (the bench exits 1 otherwise), and bad flags
# are refused naming the flag. Usage: septa_syncer_bench_e2e.sh BENCH
set -uo pipefail
bench=$1
failures=0
check() {  # $1 = what, $2 = haystack, $3 = needle
  if [[ $2 == *"$3"* ]]; then echo "ok: $1"; else echo "FAIL: $1: no '$3' in: $2"; failures=$((failures + 1)); fi
}

out=$("$bench" --clusters 6 --pods-per-cluster 3 --paced-clusters 2 --rate 50 --idle-seconds 1 --durable false 2>&1)
rc=$?
echo "$out"
check "exits 0" "rc=$rc" "rc=0"
check "names the setup" "$out" "septa-syncer-bench: 6 virtual clusters x 3 pods (18 pods; 2 clusters' 6 pods paced"
check "fill phase" "$out" "fill: 12 pods in 4 virtual clusters created in "
check "paced phase" "$out" "paced: 6 pods created in "
check "down latency" "$out" "virtual create's reply -> host pod ADDED (6 pods): p50 "
check "up latency" "$out" "host pod Running -> virtual pod Running (6 pods): p50 "
check "status phase" "$out" "host status patch sent -> virtual pod shows it (6 pods): p50 "
check "idle window" "$out" "idle: 6 virtual clusters x 3 pods watched"
check "sweep" "$out" "sweep: one resync of 6 virtual clusters: "
check "memory" "$out" "memory: the syncer held "
check "baseline" "$out" "idle without the syncer: "
check "restart writes nothing" "$out" "host writes 0, virtual clusters with objects written 0"

out=$("$bench" --rate 0 2>&1)
rc=$?
check "a bad flag is refused" "rc=$rc" "rc=105"
check "naming the flag" "$out" "--rate"
out=$("$bench" --clusters 2 --paced-clusters 3 2>&1)
rc=$?
check "more paced clusters than clusters is refused" "rc=$rc" "rc=105"
check "naming that flag" "$out" "--paced-clusters"

if ((failures)); then echo "$failures check(s) failed"; exit 1; fi
echo "all checks passed"
