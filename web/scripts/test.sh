#!/usr/bin/env bash
# Everything CI needs for the portal, from a fresh clone: install exactly the
# locked packages, build (generated API types, type check, bundle, CSP check
# of dist), unit tests, then the browser suite against the septad at
# $SEPTA_SEPTAD (default ../build/bin/septad). Node's test summaries are
# printed; the exit code is nonzero if any step or test failed. Skipped e2e
# tests are counted and named at the end (SEPTA_WEB_NO_SKIPS=1: they fail).
set -uo pipefail
cd "$(dirname "$0")/.."

export SEPTA_SEPTAD="${SEPTA_SEPTAD:-$(cd .. && pwd)/build/bin/septad}"
failed=()

step() {
  local name=$1
  shift
  echo "== web: $name"
  if ! "$@"; then
    echo "== web: $name FAILED"
    failed+=("$name")
    return 1
  fi
}

step "npm ci" npm ci --no-audit --no-fund || { echo "web: cannot continue without node_modules"; exit 1; }
step "build" npm run build || { echo "web: cannot test without a build"; exit 1; }
step "unit tests" npm test
if [[ ! -x "$SEPTA_SEPTAD" ]]; then
  echo "== web: e2e FAILED: no septad at $SEPTA_SEPTAD (build it, or set SEPTA_SEPTAD)"
  failed+=("e2e")
else
  e2e_log=$(mktemp)
  step "e2e (septad $SEPTA_SEPTAD)" bash -c 'set -o pipefail; npm run e2e 2>&1 | tee "$1"' _ "$e2e_log"
  skipped=$(grep -oE '^# skipped [0-9]+' "$e2e_log" | awk '{s += $3} END {print s + 0}')
  if ((skipped > 0)); then
    echo "== web: $skipped e2e tests SKIPPED (not passed):"
    grep -E '# SKIP' "$e2e_log" | sed 's/^ */   /'
    [[ "${SEPTA_WEB_NO_SKIPS:-}" == 1 ]] && failed+=("e2e skips")
  fi
  rm -f "$e2e_log"
fi

if ((${#failed[@]})); then
  echo "web: FAILED: ${failed[*]}"
  exit 1
fi
echo "web: all passed"
