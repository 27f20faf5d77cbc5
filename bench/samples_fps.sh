#!/usr/bin/env bash
# Builds duet-nbody, duet-simplegl, duet-ocean, duet-gasdyn and the Duet runtime, then runs the
# samples headless with --stats on Duet and on PoCL in one run and prints frames/s and the
# compute / interop / render split with ratios (bench/samples_fps.py does the runs and the parsing).
# Usage: bench/samples_fps.sh [--quick] [--frames N] [--bodies N] [--size WxH] [--json FILE]
# Environment: BUILD_DIR (default <repo>/build), POCL_ICD (default /etc/OpenCL/vendors/pocl.icd),
# DUET_ICD (default <build>/icd/duet.icd: another build's runtime).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$repo/build}"
pocl_icd="${POCL_ICD:-/etc/OpenCL/vendors/pocl.icd}"
duet_icd="${DUET_ICD:-$build/icd/duet.icd}"

[ -f "$build/build.ninja" ] || cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
ninja -C "$build" -j"$(nproc)" duet-nbody duet-simplegl duet-ocean duet-gasdyn
[ -n "${DUET_ICD:-}" ] || ninja -C "$build" -j"$(nproc)" duet-opencl

vendors="$(mktemp -d "${TMPDIR:-/tmp}/duet-fps-vendors.XXXXXX")"
trap 'rm -rf "$vendors"' EXIT
if [ -f "$duet_icd" ]; then cp "$duet_icd" "$vendors/duet.icd"
else echo "samples_fps.sh: $duet_icd not found; Duet will be missing" >&2; fi
if [ -f "$pocl_icd" ]; then cp "$pocl_icd" "$vendors/pocl.icd"
else echo "samples_fps.sh: $pocl_icd not found; PoCL will be missing" >&2; fi
unset OCL_ICD_FILENAMES
export OCL_ICD_VENDORS="$vendors"
export POCL_KERNEL_CACHE=0 # no program cache hits across runs (as duet-bench)
export DUET_CACHE=0 # nor Duet's program cache
exec python3 "$repo/bench/samples_fps.py" --build "$build" "$@"
