#!/usr/bin/env bash
# Builds duet-soak and the Duet runtime, then runs the soak with the ICD loader seeing both Duet
# and PoCL (as bench/run.sh does); Duet on its CPU device unless DUET_DEVICES says otherwise.
# Usage: bench/soak_run.sh [options...]   e.g. bench/soak_run.sh --quick --platforms Duet,Portable
# Environment: BUILD_DIR (default <repo>/build), POCL_ICD (default /etc/OpenCL/vendors/pocl.icd).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$repo/build}"
pocl_icd="${POCL_ICD:-/etc/OpenCL/vendors/pocl.icd}"

[ -f "$build/build.ninja" ] || cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
jobs="$(nproc)"
ninja -C "$build" -j"$jobs" duet-soak duet-opencl

vendors="$(mktemp -d "${TMPDIR:-/tmp}/duet-soak-vendors.XXXXXX")"
trap 'rm -rf "$vendors"' EXIT
cp "$build/icd/duet.icd" "$vendors/duet.icd"
if [ -f "$pocl_icd" ]; then
    cp "$pocl_icd" "$vendors/pocl.icd"
else
    echo "soak_run.sh: $pocl_icd not found; PoCL will be missing" >&2
fi
unset OCL_ICD_FILENAMES
export OCL_ICD_VENDORS="$vendors"
export DUET_DEVICES="${DUET_DEVICES:-cpu}"
"$build/bench/soak/duet-soak" "$@"
