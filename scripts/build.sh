#!/usr/bin/env bash
# Configures and builds Duet into ./build (Ninja, ccache). Usage: scripts/build.sh [targets...]
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache hits across clones of the repository (CI builds a fresh clone each time).
export CCACHE_BASEDIR="$PWD"
[ -f build/build.ninja ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build --parallel "$(nproc)" ${1:+--target "$@"}
