#!/usr/bin/env bash
# Prints the directory of the object types deploy/tools/schema.py checks the
# renders against, fetching them first if the cache lacks them: the
# TypeScript declarations (.d.ts) of four npm packages, generated from
# Kubernetes' OpenAPI and the CRDs of prometheus-operator and cert-manager
# (no kubeconform, kubeval or JSON-schema collection is packaged for Debian
# or npm; docs/install.md). Fetched with npm from the configured registry and
# checked by their registry integrity (sha512) pinned below.
# Cache: $SEPTA_TOOLS_CACHE (default ~/.cache/septa/tools), about 20 MB.
# Usage: SCHEMAS=$(deploy/tools/schemas.sh)
set -euo pipefail

# name version integrity directory
PACKAGES=(
  "kubernetes-models 5.1.0 sha512-ym4Kiyr8BzGIWj4f853ytVYES1B8C1BdONRP5zodItPD1o//OEKuTwC5nFV3ZJtFGeMqOFbIYkpunSVXSlHS8g== kubernetes-models"
  "@kubernetes-models/apimachinery 3.0.2 sha512-6Vbzr/tinxPBGGdfYjXiV9WPj8PEhyiqGJiWhXrsihK7h6glPj4HKUxZ0YwYXH/5uucm/NVef/xY3vZ4Crj1Fg== apimachinery"
  "@kubernetes-models/prometheus-operator 6.0.0 sha512-ySNW4T6U6Vn86bmcJ/emmAYJ/UrzpNvzxWexWJSALwgiO4FqCgL6WoqFsOReSiMhw/LlF+MljQvoiwD3RnaGmg== prometheus-operator"
  "@kubernetes-models/cert-manager 6.0.0 sha512-PvvzvJEnlEC64NC8HUUB4PFjFaBBNeYuO875Eu/FeMZN1OKm2DOXATRpo0WVCh5D2xbfhn30eUqKL3IrnQMX7w== cert-manager"
)

CACHE=${SEPTA_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/septa/tools}
key=$(printf '%s\n' "${PACKAGES[@]}" | sha256sum | cut -c1-12)
DEST=$CACHE/k8s-types-$key

if [[ -f $DEST/.complete ]]; then
  echo "$DEST"
  exit 0
fi
for tool in npm sha256sum base64 openssl tar flock; do
  command -v "$tool" >/dev/null || { echo "schemas.sh: needs $tool" >&2; exit 1; }
done
mkdir -p "$CACHE"
exec {lock}>"$CACHE/.k8s-types.lock"
flock "$lock"
if [[ -f $DEST/.complete ]]; then
  echo "$DEST"
  exit 0
fi
work=$(mktemp -d "$CACHE/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
for entry in "${PACKAGES[@]}"; do
  read -r name version integrity into <<<"$entry"
  rm -f "$work"/*.tgz
  (cd "$work" && npm pack --silent "$name@$version" >/dev/null)
  tarball=("$work"/*.tgz)
  actual="sha512-$(openssl dgst -sha512 -binary "${tarball[0]}" | base64 -w0)"
  if [[ $actual != "$integrity" ]]; then
    echo "schemas.sh: $name@$version has integrity $actual, not the pinned $integrity" >&2
    exit 1
  fi
  mkdir -p "$work/types/$into"
  # The declarations only: the compiled validators are not used.
  tar -xzf "${tarball[0]}" -C "$work/types/$into" --strip-components=1 --wildcards '*.d.ts' 'package/package.json'
done
touch "$work/types/.complete"
rm -rf "$DEST"
mv "$work/types" "$DEST"
echo "schemas.sh: object types at $DEST" >&2
echo "$DEST"
