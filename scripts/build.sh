#!/usr/bin/env bash
# Configures and builds Duet into ./build (Ninja, ccache). Usage: scripts/build.sh [targets...]
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache hits across clones of the repository (CI builds a fresh clone each time): paths relative
# to the clone, and the working directory left out of the hash (with debug info ccache hashes it
# by default, so a clone elsewhere would miss everything; its debug info names the first clone).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
[ -f build/build.ninja ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build --parallel "$(nproc)" ${1:+--target "$@"}
