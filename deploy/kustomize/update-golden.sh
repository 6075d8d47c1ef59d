#!/usr/bin/env bash
# Rewrites deploy/kustomize/golden/<overlay>.yaml from the overlays as the
# pinned kubectl renders them (deploy/check.sh); review the diff after.
set -euo pipefail
SEPTA_UPDATE_GOLDEN=1 exec "$(dirname "$0")/../check.sh" "$(cd "$(dirname "$0")/../.." && pwd)"
