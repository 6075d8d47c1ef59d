#!/usr/bin/env bash
# The checks of deploy/, cheapest first (CTest's deploy.check; seconds):
#   1. shellcheck on every shell script under deploy/
#   2. yamllint on deploy/ (deploy/.yamllint)
#   2b. the packages deploy/image/Containerfile's build stage installs are
#      all deploy/dev/bootstrap.sh's (the image builds with CI's toolchain)
#   3. every overlay of deploy/kustomize/overlays rendered with the pinned
#      kubectl (deploy/tools/kubectl.sh, never the machine's) and compared
#      with deploy/kustomize/golden/<overlay>.yaml; base + each component
#      rendered alone too
#   4. deploy/tools/policy.py on each render (restricted Pod Security, images,
#      RBAC, PDB, selectors, septad's configuration keys), and its self-test:
#      each breakage it lists must be caught in the production overlay
#   5. deploy/tools/schema.py: every rendered object against its kind's
#      types (from pinned npm packages, deploy/tools/schemas.sh), unknown
#      fields included, and its self-test
# The ClusterRoles' coverage of the Role septad writes for tenants is a C++
# unit test (tests/unit/deploy, CTest DeployRbac.*).
# After an intended change of the manifests, rewrite the golden files with
#   deploy/kustomize/update-golden.sh     (SEPTA_UPDATE_GOLDEN=1 deploy/check.sh)
# and review the diff. Usage: deploy/check.sh [REPO_ROOT]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
KUSTOMIZE=deploy/kustomize

failed=()
step() {  # step NAME COMMAND...: runs one check, records a failure, prints its time
  local name=$1 start
  shift
  start=$(date +%s%N)
  if "$@"; then
    echo "deploy/check: $name ok ($(( ($(date +%s%N) - start) / 1000000 )) ms)"
  else
    echo "deploy/check: $name FAILED ($(( ($(date +%s%N) - start) / 1000000 )) ms)" >&2
    failed+=("$name")
  fi
}

need() {  # need TOOL PACKAGE: fails naming the Debian package deploy/dev/bootstrap.sh installs
  command -v "$1" >/dev/null || { echo "deploy/check: $1 is missing (Debian package $2; deploy/dev/bootstrap.sh installs it)" >&2; exit 1; }
}
need shellcheck shellcheck
need yamllint yamllint
# python3 with PyYAML: Debian's (python3-yaml) first, whatever python3 is on PATH.
PYTHON=
for candidate in /usr/bin/python3 python3; do
  if "$candidate" -c 'import yaml' 2>/dev/null; then PYTHON=$candidate; break; fi
done
[[ -n $PYTHON ]] || { echo "deploy/check: no python3 with PyYAML (Debian package python3-yaml)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

shell_scripts() {
  mapfile -t scripts < <(find deploy -name '*.sh' -type f | sort)
  shellcheck -x "${scripts[@]}"
}
step shellcheck shell_scripts
step yamllint yamllint -s -c deploy/.yamllint deploy/

# The Containerfile's build stage installs only what deploy/dev/bootstrap.sh
# installs (plus mmdebstrap for its rootfs stage), so the image builds with
# the toolchain and libraries CI builds with.
containerfile() {
  local wanted have missing=()
  mapfile -t wanted < <(sed -n '/^FROM .* AS build$/,/^WORKDIR/p' deploy/image/Containerfile |
    sed -n '/apt-get install/,/rm -rf/p' | sed 's/[ \\]\+/\n/g' | grep -E '^[a-z0-9][a-z0-9.+-]+$' |
    grep -v -x -e apt-get -e update -e install -e rm -e rf)
  have=$(sed -n '/^PACKAGES=(/,/^)/p' deploy/dev/bootstrap.sh | grep -v '^ *#')
  ((${#wanted[@]} > 10)) || { echo "deploy/check: no package list found in deploy/image/Containerfile" >&2; return 1; }
  for p in "${wanted[@]}"; do
    grep -qw -- "$p" <<<"$have" || missing+=("$p")
  done
  ((${#missing[@]} == 0)) || { echo "deploy/check: deploy/image/Containerfile installs what deploy/dev/bootstrap.sh does not: ${missing[*]}" >&2; return 1; }
}
step "containerfile packages" containerfile

KUBECTL=$(deploy/tools/kubectl.sh)

render() {  # render DIR OUT
  "$KUBECTL" kustomize "$1" >"$2"
}

overlays() {
  local dir name rc=0
  for dir in "$KUSTOMIZE"/overlays/*/; do
    name=$(basename "$dir")
    render "$dir" "$work/$name.yaml" || { rc=1; continue; }
    if [[ ${SEPTA_UPDATE_GOLDEN:-} == 1 ]]; then
      cp "$work/$name.yaml" "$KUSTOMIZE/golden/$name.yaml"
      echo "deploy/check: wrote $KUSTOMIZE/golden/$name.yaml"
    elif ! diff -u "$KUSTOMIZE/golden/$name.yaml" "$work/$name.yaml"; then
      echo "deploy/check: overlay $name renders differently from $KUSTOMIZE/golden/$name.yaml;" \
        "after an intended change run $KUSTOMIZE/update-golden.sh and review the diff" >&2
      rc=1
    fi
  done
  for golden in "$KUSTOMIZE"/golden/*.yaml; do
    [[ -d $KUSTOMIZE/overlays/$(basename "$golden" .yaml) ]] || { echo "deploy/check: $golden has no overlay" >&2; rc=1; }
  done
  return "$rc"
}
step "render overlays (kubectl $("$KUBECTL" version --client | sed -n 's/^Client Version: //p'))" overlays

# Components no overlay uses are rendered too, each alone on the base
# (kustomize takes a directory anywhere by a relative path, not an absolute one).
components() {
  local dir name at rc=0
  for dir in "$KUSTOMIZE"/components/*/; do
    name=$(basename "$dir")
    at=$work/with-$name
    mkdir -p "$at"
    printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\ncomponents:\n  - %s\n' \
      "$(realpath --relative-to="$at" "$KUSTOMIZE/base")" "$(realpath --relative-to="$at" "$dir")" >"$at/kustomization.yaml"
    render "$work/with-$name" "$work/component-$name.yaml" || rc=1
  done
  return "$rc"
}
step "render base + each component" components

policy() {
  local overlays=("$work"/*.yaml) parts=("$work"/component-*.yaml) installs=()
  local f
  for f in "${overlays[@]}"; do [[ $f == */component-* ]] || installs+=("$f"); done
  "$PYTHON" deploy/tools/policy.py --install --config-source services/config/config.cc "${installs[@]}" &&
    "$PYTHON" deploy/tools/policy.py --config-source services/config/config.cc "${parts[@]}" &&
    "$PYTHON" deploy/tools/policy.py --self-test --config-source services/config/config.cc "$work/production.yaml"
}
step policy policy

# Every rendered object against its kind's types (deploy/tools/schema.py):
# unknown fields, JSON types, enums, required fields; and its self-test.
schemas() {
  local types
  types=$(deploy/tools/schemas.sh) || return 1
  "$PYTHON" deploy/tools/schema.py "$types" "$work"/*.yaml &&
    "$PYTHON" deploy/tools/schema.py --self-test "$types" "$work/production.yaml"
}
step "schema (unknown fields included)" schemas

if ((${#failed[@]} > 0)); then
  echo "deploy/check: ${#failed[@]} check(s) failed: ${failed[*]}" >&2
  exit 1
fi
echo "deploy/check: all checks passed"
