#!/usr/bin/env bash
# Builds duet-bench and the Duet runtime, then runs the bench with the ICD loader seeing both
# Duet (the build tree's icd/duet.icd) and PoCL (the system's pocl.icd).
# Usage: bench/run.sh [duet-bench options...]   e.g. bench/run.sh --quick --json bench.json
# Environment: BUILD_DIR (default <repo>/build), POCL_ICD (default /etc/OpenCL/vendors/pocl.icd).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$repo/build}"
pocl_icd="${POCL_ICD:-/etc/OpenCL/vendors/pocl.icd}"

[ -f "$build/build.ninja" ] || cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
jobs="$(nproc)"
ninja -C "$build" -j"$jobs" duet-bench
# The bench still runs (and says Duet cannot be opened) when the runtime does not build.
if ! ninja -C "$build" -j"$jobs" duet-opencl; then
    echo "run.sh: duet-opencl did not build; Duet will be missing from the comparison" >&2
fi

vendors="$(mktemp -d "${TMPDIR:-/tmp}/duet-bench-vendors.XXXXXX")"
trap 'rm -rf "$vendors"' EXIT
if [ -f "$build/icd/duet.icd" ]; then
    cp "$build/icd/duet.icd" "$vendors/duet.icd"
else
    echo "run.sh: $build/icd/duet.icd not found; Duet will be missing" >&2
fi
if [ -f "$pocl_icd" ]; then
    cp "$pocl_icd" "$vendors/pocl.icd"
else
    echo "run.sh: $pocl_icd not found; PoCL will be missing" >&2
fi

# OCL_ICD_FILENAMES would add to (or, with some loaders, replace) the vendors directory.
unset OCL_ICD_FILENAMES
export OCL_ICD_VENDORS="$vendors"
# duet-bench sets this itself before loading platforms; exported here too for any child.
export POCL_KERNEL_CACHE=0
export DUET_CACHE=0 # nor Duet's program cache
"$build/bench/runtime/duet-bench" "$@"
