#!/usr/bin/env bash
# Bootstraps (installs missing Debian packages), builds everything and runs
# the whole test suite. This is the command CI runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${SEPTA_BUILD_DIR:-build}

bash deploy/dev/bootstrap.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSEPTA_WERROR=ON
cmake --build "$BUILD_DIR"
ctest --test-dir "$BUILD_DIR" --output-on-failure --no-tests=error -j2 --timeout 900 "$@"
