#!/usr/bin/env bash
# Configures and builds Duet into ./build (Ninja, ccache). Usage: scripts/build.sh [targets...]
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/build.ninja ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build --parallel "$(nproc)" ${1:+--target "$@"}
