#!/usr/bin/env bash
# Makes the relocatable Duet bundle: one tarball (xz, which any tar unpacks) that runs Duet on a
# host with nothing of ours and no LLVM installed, such as the lent GPU host (Ubuntu 24.04).
#
# Usage: scripts/bundle.sh [--check] [--skip-build] [-o FILE] [--spirv FILE]
#   --check       then unpack it into a clean temporary folder and verify it there (see check()):
#                 the library's dependencies, clinfo through both ICD loader variables, with
#                 LLVM and GLVND's front ends hidden, the samples headless and run-tests.sh
#                 ($DUET_BUNDLE_TESTS, a run-tests.sh -R expression, picks a subset).
#   --skip-build  package what build-bundle/ holds
#   -o FILE       where to write the tarball (default build-bundle/duet-<version>-linux-x86_64.tar.xz)
#   --spirv FILE  also write FILE, an add-on tarball with the SPIR-V translator (Debian's
#                 llvm-spirv-15 and the libraries it needs, 40 MiB: too big for the 60 MiB
#                 bundle, as it brings its own LLVM 15), unpacked over the bundle's folder: it adds
#                 lib/spirv/, which libduet-opencl.so finds beside itself (clCreateProgramWithIL)
#
# The build is its own folder, build-bundle/ (cmake -DDUET_BUNDLE=ON, cmake/DuetBundle.cmake):
# LLVM, clang and lld are linked statically into libduet-opencl.so, only the parts Duet uses (the
# X86, AMDGPU and NVPTX targets, clang's front end and code generator, ORC, lld's ELF driver) with
# --gc-sections over per-function sections, and with it libstdc++, libgcc, zlib, zstd and libdrm.
# Why static: the users and the GPU host have no LLVM 19, and Debian's libLLVM/libclang-cpp (200 MB,
# all targets) would be carried whole, with their own libstdc++, libxml2, libffi, libz3 and libedit
# behind them; statically the library needs glibc (>= 2.36: libc, libm) and nothing else, and is
# 118 MB stripped, 24 MB of the tarball. The default build keeps linking the shared LLVM (fast).
# Executables link the C++ runtime statically as well and find what the bundle carries in lib/
# through RUNPATH $ORIGIN/../lib. The tarball is 37 MiB (limit: 60 MiB; 209 MiB unpacked); the
# static link of the library takes seconds, the whole bundle build 8 minutes from scratch on 2
# cores without ccache, packing 1 minute (xz -9), --check 5 minutes. Debug info of the library
# stays out of the tarball, in build-bundle/<name>.debug/ (objcopy --add-gnu-debuglink).
#
# Layout of the bundle (README.txt inside says how to use it):
#   setup-env.sh, run-tests.sh, README.txt
#   lib/libduet-opencl.so            the ICD; lib/clang/19/include (opencl-c-base.h) and
#                                    lib/clc/amdgcn--amdhsa.bc and nvptx64--nvidiacl.bc (libclc)
#                                    beside it, found through it
#   lib/*.so.*                       shared libraries Debian has no archive of (GLFW)
#   lib/glvnd, lib/x11, lib/ocl-icd  GLVND front ends, Xlib, an ICD loader: setup-env.sh uses each
#                                    only where the host lacks one of its libraries
#   bin/                             samples, benchmarks, seeds, the engine demo; duet-mpirun and
#                                    duet-gasdyn-mpi-scaling (bench/gasdyn_mpi_run.sh)
#   lib/openmpi, lib/pmix            Open MPI's mpirun, components, help texts and settings, PMIx's
#                                    components (stage_openmpi), when the programs link libmpi
#   tests/                           ctest's test executables and their list (tests/manifest)
#   share/duet/kernels, shaders      the sources the samples read at run time
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
build=$src/build-bundle
check=0 skip_build=0 output="" spirv_output=""
while [ $# -gt 0 ]; do
    case "$1" in
    --check) check=1; shift ;;
    --skip-build) skip_build=1; shift ;;
    -o) output=$(realpath -m "$2"); shift 2 ;;
    --spirv) spirv_output=$(realpath -m "$2"); shift 2 ;;
    -h | --help) sed -n '2,44p' "$0"; exit 0 ;;
    *) echo "bundle.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
limit=$((60 * 1024 * 1024))
say() { printf 'bundle.sh: %s\n' "$*"; }

# Libraries every x86-64 glibc host has: the bundle never carries them.
host_lib() {
    case "$1" in
    linux-vdso.so.1 | ld-linux-x86-64.so.2 | libc.so.6 | libm.so.6 | libdl.so.2 | libpthread.so.0 | \
        librt.so.1 | libmvec.so.1 | libresolv.so.2 | libutil.so.1) return 0 ;;
    esac
    return 1
}
# Where a carried library goes: an optional folder for what hosts usually have, else lib/.
lib_folder() {
    case "$1" in
    libEGL.so.* | libGL.so.* | libGLX.so.* | libOpenGL.so.* | libGLdispatch.so.*) echo lib/glvnd ;;
    libOpenCL.so.*) echo lib/ocl-icd ;;
    libX11.so.* | libX11-xcb.so.* | libxcb.so.* | libXau.so.* | libXdmcp.so.* | libbsd.so.* | libmd.so.*)
        echo lib/x11 ;;
    *) echo lib ;;
    esac
}
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }

build_bundle() {
    export CCACHE_BASEDIR="$src"
    local start=$SECONDS
    cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDUET_BUNDLE=ON >/dev/null
    mapfile -t targets < <(awk -F'\t' '$2 != "none" {print $1}' "$build/bundle-targets.tsv")
    say "building libduet-opencl and ${#targets[@]} executables in $build"
    nice -n 10 cmake --build "$build" --parallel "$(nproc)" --target duet-opencl "${targets[@]}"
    say "build took $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s"
}

stage_bundle() {
    local stage=$1 debug=$2
    rm -rf "$stage" "$debug"
    mkdir -p "$stage"/{bin,tests,lib/glvnd,lib/x11,lib/ocl-icd,share/duet} "$debug"

    # The runtime, stripped; its debug info beside the tarball.
    local so
    so=$(readlink -f "$build/runtime/libduet-opencl.so")
    objcopy --only-keep-debug "$so" "$debug/libduet-opencl.so.debug"
    objcopy --strip-all --add-gnu-debuglink="$debug/libduet-opencl.so.debug" "$so" \
        "$stage/lib/libduet-opencl.so"
    ln -s libduet-opencl.so "$stage/lib/libduet-opencl.so.0" # the SONAME, for direct linking
    # What the runtime reads at run time: clang's OpenCL headers and libclc (core/data_files.hpp).
    local resource
    resource=$(clang-19 -print-resource-dir)
    mkdir -p "$stage/lib/clang/$(basename "$resource")/include" "$stage/lib/clc"
    cp "$resource"/include/opencl-c-base.h "$resource"/include/opencl-c.h \
        "$stage/lib/clang/$(basename "$resource")/include/"
    cp /usr/lib/clc/amdgcn--amdhsa.bc /usr/lib/clc/nvptx64--nvidiacl.bc "$stage/lib/clc/"

    # Executables, stripped.
    local name place path
    while IFS=$'\t' read -r name place path; do
        [ "$place" != none ] || continue
        strip --strip-all -o "$stage/$place/$name" "$path"
    done <"$build/bundle-targets.tsv"

    stage_openmpi "$stage"

    # Shared libraries the executables and the carried libraries need, as ld.so resolves them here;
    # GLVND's five front ends always (the engine and the runtime also dlopen them).
    local queue=() seen=" " lib file folder
    for file in "$stage"/bin/* "$stage"/tests/* "$stage"/lib/openmpi/bin/* \
        "$stage"/lib/openmpi/lib/openmpi3/*.so "$stage"/lib/pmix/lib/pmix/*.so; do
        [ -f "$file" ] && head -c4 "$file" | grep -q ELF || continue
        queue+=("$(needed "$file")")
    done
    mapfile -t queue < <(printf '%s\n' "${queue[@]}" libEGL.so.1 libGL.so.1 libGLX.so.0 \
        libOpenGL.so.0 libGLdispatch.so.0 | sort -u)
    while [ ${#queue[@]} -gt 0 ]; do
        lib=${queue[0]} queue=("${queue[@]:1}")
        [ -n "$lib" ] && [[ "$seen" != *" $lib "* ]] || continue
        seen+="$lib "
        host_lib "$lib" && continue
        case "$lib" in
        libduet-opencl.so.*)
            # Test programs that call the runtime directly (the fuzz replays): the bundle's own.
            ln -sf libduet-opencl.so "$stage/lib/$lib"
            continue ;;
        libstdc++.so.* | libgcc_s.so.* | libLLVM* | libclang-cpp.so.*)
            echo "bundle.sh: something still links $lib dynamically" >&2
            return 1 ;;
        esac
        file=$(/sbin/ldconfig -p | awk -v n="$lib" '$1 == n && /x86-64/ && !f {print $NF; f = 1}')
        [ -n "$file" ] || { echo "bundle.sh: cannot find $lib on this machine" >&2; return 1; }
        folder=$(lib_folder "$lib")
        cp -L "$file" "$stage/$folder/$lib"
        mapfile -t -O "${#queue[@]}" queue < <(needed "$file")
    done

    # The sources the samples read at run time (not the build files that sit beside them).
    (cd "$src" && git ls-files kernels shaders | grep -Ev '(CMakeLists\.txt|\.cpp|\.hpp|\.in)$' |
        while read -r file; do
            mkdir -p "$stage/share/duet/$(dirname "$file")"
            cp "$file" "$stage/share/duet/$file"
        done)

    # The SPIR-V modules il_test reads (made at build time by clang-15 | llvm-spirv-15).
    if compgen -G "$build/tests/api/il/*.spv" >/dev/null; then
        mkdir -p "$stage/tests/il"
        cp "$build"/tests/api/il/*.spv "$stage/tests/il/"
    fi

    cp "$src/scripts/bundle/setup-env.sh" "$src/scripts/bundle/run-tests.sh" "$stage/"
    python3 "$src/scripts/bundle/make_test_manifest.py" "$build" "$src" \
        "$build/bundle-targets.tsv" "$stage/tests/manifest"
    readme "$(basename "$stage")" >"$stage/README.txt"
}

# Open MPI's runtime, when a bundled program links libmpi (duet-gasdyn, duet-gasdyn-mpi-bench): the
# build machine's Open MPI (Debian 12: 4.1) relocated under lib/openmpi (orterun and orted in bin/,
# the MCA components in lib/openmpi3, help texts in share/openmpi, the MCA settings in etc/), PMIx's
# components and help texts under lib/pmix, and bin/duet-mpirun, which points both at them
# (scripts/bundle/duet-mpirun). The libraries they need (libmpi, libopen-rte, libopen-pal, libpmix,
# libhwloc, libevent, libmca_common_*) join lib/ through the NEEDED walk in stage_bundle. The
# components for networks and libraries the bundle does not carry (UCX, libfabric, verbs, PSM,
# netlink) and OpenSHMEM's stay out: one host's ranks talk through shared memory (btl vader).
stage_openmpi() {
    local stage=$1 file
    # (Whole outputs into variables, not pipes into grep -q: under pipefail the writer's SIGPIPE
    # would fail the test.)
    for file in "$stage"/bin/*; do
        [[ " $(needed "$file" 2>/dev/null | tr '\n' ' ')" == *" libmpi.so."* ]] && break
        file=""
    done
    [ -n "$file" ] || return 0
    local pkglib pkgdata sysconf pmixlib
    ompi_path() { ompi_info --parsable --path "$1" | sed -n "s/^path:$1://p"; }
    pkglib=$(ompi_path pkglibdir) pkgdata=$(ompi_path pkgdatadir) sysconf=$(ompi_path sysconfdir)
    pmixlib=$(pkg-config --variable=libdir pmix 2>/dev/null || true)
    if [ ! -d "$pkglib" ] || [ ! -d "$pkgdata" ] || [ ! -d "$pmixlib/pmix" ]; then
        echo "bundle.sh: $(basename "$file") links libmpi but Open MPI's or PMIx's folders are" \
            "missing (ompi_info, pkg-config pmix: openmpi-bin, libopenmpi-dev)" >&2
        return 1
    fi
    local ompi=$stage/lib/openmpi pmix=$stage/lib/pmix
    mkdir -p "$ompi"/{bin,lib/openmpi3,share/openmpi,etc} "$pmix"/{lib/pmix,share/pmix,etc}
    strip --strip-unneeded -o "$ompi/bin/orterun" "$(command -v orterun)"
    strip --strip-unneeded -o "$ompi/bin/orted" "$(command -v orted)"
    local component skipped=()
    for component in "$pkglib"/mca_*.so; do
        if [[ " $(needed "$component" | tr '\n' ' ')" =~ \ lib(oshmem|ucp|ucs|fabric|ibverbs|psm|nl-|mca_common_(ucx|ofi|verbs)) ]]; then
            skipped+=("$(basename "$component" .so)")
            continue
        fi
        strip --strip-unneeded -o "$ompi/lib/openmpi3/$(basename "$component")" "$component"
    done
    cp "$pkgdata"/help-*.txt "$ompi/share/openmpi/"
    # Debian's settings (they only turn off components the bundle lacks anyway).
    cp "$sysconf/openmpi-mca-params.conf" "$ompi/etc/"
    for component in "$pmixlib"/pmix/*.so; do
        strip --strip-unneeded -o "$pmix/lib/pmix/$(basename "$component")" "$component"
    done
    cp "$pmixlib"/../share/pmix/help-*.txt "$pmix/share/pmix/"
    cp "$src/scripts/bundle/duet-mpirun" "$stage/bin/duet-mpirun"
    cp "$src/bench/gasdyn_mpi_run.sh" "$stage/bin/duet-gasdyn-mpi-scaling"
    say "$(ompi_info --version | sed -n 1p):" \
        "$(ls "$ompi/lib/openmpi3" | wc -l) components, ${#skipped[@]} left out" \
        "(${skipped[*]})"
}

readme() {
    cat <<TXT
$1: the Duet OpenCL runtime (an ICD, platform "Duet") with LLVM/clang linked in, its samples,
benchmarks and tests. Needs an x86-64 Linux with glibc 2.36 or newer and an OpenCL ICD loader
(ocl-icd or Khronos'); nothing else installed, no LLVM.

  . ./setup-env.sh                 # bash/zsh: the ICD loader sees Duet (and the host's ICDs)
  clinfo                           # platform "Duet": a CPU device and the GCN model
  duet-nbody --headless --frames 60 --screenshot nbody.png --stats
  ./run-tests.sh                   # the test suite against this bundle (--help); it uses the
                                 # bundled ocl-icd loader the tests were built against

  bin/duet-gasdyn-mpi-scaling      # weak and strong scaling of duet-gasdyn over MPI ranks on the
                                 # CPU device, 1..16 ranks (--help), through the bundle's Open MPI

Or one program without touching the shell: ./setup-env.sh bin/duet-ocean --headless --frames 3.
MPI: bin/duet-mpirun is Debian 12's Open MPI 4.1 mpirun, relocated into lib/openmpi and lib/pmix
(local ranks only): ./setup-env.sh duet-mpirun -np 4 duet-gasdyn --headless --frames 20 (add
--allow-run-as-root as root). The bundle's duet-gasdyn has no checkpoints (no parallel HDF5).
DUET_ICD_ONLY=1 before setup-env.sh shows Duet alone. Without setup-env.sh, name the library by its
absolute path: OCL_ICD_FILENAMES=\$PWD/lib/libduet-opencl.so (Khronos' ICD loader: Duet beside the
host's ICDs) or OCL_ICD_VENDORS=\$PWD/lib/libduet-opencl.so (ocl-icd: Duet alone); the programs
need lib/glvnd, lib/x11 or lib/ocl-icd on LD_LIBRARY_PATH only where the host lacks those
libraries (setup-env.sh looks). GL: samples need a GL driver
(Mesa, or NVIDIA's libEGL_nvidia with /usr/share/glvnd/egl_vendor.d/10_nvidia.json); GLVND's front
ends are in lib/glvnd for hosts that lack them, and setup-env.sh adds them there (a program that
cannot load libEGL.so.1 without them says to source setup-env.sh).
Programs find lib/ by their RUNPATH and share/duet by their own location (or DUET_KERNEL_DIR,
DUET_SHADER_DIR); libduet-opencl.so finds lib/clang and lib/clc beside itself, and lib/spirv (the
SPIR-V translator for clCreateProgramWithIL) where the separate SPIR-V add-on tarball was unpacked
over this folder (tar -C <folder above this one> -xf duet-...-spirv.tar.xz).
TXT
}

# The SPIR-V add-on, staged in $1/<name>/lib/spirv: llvm-spirv-15, every library it needs but
# glibc's (its own LLVM 15, libstdc++, libxml2 and ICU behind it), and llvm-spirv, a script that
# runs it with those libraries. A separate tarball: xz makes 40 MiB of it.
stage_spirv() {
    local top=$1/$2 translator
    translator=$(command -v llvm-spirv-15) || {
        echo "bundle.sh: --spirv: llvm-spirv-15 is not installed (package llvm-spirv-15)" >&2
        return 1
    }
    rm -rf "$1"
    mkdir -p "$top/lib/spirv/lib"
    strip --strip-unneeded -o "$top/lib/spirv/llvm-spirv-15" "$translator"
    local queue seen=" " lib file
    mapfile -t queue < <(needed "$translator")
    while [ ${#queue[@]} -gt 0 ]; do
        lib=${queue[0]} queue=("${queue[@]:1}")
        [ -n "$lib" ] && [[ "$seen" != *" $lib "* ]] || continue
        seen+="$lib "
        host_lib "$lib" && continue
        file=$(/sbin/ldconfig -p | awk -v n="$lib" '$1 == n && /x86-64/ && !f {print $NF; f = 1}')
        [ -n "$file" ] || { echo "bundle.sh: cannot find $lib on this machine" >&2; return 1; }
        strip --strip-unneeded -o "$top/lib/spirv/lib/$lib" "$(readlink -f "$file")"
        mapfile -t -O "${#queue[@]}" queue < <(needed "$file")
    done
    cat >"$top/lib/spirv/llvm-spirv" <<'SH'
#!/bin/sh
# Debian 12's llvm-spirv-15 with the libraries it was built against (the bundle's SPIR-V add-on);
# libduet-opencl.so runs it for clCreateProgramWithIL (DUET_LLVM_SPIRV overrides).
here=$(dirname "$0")
LD_LIBRARY_PATH="$here/lib" exec "$here/llvm-spirv-15" "$@"
SH
    chmod +x "$top/lib/spirv/llvm-spirv"
}

check() {
    local tarball=$1 dir
    dir=$(mktemp -d "${TMPDIR:-/tmp}/duet-bundle-check.XXXXXX")
    tar -C "$dir" -xf "$tarball"
    [ -z "$spirv_output" ] || tar -C "$dir" -xf "$spirv_output"
    local home
    home=$(echo "$dir"/*/)
    home=${home%/}
    say "checking $tarball in $home"
    local bad=0 lib file
    fail() { echo "bundle.sh: CHECK FAILED: $*" >&2; bad=1; }

    # The library: glibc only, no LLVM, clang or C++ runtime; its newest glibc symbol.
    for lib in $(needed "$home/lib/libduet-opencl.so"); do
        host_lib "$lib" || fail "libduet-opencl.so needs $lib"
    done
    if ldd "$home/lib/libduet-opencl.so" | grep -Ei 'llvm|clang|stdc\+\+|not found'; then
        fail "ldd lib/libduet-opencl.so names LLVM, clang, libstdc++ or a missing library"
    fi
    local glibc
    glibc=$(objdump -T "$home/lib/libduet-opencl.so" | grep -o 'GLIBC_[0-9.]*' | sort -Vu | tail -1)
    say "libduet-opencl.so: NEEDED $(needed "$home/lib/libduet-opencl.so" | tr '\n' ' ')($glibc)"
    [ "$(printf '%s\n' "$glibc" GLIBC_2.36 | sort -V | tail -1)" = GLIBC_2.36 ] ||
        fail "libduet-opencl.so needs $glibc (more than glibc 2.36)"
    # Every other ELF file: what it needs is a host library or carried by the bundle.
    while read -r file; do
        for lib in $(needed "$file"); do
            host_lib "$lib" || compgen -G "$home/lib/$lib" >/dev/null ||
                compgen -G "$home/lib/*/$lib" >/dev/null || fail "${file#"$home"/} needs $lib"
        done
    done < <(find "$home" -type f \( -path '*/bin/*' -o -path '*/tests/*' -o -name '*.so*' \) \
        -exec sh -c 'head -c4 "$1" | grep -q ELF' _ {} \; -print)

    # clinfo through the host's ICD loader: setup-env.sh's folder (OCL_ICD_VENDORS); the
    # library's absolute path alone, as ocl-icd takes it (OCL_ICD_VENDORS) and, where the loader
    # is Khronos', as OCL_ICD_FILENAMES; and that with LD_LIBRARY_PATH empty and, below, with
    # LLVM hidden.
    local loader icd_env
    loader=$(/sbin/ldconfig -p | awk '$1 == "libOpenCL.so.1" && /x86-64/ && !f {print $NF; f = 1}')
    icd_env=(OCL_ICD_VENDORS="$home/lib/libduet-opencl.so")
    if grep -qa OCL_ICD_FILENAMES "$loader"; then
        icd_env=(OCL_ICD_FILENAMES="$home/lib/libduet-opencl.so")
    fi
    local out
    if command -v clinfo >/dev/null; then
        out=$(DUET_ICD_ONLY=1 "$home/setup-env.sh" clinfo 2>&1) || true
        grep -Eq 'Platform Name[[:space:]]+Duet' <<<"$out" || fail "clinfo (setup-env.sh) lists no Duet"
        grep -Eq 'Number of devices[[:space:]]+2' <<<"$out" || fail "clinfo (setup-env.sh): not 2 devices"
        out=$(env -u OCL_ICD_VENDORS -u OCL_ICD_FILENAMES LD_LIBRARY_PATH= "${icd_env[@]}" clinfo 2>&1) || true
        grep -Eq 'Platform Name[[:space:]]+Duet' <<<"$out" ||
            fail "clinfo (${icd_env[*]}, LD_LIBRARY_PATH empty) lists no Duet"
        say "clinfo lists Duet through setup-env.sh and through ${icd_env[0]%%=*} alone ($loader)"
    else
        say "no clinfo here: its checks are skipped"
    fi

    # The rest as on the GPU host: no LLVM, no libclc, no GLVND front ends (a private mount
    # namespace hides them when this runs as root), only the bundle and a GL vendor library.
    local hide=()
    if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
        hide=(unshare -m bash "$src/scripts/bundle/hide-host-libs.sh")
        say "running the samples and tests with LLVM, libclc and GLVND's front ends hidden"
    else
        say "not root or no mount namespaces: the samples and tests run with the host's libraries visible"
    fi
    if command -v clinfo >/dev/null && [ ${#hide[@]} -gt 0 ]; then
        out=$("${hide[@]}" env -u OCL_ICD_VENDORS -u OCL_ICD_FILENAMES LD_LIBRARY_PATH= \
            "${icd_env[@]}" clinfo 2>&1) || true
        grep -Eq 'Platform Name[[:space:]]+Duet' <<<"$out" ||
            fail "clinfo with LLVM hidden and LD_LIBRARY_PATH empty lists no Duet"
    fi
    if [ -n "$spirv_output" ]; then
        if "${hide[@]}" env -i PATH=/usr/bin:/bin "$home/lib/spirv/llvm-spirv" --version \
            >"$dir/spirv.log" 2>&1; then
            say "the SPIR-V add-on's translator runs: $(grep -m1 -i version "$dir/spirv.log")"
        else
            fail "lib/spirv/llvm-spirv --version (log: $dir/spirv.log)"
        fi
    fi
    local sample
    for sample in duet-nbody duet-simplegl duet-ocean duet-gasdyn; do
        rm -f "$dir/$sample.png"
        if ! "${hide[@]}" "$home/setup-env.sh" "$home/bin/$sample" --headless --frames 3 \
            --screenshot "$dir/$sample.png" >"$dir/$sample.log" 2>&1 || [ ! -s "$dir/$sample.png" ]; then
            fail "$sample --headless --frames 3 (log: $dir/$sample.log)"
        else
            say "$sample: $(file -b "$dir/$sample.png" | cut -d, -f1-2)"
        fi
    done
    if ! "${hide[@]}" "$home/setup-env.sh" "$home/bin/duet-displays" >"$dir/duet-displays.log" 2>&1; then
        fail "duet-displays (log: $dir/duet-displays.log)"
    fi
    # The MPI scaling script on 1 and 2 ranks, small grids, through the bundle's Open MPI alone: a
    # bare environment (no mpirun on PATH, no LD_LIBRARY_PATH) and, as root, the host's Open MPI,
    # PMIx and hwloc hidden too.
    if [ -x "$home/bin/duet-mpirun" ]; then
        if "${hide[@]}" env -i PATH=/usr/bin:/bin HOME="${HOME:-/tmp}" TMPDIR="$dir" \
            "$home/bin/duet-gasdyn-mpi-scaling" --ranks "1 2" --weak-n 64 --strong-n 96 --steps 3 \
            --overlap both >"$dir/mpi-scaling.log" 2>&1 &&
            [ "$(grep -Ec '^strong +(on|off) +2 .* yes$' "$dir/mpi-scaling.log")" = 2 ]; then
            say "duet-gasdyn-mpi-scaling on 1 and 2 ranks through bin/duet-mpirun"
        else
            fail "duet-gasdyn-mpi-scaling --ranks \"1 2\" (log: $dir/mpi-scaling.log)"
        fi
    fi
    local tests=()
    [ -z "${DUET_BUNDLE_TESTS:-}" ] || tests=(-R "$DUET_BUNDLE_TESTS")
    "${hide[@]}" "$home/run-tests.sh" -o "$dir/tests" ${tests[@]+"${tests[@]}"} || fail "run-tests.sh"
    if [ "$bad" = 0 ]; then
        say "check passed ($home)"
        rm -rf "$dir"
    else
        say "check FAILED; the unpacked bundle stays in $dir"
        return 1
    fi
}

[ "$skip_build" = 1 ] || build_bundle
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
name=duet-$version-linux-x86_64
[ -n "$output" ] || output=$build/$name.tar.xz
stage=$build/stage/$name
stage_bundle "$stage" "$build/$name.debug"
say "compressing"
tar -C "$build/stage" --owner=0 --group=0 --numeric-owner -cf - "$name" |
    xz -9 -T"$(nproc)" >"$output.tmp"
mv "$output.tmp" "$output"
size=$(stat -c %s "$output")
say "$output: $((size / 1024 / 1024)) MiB ($size bytes), $(du -sm "$stage" | cut -f1) MiB unpacked"
if [ "$size" -gt "$limit" ]; then
    echo "bundle.sh: the tarball is over the 60 MiB limit" >&2
    exit 1
fi
if [ -n "$spirv_output" ]; then
    stage_spirv "$build/stage-spirv" "$name"
    tar -C "$build/stage-spirv" --owner=0 --group=0 --numeric-owner -cf - "$name" |
        xz -9 -T"$(nproc)" >"$spirv_output.tmp"
    mv "$spirv_output.tmp" "$spirv_output"
    say "$spirv_output: $(($(stat -c %s "$spirv_output") / 1024 / 1024)) MiB (SPIR-V add-on)"
fi
[ "$check" = 0 ] || check "$output"
