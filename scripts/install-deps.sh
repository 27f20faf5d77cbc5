#!/usr/bin/env bash
# Installs every Debian 12 package Duet builds, tests and benchmarks with. Idempotent; needs root.
set -euo pipefail
pkgs=(
  build-essential cmake ninja-build ccache git pkg-config python3 clang-format-19 universal-ctags
  llvm-19-dev libclang-19-dev clang-19 lld-19 libclc-19 libclc-19-dev libpolly-19-dev
  libclang-rt-19-dev
  llvm-spirv-15 spirv-tools clang-15  # SPIR-V: translator, validator, il_test's modules
  libzstd-dev zlib1g-dev libedit-dev libffi-dev libxml2-dev libcurl4-openssl-dev
  opencl-c-headers opencl-clhpp-headers ocl-icd-opencl-dev ocl-icd-libopencl1 clinfo
  pocl-opencl-icd
  catch2 libcli11-dev nlohmann-json3-dev libfmt-dev libstb-dev libpng-dev
  libglfw3-dev libglm-dev libimgui-dev libdrm-dev libdrm-amdgpu1 libx11-dev libxrandr-dev libegl-dev libgl-dev
  liblld-19-dev
  libgles-dev
  libegl-mesa0 libgl1-mesa-dri mesa-utils xvfb xauth python3-glad
  openmpi-bin libopenmpi-dev libhdf5-openmpi-dev
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
