#!/usr/bin/env bash
# Bootstraps (installs missing Debian packages), builds and runs every check.
# This is the command CI runs (.ci/run). Stages, in this order:
#   main  gcc build of everything (-O2, line tables), the whole test suite,
#         the layering check (build/)
#   asan  clang AddressSanitizer + UndefinedBehaviorSanitizer build (-O0) of the unit
#         and integration tests, then the fuzzers in fuzz/ for a bounded time
#         (build-asan/)
#   tsan  clang ThreadSanitizer build (-O1) of the unit and integration tests
#         (build-tsan/)
#   web   the portal (web/scripts/test.sh): npm ci, its build and unit tests,
#         then its browser suite in Debian's Chromium against build/'s septad
#         (so after main; a skipped browser test fails the stage)
# The sanitizer trees build in the background at nice 19 from the start
# (start_sanitizer_builds below); their tests run in this order.
# SEPTA_CHECKS=main|asan|tsan|web|all (default all; a comma list such as
# "main,tsan" works too) picks the stages. Arguments go to every ctest run
# (e.g. -R store). Any failing stage fails the script; each stage's time and
# the total are printed at the end, with a warning past SEPTA_WARN_AFTER
# seconds (default 3600). Each build directory has its own test PostgreSQL
# (<build>/testdb, a Unix socket there), so stages never share a server.
set -euo pipefail
cd "$(dirname "$0")/../.."

CHECKS=${SEPTA_CHECKS:-all}
BUILD_DIR=${SEPTA_BUILD_DIR:-build}
CTEST_ARGS=("$@")
TIMINGS=()
if [[ ! $CHECKS =~ ^(all|(main|asan|tsan|web)(,(main|asan|tsan|web))*)$ ]]; then
  echo "test.sh: SEPTA_CHECKS must be all, main, asan, tsan, web or a comma list of them, not '$CHECKS'" >&2
  exit 2
fi

want() {  # want STAGE: is STAGE selected by SEPTA_CHECKS?
  [[ $CHECKS == all || ",$CHECKS," == *",$1,"* ]]
}

timed() {  # timed LABEL COMMAND...: runs the command, records how long it took
  local label=$1 start=$SECONDS
  shift
  echo "=== $label"
  "$@"
  TIMINGS+=("$(printf '%-12s %4d s' "$label" $((SECONDS - start)))")
  echo "=== $label: $((SECONDS - start)) s"
}

run_ctest() {  # run_ctest DIR [ctest args...]
  local dir=$1
  shift
  ctest --test-dir "$dir" --output-on-failure --no-tests=error -j2 --timeout 900 "$@" "${CTEST_ARGS[@]}"
}

# ccache (the bootstrap installs it) keeps every compile outside the clone, in
# CCACHE_DIR (ccache's default, ~/.cache/ccache): a second run on the same
# machine, even from a fresh clone at the same path, recompiles only what
# changed. The main tree's objects take about 130 MB of it, far inside
# ccache's default bound of 5 GB. Paths stay in the key: a clone elsewhere
# compiles anew, since the objects hold their source paths (test data
# directories, __FILE__).
LAUNCHER=()
if command -v ccache >/dev/null 2>&1; then
  LAUNCHER=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

# Every build is a unity build: CMake compiles each folder's .cc files in
# batches of 8 per translation unit, so the heavy headers (Boost.Beast and
# Asio, nlohmann/json, gRPC, GoogleTest) are parsed and their templates
# instantiated once per batch instead of once per file. On 2 cores that cuts
# a cold build to about a third (docs/BENCHMARKS.md, "CI"), which is what
# keeps the three builds inside CI's 90 minutes. The price: a file-local
# helper's name must be unique within its folder's target (a clash is a
# compile error here, never a silent mix-up).
build() {  # build DIR [cmake options...]: configures and builds DIR
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSEPTA_WERROR=ON -DCMAKE_UNITY_BUILD=ON \
    "${LAUNCHER[@]}" "$@"
  cmake --build "$dir"
}

build_sanitizer() {  # build_sanitizer DIR address|thread
  build "$1" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DSEPTA_SANITIZE="$2"
}

# The sanitizer trees are built in the background from the start, one after
# the other, at the lowest CPU priority (nice 19), while the main stage
# builds and tests: its tests leave the cores idle for about a quarter of
# their time (they wait on PostgreSQL, sockets and child processes), and a
# compile at nice 19 takes only that idle time. A sanitizer stage starts by
# waiting for its tree; that wait is its "build" time, and its build log is
# printed then. While a sanitizer stage's tests run, the background build is
# stopped (SIGSTOP) and resumed after: those are the run's slowest tests,
# nearest their time bounds, and the fuzzers use every core anyway.
declare -A SANITIZER=([asan]=address [tsan]=thread)
BACKGROUND_BUILDS=
start_sanitizer_builds() {
  local fifo
  fifo=$(mktemp -u)
  mkfifo "$fifo"
  exec {BUILT_FD}<>"$fifo"  # one line per finished tree: "<stage> <exit code> <seconds>"
  rm -f "$fifo"
  set -m  # its own process group, so that an early exit stops every compile
  (
    renice -n 19 -p "$BASHPID" >/dev/null
    for stage in asan tsan; do
      want "$stage" || continue
      start=$SECONDS
      rc=0
      mkdir -p "build-$stage"
      build_sanitizer "build-$stage" "${SANITIZER[$stage]}" >"build-$stage/septa-build.log" 2>&1 || rc=$?
      echo "$stage $rc $((SECONDS - start))" >&"$BUILT_FD"
      ((rc == 0)) || exit "$rc"
    done
  ) &
  BACKGROUND_BUILDS=$!
  set +m
}

pause_background_builds() {  # pause_background_builds STOP|CONT
  if [[ -n $BACKGROUND_BUILDS ]]; then kill -"$1" -- -"$BACKGROUND_BUILDS" 2>/dev/null || true; fi
}

await_sanitizer_build() {  # await_sanitizer_build STAGE: waits for STAGE's tree; fails as its build did
  local stage rc took
  read -r stage rc took <&"$BUILT_FD"
  cat "build-$stage/septa-build.log"
  echo "=== $stage: built in the background in $took s (exit code $rc)"
  [[ $stage == "$1" ]] && return "$rc"
}

stage_main() {
  # -g1 (line tables, as the sanitizer builds): full debug info cost a third
  # of the compile time and no test reads it; a debugging session configures
  # its own build type.
  # The tests' own code at -O1 (SEPTA_TEST_CODE_FLAGS, tests/CMakeLists.txt):
  # the code they test stays at -O2, and test code is half the build.
  timed main.build build "$BUILD_DIR" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" -DSEPTA_TEST_CODE_FLAGS=-O1
  timed main.test run_ctest "$BUILD_DIR"
}

stage_asan() {
  timed asan.build await_sanitizer_build asan
  pause_background_builds STOP
  if ((${#CTEST_ARGS[@]} > 0)); then
    timed asan.test run_ctest build-asan
  else
    # The tests first, then the fuzzers (label fuzz), so that fuzzers do not
    # eat the CPU the tests' timeouts assume.
    timed asan.test run_ctest build-asan -LE fuzz
    timed asan.fuzz run_ctest build-asan -L fuzz
  fi
  pause_background_builds CONT
}

stage_web() {
  if [[ ! -x $BUILD_DIR/bin/septad ]]; then
    timed web.septad cmake --build "$BUILD_DIR" --target septad
  fi
  timed web.test env SEPTA_SEPTAD="$PWD/$BUILD_DIR/bin/septad" SEPTA_WEB_NO_SKIPS=1 bash web/scripts/test.sh
}

stage_tsan() {
  timed tsan.build await_sanitizer_build tsan
  timed tsan.test run_ctest build-tsan
}

# CI cuts a run at 90 minutes and then nothing lands; past WARN_AFTER
# seconds (SEPTA_WARN_AFTER, default an hour) the report says so, so that a
# run drifting towards the limit is seen while it still passes.
WARN_AFTER=${SEPTA_WARN_AFTER:-3600}
report() {
  echo "=== stage timings (SEPTA_CHECKS=$CHECKS)"
  printf '  %s\n' "${TIMINGS[@]}"
  printf '  %-12s %4d s (%d m %02d s)\n' total "$SECONDS" $((SECONDS / 60)) $((SECONDS % 60))
  if ((SECONDS > WARN_AFTER)); then
    echo "=== WARNING: this run took $((SECONDS / 60)) minutes, over the $((WARN_AFTER / 60)) it should stay within;" \
      "CI cuts a run at 90 and lands nothing (docs/BENCHMARKS.md \"CI\")"
  fi
}
finish() {
  if [[ -n $BACKGROUND_BUILDS ]]; then
    kill -- -"$BACKGROUND_BUILDS" 2>/dev/null || true
    pause_background_builds CONT  # a stopped process acts on SIGTERM only once resumed
  fi
  report
}
trap finish EXIT

timed bootstrap bash deploy/dev/bootstrap.sh
if want asan || want tsan; then start_sanitizer_builds; fi
if want main; then stage_main; fi
if want web; then stage_web; fi
if want asan; then stage_asan; fi
if want tsan; then stage_tsan; fi
