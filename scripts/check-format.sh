#!/usr/bin/env bash
# Fails (and lists the files) when a C++ file of the checkout differs from what
# clang-format 14 makes of it under .clang-format. `--fix` rewrites them.
# Releases format differently, so only 14 is accepted: the one pinned in
# requirements.txt (.venv/bin/clang-format), else Debian 12's clang-format-14.
set -euo pipefail
cd "$(dirname "$0")/.."
format=""
for candidate in .venv/bin/clang-format clang-format-14; do
  if command -v "$candidate" >/dev/null &&
    "$candidate" --version | grep -q "version 14\."; then
    format=$candidate
    break
  fi
done
if [ -z "$format" ]; then
  echo "check-format: clang-format 14 not found; run scripts/setup-venv.sh" >&2
  exit 1
fi
# Untracked files too (not ignored ones): what the next commit may add.
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.h')
if [ "${1:-}" = --fix ]; then
  "$format" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$format" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ "${#bad[@]}" -gt 0 ]; then
  printf 'not clang-formatted (run scripts/check-format.sh --fix):\n' >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "clang-format: ${#files[@]} files clean"
