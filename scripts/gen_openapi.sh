#!/usr/bin/env bash
# Regenerates api/openapi.yaml from the protos' (septa.v1.http) options:
# builds septa-openapi in BUILD_DIR (default: build) and writes the file.
# CTest openapi_up_to_date fails until the result is committed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
cmake --build "$build" --target septa-openapi
"$build/bin/septa-openapi" --out "$root/api/openapi.yaml"
echo "wrote $root/api/openapi.yaml"
