#!/usr/bin/env bash
# Everything CI needs for the portal, from a fresh clone: install exactly the
# locked packages, build (generated API types, type check, bundle, CSP check
# of dist), unit tests, then the browser suite against the septad at
# $SEPTA_SEPTAD (default ../build/bin/septad). Node's test summaries are
# printed; the exit code is nonzero if any step or test failed.
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
  step "e2e (septad $SEPTA_SEPTAD)" npm run e2e
fi

if ((${#failed[@]})); then
  echo "web: FAILED: ${failed[*]}"
  exit 1
fi
echo "web: all passed"
