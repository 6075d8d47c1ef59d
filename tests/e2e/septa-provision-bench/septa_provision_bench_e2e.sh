#!/usr/bin/env bash
# septa-provision-bench end to end with small numbers: every phase reports,
# the restart writes nothing (the bench exits 1 otherwise), and bad flags are
# refused naming the flag. Usage: septa_provision_bench_e2e.sh BENCH
set -uo pipefail
bench=$1
failures=0
check() {  # $1 = what, $2 = haystack, $3 = needle
  if [[ $2 == *"$3"* ]]; then echo "ok: $1"; else echo "FAIL: $1: no '$3' in: $2"; failures=$((failures + 1)); fi
}

out=$("$bench" --paced 4 --rate 20 --count 12 --clients 2 --durable false 2>&1)
rc=$?
echo "$out"
check "exits 0" "rc=$rc" "rc=0"
check "names the host" "$out" "host: kubesim, 2 A100-80GB nodes"
check "paced phase" "$out" "paced: 4 creates at 20.0/s"
check "paced latencies" "$out" "create -> READY: p50 "
check "burst phase" "$out" "burst: 12 creates in "
check "burst all ready" "$out" "all READY "
check "restart reconciles every one" "$out" " of 16 virtual clusters in "
check "restart writes nothing" "$out" "host writes 0, virtual-cluster rows written 0, virtual objects written 0"
check "idle memory" "$out" "idle control planes: 16 loaded"

out=$("$bench" --rate 0 2>&1)
rc=$?
check "a bad flag is refused" "rc=$rc" "rc=105"
check "naming the flag" "$out" "--rate"

if ((failures)); then echo "$failures check(s) failed"; exit 1; fi
echo "all checks passed"
