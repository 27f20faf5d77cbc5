#!/usr/bin/env bash
# Checks (or with --fix, applies) the house format: clang-format-19 with the root .clang-format,
# over every C and C++ source git tracks. OpenCL C (runtime/builtins, kernels/) is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=$(command -v clang-format-19 || true)
if [ -z "$fmt" ]; then
    echo "check-format: clang-format-19 is not installed (scripts/install-deps.sh installs it)" >&2
    exit 2
fi
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.c' '*.cc' | grep -v '^runtime/builtins/')
if [ "${1:-}" = "--fix" ]; then
    "$fmt" -i "${files[@]}"
    exit 0
fi
if ! "$fmt" --dry-run -Werror "${files[@]}" 2>/tmp/duet-format.$$; then
    grep -E '^[^ ].*: error:' /tmp/duet-format.$$ | cut -d: -f1 | sort -u | sed 's/^/  needs formatting: /' >&2
    rm -f /tmp/duet-format.$$
    echo "check-format: run scripts/check-format.sh --fix" >&2
    exit 1
fi
rm -f /tmp/duet-format.$$
echo "check-format: ${#files[@]} files follow .clang-format"
