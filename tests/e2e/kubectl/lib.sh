# What the kubectl e2e scripts share: starting septa-kubesim and the checks.
# Source it after setting KUBECTL; `failures` counts the failed checks.
failures=0
WORK=$(mktemp -d)
SIM_PID=""
cleanup() {
  [[ -n $SIM_PID ]] && kill "$SIM_PID" 2>/dev/null && wait "$SIM_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

# start_kubesim <septa-kubesim> [options...]: on a free port, with its admin
# kubeconfig in $KUBECONFIG (written atomically, so it is complete once seen).
start_kubesim() {
  export KUBECONFIG=$WORK/kubeconfig
  "$1" --listen 127.0.0.1:0 --kubeconfig-out "$KUBECONFIG" "${@:2}" >"$WORK/sim.log" 2>&1 &
  SIM_PID=$!
  for _ in $(seq 100); do [[ -s $KUBECONFIG ]] && break; sleep 0.05; done
  [[ -s $KUBECONFIG ]] || { echo "kubesim did not write its kubeconfig"; cat "$WORK/sim.log"; exit 1; }
}

# finish: the verdict, with kubesim's log when a check failed.
finish() {
  if ((failures > 0)); then
    echo "$failures kubectl check(s) failed"; echo "--- kubesim log"; cat "$WORK/sim.log"
    exit 1
  fi
  echo "all kubectl checks passed"
}

k() { "$KUBECTL" --request-timeout=10s "$@"; }
# record <description> <passed: 0 or 1> <why it failed> <output>
record() {
  if (($2)); then
    echo "ok   $1"
  else
    echo "FAIL $1: $3"
    echo "$4" | sed 's/^/       /'
    failures=$((failures + 1))
  fi
}
# expect <description> <expected substring> <command...>: runs the command and
# checks that its combined output contains the expected text.
expect() {
  local what=$1 want=$2 out passed=0
  shift 2
  out=$("$@" 2>&1)
  [[ $out == *"$want"* ]] && passed=1
  record "$what" $passed "expected \"$want\" in:" "$out"
}
# expect_eq <description> <expected> <command...>: the command's combined
# output must be exactly the expected text.
expect_eq() {
  local what=$1 want=$2 out passed=0
  shift 2
  out=$("$@" 2>&1)
  [[ $out == "$want" ]] && passed=1
  record "$what" $passed "expected \"$want\", got:" "$out"
}
# expect_absent <description> <text> <command...>: the command must succeed
# and its output must not contain the text.
expect_absent() {
  local what=$1 unwanted=$2 out passed=0
  shift 2
  out=$("$@" 2>&1) && [[ $out != *"$unwanted"* ]] && passed=1
  record "$what" $passed "\"$unwanted\" in (or the command failed):" "$out"
}
# expect_fail <description> <command...>: the command must fail.
expect_fail() {
  local what=$1 out passed=1
  shift
  out=$("$@" 2>&1) && passed=0
  record "$what" $passed "succeeded:" "$out"
}
# wait_for_line <file> <regex> <seconds>: true once the file has a matching line.
wait_for_line() {
  local deadline=$((SECONDS + $3))
  until grep -q -- "$2" "$1" 2>/dev/null; do
    ((SECONDS < deadline)) || return 1
    sleep 0.05
  done
}
