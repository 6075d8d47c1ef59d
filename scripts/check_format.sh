#!/usr/bin/env bash
# Fails (listing the files) when a tracked C++ file differs from what
# clang-format makes of it with the repository's .clang-format.
# scripts/format.sh rewrites them in place. Usage: check_format.sh [REPO_ROOT]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
CLANG_FORMAT=${CLANG_FORMAT:-clang-format-14}

unformatted=()
while IFS= read -r -d '' file; do
  if ! "$CLANG_FORMAT" --style=file --dry-run --Werror "$file" >/dev/null 2>&1; then
    unformatted+=("$file")
  fi
done < <(git ls-files -z -- '*.cc' '*.h')

if ((${#unformatted[@]} > 0)); then
  echo "check_format: ${#unformatted[@]} files are not clang-formatted (run scripts/format.sh):" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  exit 1
fi
echo "check_format: all tracked C++ files are formatted"
