#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test (ctest). Arguments go to ctest, except:
#   --sanitize address,undefined   ASan + UBSan build in build-asan
#   --sanitize thread              TSan build in build-tsan
#   --targets "T1 T2 ..."          (after --sanitize) build only these targets, not everything
# A sanitizer build instruments Duet (GCC's sanitizers); Debian's LLVM, Mesa and the kernels the
# runtime compiles at run time are not instrumented. tests/sanitizers/ holds the options every
# test runs with there.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build
if [ "${1:-}" = "--sanitize" ]; then
  case "${2:-}" in
    address,undefined | undefined,address)
      dir=build-asan
      # vptr checks need RTTI, which LLVM and the code that uses it are built without.
      flags="-fsanitize=address,undefined -fno-sanitize=vptr -fno-omit-frame-pointer" ;;
    thread)
      dir=build-tsan
      flags="-fsanitize=thread" ;;
    *)
      echo "test.sh: --sanitize takes 'address,undefined' or 'thread', not '${2:-}'" >&2
      exit 2 ;;
  esac
  shift 2
fi
targets=
if [ "$dir" != build ] && [ "${1:-}" = "--targets" ]; then
  targets="${2:?test.sh: --targets takes a list of build targets}"
  shift 2
fi
scripts/install-deps.sh
scripts/check-format.sh
if [ "$dir" = build ]; then
  scripts/build.sh
  cd build && exec ctest --output-on-failure --timeout 900 "$@"
fi

# ccache hits across clones, as in scripts/build.sh.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDUET_FUZZ=OFF \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" \
    -DCMAKE_MODULE_LINKER_FLAGS="$flags"
fi
# shellcheck disable=SC2086 # the target list splits on spaces
cmake --build "$dir" --parallel "$(nproc)" ${targets:+--target $targets}
cc -shared -fPIC -O2 -o "$dir/keep_loaded.so" tests/sanitizers/keep_loaded.c
source tests/sanitizers/env.sh "$dir"
cd "$dir" && exec ctest --output-on-failure --timeout 900 "$@"
