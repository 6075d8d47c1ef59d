#!/usr/bin/env bash
# septa-bench placement end to end: the table, --json with --packing-bound,
# and the one-line errors (exit 2) for bad input. Usage: septa_bench_e2e.sh BENCH FIXTURES
set -uo pipefail
bench=$1 fixtures=$2
failures=0
check() {  # $1 = what, $2 = haystack, $3 = needle
  if [[ $2 == *"$3"* ]]; then echo "ok: $1"; else echo "FAIL: $1: no '$3' in: $2"; failures=$((failures + 1)); fi
}
absent() {  # $1 = what, $2 = haystack, $3 = needle that must not be there
  if [[ $2 != *"$3"* ]]; then echo "ok: $1"; else echo "FAIL: $1: '$3' in: $2"; failures=$((failures + 1)); fi
}
run() { out=$("$bench" placement --nodes "$fixtures/nodes.csv" "$@" 2>&1); rc=$?; }

run --pods "$fixtures/pods.csv" --policy all --seeds 1-3
check "table exits 0" "rc=$rc" "rc=0"
for policy in random bestfit gpupacking dotproduct gpuclustering fgd septa; do check "table row $policy" "$out" $'\n'"$policy "; done
check "table names the trace" "$out" "trace pods.csv: 2 nodes, 3 GPUs, 4 pods, 3 seeds"

run --pods "$fixtures/pods.csv" --policy fgd,septa --seeds 1-2 --packing-bound
check "bound table exits 0" "rc=$rc" "rc=0"
check "bound table header" "$out" "packing bound: the same fractional pods packed"
# Both 500-milli pods end on different GPUs (the 2-GPU pod needs the T4s
# whole); packed together they need one GPU, and 1.5 in the LP relaxation
# (a lone 500 is half of a 500+500 GPU).
check "bound table septa row" "$out" "septa                      2.0          1.5"

run --pods "$fixtures/pods.csv" --policy septa --seeds 1-2 --packing-bound --json
check "json exits 0" "rc=$rc" "rc=0"
check "json trace" "$out" '"trace":"pods.csv"'
check "json policy" "$out" '"policy":"septa"'
check "json fields" "$out" '"alloc_ratio_130":{'
check "json bound" "$out" '"packing_bound":{"ceiling_130":'
check "json bound values" "$out" '"fractional_gpus":2.0,"packed_gpus":1.5,"recoverable_gpus":0.0'

run --pods "$fixtures/pods.csv" --policy septa --seeds 1 --json
check "json without the bound exits 0" "rc=$rc" "rc=0"
absent "no bound unless asked" "$out" "packing_bound"

run --pods "$fixtures/pods_bad_number.csv" --policy septa --seeds 1
check "bad number exits 2" "rc=$rc" "rc=2"
check "bad number names file, line and column" "$out" "pods_bad_number.csv:3:3: 'lots' is not an integer"
run --pods "$fixtures/pods_missing_column.csv" --policy septa --seeds 1
check "missing column exits 2" "rc=$rc" "rc=2"
check "missing column named" "$out" "memory_mib: $fixtures/pods_missing_column.csv:1: missing column"
run --pods "$fixtures/pods.csv" --policy best --seeds 1
check "unknown policy exits 2" "rc=$rc" "rc=2"
check "unknown policy named" "$out" "unknown policy 'best'"
run --pods "$fixtures/pods.csv" --policy septa --seeds x-1
check "bad seeds exit 2" "rc=$rc" "rc=2"
check "bad seeds named" "$out" "--seeds: 'x-1' is not a seed"
run --pods "$fixtures/no-such-file.csv" --policy septa --seeds 1
check "missing file exits 2" "rc=$rc" "rc=2"
check "missing file named" "$out" "cannot read $fixtures/no-such-file.csv"

if ((failures)); then echo "$failures check(s) failed"; exit 1; fi
echo "all checks passed"
