# shellcheck shell=bash
# Shared by the crash runs (septad_crash_run.sh, septad_syncer_crash_e2e.sh,
# septad_usage_crash_e2e.sh;
# sourced, not run): the binaries of a build, the seeded draws, and a world
# that outlives septad: a throwaway PostgreSQL database and a separate
# septa-kubesim host. Sources septad_lib.sh (the data directory, start).
#
# crash_args USAGE ARGS...: the runs' flags: --build DIR, --seed S, --testdb
# DIR and --kubectl PATH into $build, $seed, $testdb and $kubectl; any other
# "--name value" into ${crash_extra[name]} (the caller checks those). Prints
# USAGE and exits 2 on anything else, or without --build (crash_usage).
# shellcheck disable=SC2034 # read by the caller
declare -A crash_extra=()
crash_usage() {
  echo "usage: $0 $1" >&2
  exit 2
}
crash_args() {
  local usage=$1
  shift
  build="" seed="" testdb="" kubectl=$(command -v kubectl || echo /usr/bin/kubectl)
  while (($#)); do
    [[ $1 == --* && $# -ge 2 ]] || crash_usage "$usage"
    case $1 in
    --build) build=$2 ;;
    --seed) seed=$2 ;;
    --testdb) testdb=$2 ;;
    --kubectl) kubectl=$2 ;;
    *) crash_extra[${1#--}]=$2 ;;
    esac
    shift 2
  done
  [[ -n $build ]] || crash_usage "$usage"
}

# crash_setup BUILD KUBECTL SEED: checks the binaries ($septad, $kubesim,
# $admin, $testdb_bin, KUBECTL), picks a seed when SEED is empty and seeds
# $RANDOM with it; prints nothing (the caller prints its replay line).
crash_setup() {
  septad=$1/bin/septad
  kubesim=$1/bin/septa-kubesim
  admin=$1/tests/septa-vcp-admin
  testdb_bin=$1/tests/septa-testdb
  local binary
  for binary in "$septad" "$kubesim" "$admin" "$testdb_bin" "$2"; do
    [[ -x $binary ]] || { echo "missing $binary (cmake --build $1)" >&2; exit 2; }
  done
  seed=${3:-$(($(date +%s%N) / 1000 % 1000000))}
  # Every draw must happen in this shell, never in a subshell, for the sequence to be the seed's.
  RANDOM=$seed
}

# shellcheck source-path=SCRIPTDIR source=septad_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/septad_lib.sh"
kubesim_pid="" own_testdb=""
crash_cleanup() {
  [[ -n $kubesim_pid ]] && kill "$kubesim_pid" 2>/dev/null
  [[ -n $own_testdb ]] && "$testdb_bin" stop "$own_testdb" >/dev/null 2>&1
  cleanup
}
trap crash_cleanup EXIT

# draw N: a uniform draw in [0, N) into $r.
draw() { r=$(((RANDOM << 15 | RANDOM) % $1)); }

# crash_world DBNAME [KUBESIM-ARGS...]: $db_url, a new database DBNAME on the
# test run's PostgreSQL ($testdb) or on one of its own; septa-kubesim on a
# free port with the sample inventory and KUBESIM-ARGS, its kubeconfig in
# $dir/host.kubeconfig; $vport, the fixed virtual listener every septad start
# uses (so kubeconfigs stay valid across restarts).
crash_world() {
  local name=$1
  shift
  if [[ -z $testdb ]]; then
    own_testdb=$dir/pg
    "$testdb_bin" start "$own_testdb" >/dev/null || fail "septa-testdb start"
    testdb=$own_testdb
  fi
  db_url=$("$admin" createdb "$testdb" "$name") || fail "createdb"
  "$kubesim" --listen 127.0.0.1:0 --inventory "$(dirname "${BASH_SOURCE[0]}")/../../../deploy/dev/inventory.yaml" \
    --kubeconfig-out "$dir/host.kubeconfig" "$@" >"$dir/kubesim.log" 2>&1 &
  kubesim_pid=$!
  host_written() { [[ -f $dir/host.kubeconfig ]]; }
  wait_for "septa-kubesim's kubeconfig" 10 host_written
  vport=$(free_port)
}

# run_septad [ARGS]: septad on the world (extra ARGS go to it); the last
# start's log is kept in $dir/septad-earlier.log; $restarts_ms adds up the
# starts' times to serving.
restarts_ms=0
run_septad() {
  [[ -s $log ]] && cat "$log" >>"$dir/septad-earlier.log"
  start --database-url "$db_url" --kubeconfig "$dir/host.kubeconfig" --vcluster-addr "127.0.0.1:$vport" "$@"
  restarts_ms=$((restarts_ms + ready_ms))
}
