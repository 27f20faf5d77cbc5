#!/usr/bin/env bash
# Builds duet-gasdyn-bench, the demo and the Duet runtime, then runs the bench with the ICD
# loader seeing both Duet (the build tree's icd/duet.icd) and PoCL (the system's pocl.icd), as
# bench/run.sh does for duet-bench.
# Usage: bench/gasdyn_run.sh [duet-gasdyn-bench options...]   e.g. --quick --json gasdyn.json
# Environment: BUILD_DIR (default <repo>/build), POCL_ICD (default /etc/OpenCL/vendors/pocl.icd).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$repo/build}"
pocl_icd="${POCL_ICD:-/etc/OpenCL/vendors/pocl.icd}"

[ -f "$build/build.ninja" ] || cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
jobs="$(nproc)"
ninja -C "$build" -j"$jobs" duet-gasdyn-bench duet-gasdyn
if ! ninja -C "$build" -j"$jobs" duet-opencl; then
    echo "gasdyn_run.sh: duet-opencl did not build; Duet will be missing from the comparison" >&2
fi

vendors="$(mktemp -d "${TMPDIR:-/tmp}/duet-gasdyn-vendors.XXXXXX")"
trap 'rm -rf "$vendors"' EXIT
[ -f "$build/icd/duet.icd" ] && cp "$build/icd/duet.icd" "$vendors/duet.icd" ||
    echo "gasdyn_run.sh: $build/icd/duet.icd not found; Duet will be missing" >&2
[ -f "$pocl_icd" ] && cp "$pocl_icd" "$vendors/pocl.icd" ||
    echo "gasdyn_run.sh: $pocl_icd not found; PoCL will be missing" >&2

unset OCL_ICD_FILENAMES
export OCL_ICD_VENDORS="$vendors"
export POCL_KERNEL_CACHE=0
export DUET_CACHE=0 # nor Duet's program cache
"$build/bench/gasdyn/duet-gasdyn-bench" "$@"
