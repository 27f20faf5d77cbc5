#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test (ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/check-format.sh
scripts/build.sh
cd build && ctest --output-on-failure --timeout 900 "$@"
