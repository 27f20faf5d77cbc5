#!/usr/bin/env bash
# Runs Duet's NVIDIA checks on a host with an NVIDIA GPU and driver, from a Duet build directory
# (or a copy of one's test executables and runtime library with the same layout):
#   1. clinfo -l through the Khronos loader with only Duet's ICD (when clinfo is installed);
#   2. nvidia_gpu_abi_run: the code generator's PTX launched by the kernel ABI, no Duet runtime
#      (PTX from <build>/tests/unit/nvidia/ptx, made by nvidia_codegen_test when missing);
#   3. api_test, then kernels_*_test and image_kernel_test, through the OpenCL API with
#      DUET_DEVICES=nvidia, kernel_timeout_test (DUET_KERNEL_TIMEOUT) and kernel_checks_test
#      (DUET_KERNEL_CHECKS);
#   4. nvidia_image_array_gpu_test: 3D images and arrays sampled through CUDA arrays, against
#      the CPU device (DUET_DEVICES=cpu,nvidia);
#   5. nvidia_gl_gpu_test: CUDA-GL interop under NVIDIA's EGL (DUET_DEVICES=cpu,nvidia).
# Every step runs; a summary follows. Exit 0: all passed; 1: some failed; 77: skipped (no
# libcuda.so.1 here, so no GPU run is possible).
#
#   tests/devices/nvidia/run_on_gpu.sh <build-dir> [sm_90] [extra Catch2 filter for api_test]
#
# Environment: DUET_CUDA_LIBRARY (a libcuda elsewhere), DUET_LOG=1 (the device's discovery and
# JIT logs on stderr), KERNEL_TESTS (the executables of tests/kernels to run, space separated;
# default the kernels_* tests (math, convert, integer, misc, work_group, sub_group) and
# image_kernel_test; empty: none).
set -uo pipefail

build=${1:?usage: run_on_gpu.sh <build-dir> [sm_90] [api_test filter]}
sm=${2:-sm_90}
apiFilter=${3:-~[cpu]~[gcn]}
build=$(cd "$build" && pwd) || exit 2

# No driver library: nothing can run. Skipped, visibly.
cuda=${DUET_CUDA_LIBRARY:-}
if [ -z "$cuda" ]; then
    for candidate in $(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 /{print $NF}') \
        /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1 /usr/lib/wsl/lib/libcuda.so.1; do
        [ -e "$candidate" ] && cuda=$candidate && break
    done
fi
if [ -z "$cuda" ] || [ ! -e "$cuda" ]; then
    echo "run_on_gpu: SKIPPED: no libcuda.so.1 on this host (set DUET_CUDA_LIBRARY to use another)"
    exit 77
fi
echo "run_on_gpu: CUDA driver library $cuda"
command -v nvidia-smi > /dev/null && nvidia-smi -L

runtime=$(ls "$build"/runtime/libduet-opencl.so* 2>/dev/null | head -n1)
if [ -z "$runtime" ]; then
    echo "run_on_gpu: no runtime/libduet-opencl.so under $build" >&2
    exit 2
fi
# Only Duet's ICD (not NVIDIA's own OpenCL): OCL_ICD_FILENAMES for the Khronos loader,
# OCL_ICD_VENDORS (a folder with one .icd) for ocl-icd; each loader ignores the other's.
icdDir=$(mktemp -d)
trap 'rm -rf "$icdDir"' EXIT
echo "$runtime" > "$icdDir/duet.icd"
export OCL_ICD_FILENAMES=$runtime OCL_ICD_VENDORS=$icdDir
export DUET_DEVICES=nvidia
[ -n "${DUET_CUDA_LIBRARY:-}" ] && export DUET_CUDA_LIBRARY

results=()
failed=0
step() { # step <name> <command...>: runs it, records PASS/FAIL/SKIP (77)/MISSING
    local name=$1
    shift
    if [ ! -x "$1" ] && ! command -v "$1" > /dev/null; then
        results+=("MISSING $name ($1 not built)")
        return
    fi
    echo
    echo "=== $name: $*"
    "$@"
    local rc=$?
    case $rc in
    0) results+=("PASS    $name") ;;
    77) results+=("SKIP    $name") ;;
    *)
        results+=("FAIL    $name (exit $rc)")
        failed=1
        ;;
    esac
}

if command -v clinfo > /dev/null; then
    step "clinfo -l" clinfo -l
else
    results+=("MISSING clinfo -l (clinfo not installed)")
fi

ptx=$build/tests/unit/nvidia/ptx
if [ ! -d "$ptx" ] || [ -z "$(ls -A "$ptx" 2>/dev/null)" ]; then
    if [ -x "$build/tests/unit/nvidia/nvidia_codegen_test" ]; then
        mkdir -p "$ptx"
        DUET_TEST_PTX_DIR=$ptx "$build/tests/unit/nvidia/nvidia_codegen_test" \
            'every test program builds*' > /dev/null
    fi
fi
step "nvidia_gpu_abi_run" "$build/tests/unit/nvidia/nvidia_gpu_abi_run" "$ptx" "$sm"

step "api_test (DUET_DEVICES=nvidia)" "$build/tests/api/api_test" "$apiFilter"
for t in ${KERNEL_TESTS-kernels_math_test kernels_convert_test kernels_integer_test kernels_misc_test kernels_work_group_test kernels_sub_group_test image_kernel_test}; do
    step "$t (DUET_DEVICES=nvidia)" "$build/tests/kernels/$t"
done
# DUET_KERNEL_TIMEOUT (1 s): a kernel that never ends is stopped by its own polls of the GPU
# timer, its event fails, and the queue goes on.
step "kernel_timeout_test (DUET_DEVICES=nvidia)" "$build/tests/devices/kernel_timeout_test"
# DUET_KERNEL_CHECKS (the test sets it): out-of-bounds writes through a buffer, a __local argument
# and a __local variable stop at their checks, their events fail with the message, the queue goes
# on.
step "kernel_checks_test (DUET_DEVICES=nvidia)" "$build/tests/devices/kernel_checks_test"
# SPIR-V modules built and run on the GPU (skipped without the translator: llvm-spirv-15, or a
# bundle's SPIR-V add-on).
step "il_test [il] (DUET_DEVICES=nvidia)" "$build/tests/api/il_test" "[il]"
# 3D images and image arrays through CUDA array copies against the CPU device's reads (the CPU
# device joins for the comparison).
DUET_DEVICES=cpu,nvidia step "nvidia_image_array_gpu_test (DUET_DEVICES=cpu,nvidia)" \
    "$build/tests/devices/nvidia/nvidia_image_array_gpu_test"
# CUDA-GL interop with NVIDIA's EGL (skipped without an EGL device that has EGL_NV_device_cuda);
# the CPU device joins for image support.
DUET_DEVICES=cpu,nvidia step "nvidia_gl_gpu_test (DUET_DEVICES=cpu,nvidia)" \
    "$build/tests/devices/nvidia/nvidia_gl_gpu_test"

echo
echo "run_on_gpu: summary"
printf '  %s\n' "${results[@]}"
exit $failed
