#!/usr/bin/env bash
# Builds duet-fft-bench and the Duet runtime, then runs it with the ICD loader seeing both Duet
# (the build tree's icd/duet.icd) and PoCL, like bench/run.sh does for duet-bench.
# Usage: bench/fft_run.sh [duet-fft-bench options...]   e.g. bench/fft_run.sh --quick
# Environment: BUILD_DIR (default <repo>/build), POCL_ICD (default /etc/OpenCL/vendors/pocl.icd).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$repo/build}"
pocl_icd="${POCL_ICD:-/etc/OpenCL/vendors/pocl.icd}"

[ -f "$build/build.ninja" ] || cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
ninja -C "$build" -j"$(nproc)" duet-fft-bench duet-opencl

vendors="$(mktemp -d "${TMPDIR:-/tmp}/duet-fft-bench-vendors.XXXXXX")"
trap 'rm -rf "$vendors"' EXIT
cp "$build/icd/duet.icd" "$vendors/duet.icd"
if [ -f "$pocl_icd" ]; then
    cp "$pocl_icd" "$vendors/pocl.icd"
else
    echo "fft_run.sh: $pocl_icd not found; PoCL will be missing" >&2
fi
unset OCL_ICD_FILENAMES
export OCL_ICD_VENDORS="$vendors"
export POCL_KERNEL_CACHE=0
export DUET_CACHE=0 # nor Duet's program cache
"$build/bench/fft/duet-fft-bench" "$@"
