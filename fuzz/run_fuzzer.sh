#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time, as CTest test fuzz.<name>:
#   run_fuzzer.sh FUZZER SEED_DIR WORK_DIR MAX_LEN SECONDS
# The committed seeds (SEED_DIR) are read, never written: new inputs go to
# WORK_DIR/corpus, and a crashing input to WORK_DIR/crash-* (printed in the
# log). Any crash, leak, timeout or sanitizer report fails the test; turn the
# input into a seed file and a unit test (fuzz/README.md).
set -euo pipefail
fuzzer=$1 seeds=$2 work=$3 max_len=$4 seconds=$5

mkdir -p "$work/corpus"
# -timeout: one input taking 10 s is a hang. -rss_limit_mb: the parsers must
# stay bounded on hostile input (issue 9 #9).
exec "$fuzzer" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" "$seeds"
