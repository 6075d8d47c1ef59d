#!/usr/bin/env bash
# Installs what is missing, builds, and runs septad on embedded defaults: a
# private PostgreSQL under ~/.local/share/septa (or --data-dir), a simulated
# host cluster (kubesim, kubeconfig in the data dir), REST on 127.0.0.1:8080,
# gRPC on 127.0.0.1:9090, the virtual clusters' Kubernetes APIs on
# https://127.0.0.1:6444/vc/<tenant>/<vcluster>, and the portal at
# http://127.0.0.1:8080/ with a one-time sign-in link printed in the log.
# Extra arguments go to septad (see `build/bin/septad --help`).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${SEPTA_BUILD_DIR:-build}

bash deploy/dev/bootstrap.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSEPTA_WERROR=ON >/dev/null
cmake --build "$BUILD_DIR" --target septad
# The portal: the locked packages (again only when the lock changed), then
# its build into web/dist, which septad serves.
if [[ ! -f web/node_modules/.package-lock.json || web/package-lock.json -nt web/node_modules/.package-lock.json ]]; then
  (cd web && npm ci --no-audit --no-fund)
fi
(cd web && npm run build --silent)
# A fixed port for the virtual clusters (tests use any free one); a flag still wins.
export SEPTA_VCLUSTER_ADDR=${SEPTA_VCLUSTER_ADDR:-127.0.0.1:6444}
exec "$BUILD_DIR/bin/septad" --web-dir web/dist --sign-in-link true "$@"
