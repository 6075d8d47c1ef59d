#!/usr/bin/env bash
# Installs this folder's node_modules (the test OpenID provider's packages,
# exactly as package-lock.json pins them) when missing or stale; prints nothing
# when all is well, the reason and npm's output when not (exit 1).
# Stale: the stamp node_modules/.septa-lock.sha256 (written after a good
# install) is not the sha256 of package.json + package-lock.json + node's
# major version. One install at a time (parallel ctest runs): a flock on this
# folder; the second caller finds the work done.
# Usage: bash tests/e2e/oidc/idp/ensure.sh   (from anywhere)
set -euo pipefail

dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
stamp=$dir/node_modules/.septa-lock.sha256

die() {
  echo "oidc idp ensure.sh: $*" >&2
  exit 1
}

for tool in node npm flock sha256sum; do
  command -v "$tool" >/dev/null || die "needs $tool on PATH"
done
major=$(node -p 'process.versions.node.split(".")[0]')
((major >= 20)) || die "needs Node.js 20 or later, this is $(node --version)"

want=$( (cat "$dir/package.json" "$dir/package-lock.json" && echo "node $major") | sha256sum | cut -d' ' -f1)
fresh() {
  [[ -f $stamp && $(<"$stamp") == "$want" && -f $dir/node_modules/oidc-provider/package.json ]]
}

fresh && exit 0
exec {lock}<"$dir"
flock "$lock"
fresh && exit 0

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! (cd "$dir" && npm ci --no-audit --no-fund --prefer-offline) >"$log" 2>&1; then
  cat "$log" >&2
  die "npm ci failed in $dir (is the npm registry reachable?)"
fi
echo "$want" >"$stamp"
