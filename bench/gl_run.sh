#!/usr/bin/env bash
# Builds duet-gl-interop-bench and the Duet runtime, then runs the GL interop benchmark on a
# headless EGL context with the ICD loader seeing both Duet and PoCL (as bench/run.sh does).
# Usage: bench/gl_run.sh [options...]   e.g. bench/gl_run.sh --quick --json gl.json
# Environment: BUILD_DIR (default <repo>/build), POCL_ICD (default /etc/OpenCL/vendors/pocl.icd).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$repo/build}"
pocl_icd="${POCL_ICD:-/etc/OpenCL/vendors/pocl.icd}"

[ -f "$build/build.ninja" ] || cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
jobs="$(nproc)"
ninja -C "$build" -j"$jobs" duet-gl-interop-bench duet-opencl

vendors="$(mktemp -d "${TMPDIR:-/tmp}/duet-gl-bench-vendors.XXXXXX")"
trap 'rm -rf "$vendors"' EXIT
cp "$build/icd/duet.icd" "$vendors/duet.icd"
if [ -f "$pocl_icd" ]; then
    cp "$pocl_icd" "$vendors/pocl.icd"
else
    echo "gl_run.sh: $pocl_icd not found; PoCL will be missing" >&2
fi
unset OCL_ICD_FILENAMES
export OCL_ICD_VENDORS="$vendors"
export POCL_KERNEL_CACHE=0
"$build/bench/gl_interop/duet-gl-interop-bench" "$@"
