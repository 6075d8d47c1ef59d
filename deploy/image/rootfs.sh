#!/usr/bin/env bash
# Builds septad's runtime root filesystem from Debian packages with
# mmdebstrap (Debian package mmdebstrap): the packages of
# runtime-packages.txt and their dependencies, extracted (mmdebstrap's
# `extract` variant: no maintainer script runs, so neither a chroot nor a
# shell is needed, and none ends up in the image), plus /etc/passwd and
# /etc/group with the user nonroot (65532), the CA bundle, septad at
# /usr/local/bin/septad and, if given, the portal's web/dist at
# /usr/share/septa/web. The Containerfile runs this in its rootfs stage; CI
# runs it here (no Docker engine) and smoke-tests the result
# (tests/e2e/deploy/image_smoke_e2e.sh).
#
# Pinned: each package at the version installed on this machine, where
# septad was built, so the image runs the libraries septad was compiled
# against; where Debian's mirror no longer has that version (it keeps the
# newest of each suite), at apt's candidate, said so. The library part is cached in
# CACHE (default ~/.cache/septa/image) under the SHA-256 of the pinned list
# and of this script: only the first run after a change pays the download
# and extraction (about a minute); later runs copy the cache (seconds).
#
# Usage: rootfs.sh [--septad FILE] [--web DIR] [--cache DIR] [--no-build] [--print-key] OUT
#   --no-build   exit 3 (building nothing) when the library part is not cached
#   --print-key  print the cache key and the pinned list, build nothing
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
septad='' web='' cache=${SEPTA_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/septa/image} build=1 print_key=0 out=''
while (($#)); do
  case $1 in
    --septad) septad=$2; shift 2 ;;
    --web) web=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    --print-key) print_key=1; shift ;;
    -*) echo "rootfs.sh: unknown option $1" >&2; exit 2 ;;
    *) out=$1; shift ;;
  esac
done
[[ -n $out || $print_key == 1 ]] || { echo "usage: rootfs.sh [--septad FILE] [--web DIR] [--cache DIR] [--no-build] [--print-key] OUT" >&2; exit 2; }

# The pinned list: name=version for every package of runtime-packages.txt.
mapfile -t names < <(grep -v -e '^#' -e '^$' "$here/runtime-packages.txt")
madison=$(apt-cache madison "${names[@]}")
pins=()
for name in "${names[@]}"; do
  version=$(dpkg-query -W -f '${Version}' "$name" 2>/dev/null || true)
  # Debian's mirror keeps only the newest version of a suite: an installed
  # one it no longer has gives way to the candidate (same soname, same ABI
  # within a stable release), said so.
  if [[ -z $version ]] || ! awk -F'|' -v n="$name" '{gsub(/ /, "")} $1 == n {print $2}' <<<"$madison" | grep -qxF "$version"; then
    candidate=$(apt-cache policy "$name" | sed -n 's/^ *Candidate: //p')
    [[ -n $candidate && $candidate != "(none)" ]] || { echo "rootfs.sh: no Debian package $name" >&2; exit 1; }
    echo "rootfs.sh: $name ${version:-not installed here}, not on the mirror: pinned to its candidate $candidate" >&2
    version=$candidate
  fi
  pins+=("$name=$version")
done
key=$( (printf '%s\n' "${pins[@]}"; cat "$0") | sha256sum | cut -c1-16)
if ((print_key)); then
  echo "$key"
  printf '%s\n' "${pins[@]}"
  exit 0
fi
base=$cache/base-$key

if [[ ! -f $base/.complete ]]; then
  if ((!build)); then
    echo "rootfs.sh: no cached runtime libraries for key $key in $cache (--no-build)" >&2
    exit 3
  fi
  command -v mmdebstrap >/dev/null || { echo "rootfs.sh: mmdebstrap is missing (Debian package mmdebstrap)" >&2; exit 1; }
  # The machine's own Debian sources (its mirror, its snapshot), else Debian's.
  sources=http://deb.debian.org/debian
  for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
    if [[ -s $f ]] && grep -q '^[^#]*bookworm' "$f"; then sources=$f; break; fi
  done
  mkdir -p "$cache"
  # One build at a time (parallel test runs); the second finds it done.
  exec {lock}>"$cache/.lock"
  flock "$lock"
fi
if [[ ! -f $base/.complete ]]; then
  tmp=$(mktemp -d "$cache/build.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  started=$SECONDS
  # Documentation and translations stay out; the copyright files stay (licenses).
  mmdebstrap --variant=extract --quiet --include="$(IFS=,; echo "${pins[*]}")" \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/lintian/*' \
    bookworm "$tmp/root" "$sources"
  root=${tmp:?}/root
  # What the extract variant leaves: apt's and dpkg's state, and what a
  # maintainer script would have made.
  # No program but septad: ca-certificates brings openssl and debconf's
  # scripts (which could not run: there is no perl, no shell).
  rm -rf "${root:?}"/var/lib/apt "${root:?}"/var/cache/apt "${root:?}"/var/lib/dpkg "${root:?}"/var/log/* "${root:?}"/etc/apt \
    "${root:?}"/usr/share/doc/*/changelog* "${root:?}"/usr/share/man "${root:?}"/usr/share/locale "${root:?}"/usr/bin \
    "${root:?}"/usr/sbin "${root:?}"/usr/share/perl5 "${root:?}"/usr/share/debconf "${root:?}"/usr/share/lintian \
    "${root:?}"/usr/share/pixmaps "${root:?}"/usr/share/gdb "${root:?}"/etc/debconf.conf
  # Device nodes mmdebstrap made: the runtime mounts /dev.
  find "${root:?}/dev" -mindepth 1 -delete
  # ca-certificates' postinst (update-ca-certificates) makes this bundle of every Mozilla certificate.
  mkdir -p "$root/etc/ssl/certs"
  cat "${root:?}"/usr/share/ca-certificates/mozilla/*.crt >"$root/etc/ssl/certs/ca-certificates.crt"
  ln -sfn /usr/share/zoneinfo/Etc/UTC "$root/etc/localtime"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' \
    >"$root/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' >"$root/etc/group"
  printf 'hosts: files dns\n' >"$root/etc/nsswitch.conf"
  # The mount points of the pod's volumes (deploy/kustomize/base/statefulset.yaml)
  # and of a service account; /tmp sticky as ever.
  mkdir -p "${root:?}"/{etc/septa/config,etc/septa/kek,var/lib/septa,var/run/secrets/kubernetes.io/serviceaccount} \
    "${root:?}/home/nonroot" "${root:?}/tmp" "${root:?}/proc" "${root:?}/dev" "${root:?}/run"
  chmod 1777 "$root/tmp"
  chown 65532:65532 "$root/home/nonroot"
  printf '%s\n' "${pins[@]}" >"$root/etc/septa-image-packages"
  touch "$root/.complete"
  rm -rf "$base"
  mv "$root" "$base"
  # Only the newest key is kept (63 MB each).
  find "$cache" -mindepth 1 -maxdepth 1 -name 'base-*' ! -name "base-$key" -exec rm -rf {} +
  echo "rootfs.sh: runtime libraries for key $key built in $((SECONDS - started)) s ($(du -sm "$base" | cut -f1) MB) at $base" >&2
fi

rm -rf "$out"
cp -a "$base" "$out"
rm -f "$out/.complete"
if [[ -n $septad ]]; then
  install -D -m 0755 "$septad" "$out/usr/local/bin/septad"
  # Debug sections (the build's -g) are not needed to run.
  if command -v objcopy >/dev/null; then objcopy --strip-debug "$out/usr/local/bin/septad"; fi
fi
if [[ -n $web ]]; then
  mkdir -p "$out/usr/share/septa/web"
  cp -a "$web/." "$out/usr/share/septa/web/"
fi
echo "rootfs.sh: $out ($(du -sm "$out" | cut -f1) MB; key $key)" >&2
