#!/usr/bin/env bash
# Formats tracked C++ files in place with the repository's .clang-format:
# every file, or only those given. scripts/check_format.sh is the CI check.
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format-14}
if (($# > 0)); then
  "$CLANG_FORMAT" --style=file -i "$@"
else
  git ls-files -z -- '*.cc' '*.h' | xargs -0 -r "$CLANG_FORMAT" --style=file -i
fi
