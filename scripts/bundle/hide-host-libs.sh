#!/usr/bin/env bash
# Runs a command as on the lent GPU host, for scripts/bundle.sh --check: no LLVM 19, clang or
# libclc, no GLVND front ends (libEGL.so.1, libGL.so.1, ...), no OpenCL ICDs but the bundle's, no
# Open MPI, PMIx or hwloc (the bundle's duet-mpirun brings its own).
# Must run in a private mount namespace (unshare -m, as root): it mounts over those files there.
# Mesa's own LLVM (libLLVM-15, behind llvmpipe) stays: it plays the host's GL vendor library.
set -euo pipefail
mount --make-rprivate /
for dir in /usr/lib/llvm-19 /usr/lib/clc /etc/OpenCL/vendors /usr/lib/x86_64-linux-gnu/openmpi \
    /usr/lib/x86_64-linux-gnu/pmix2 /usr/share/openmpi /etc/openmpi; do
    [ -d "$dir" ] && mount -t tmpfs -o ro,size=4k tmpfs "$dir"
done
shopt -s nullglob
for file in /usr/lib/x86_64-linux-gnu/{libLLVM.so.19,libLLVM-19,libclang-cpp.so.19,libclang-19}* \
    /usr/lib/x86_64-linux-gnu/lib{EGL.so.1,GL.so.1,GLX.so.0,OpenGL.so.0,GLdispatch.so.0}* \
    /usr/lib/x86_64-linux-gnu/lib{mpi,open-rte,open-pal,pmix,hwloc,mca_common_}*.so* \
    /usr/bin/{orterun,orted,ompi_info}; do
    [ -f "$file" ] && [ ! -L "$file" ] && mount --bind /dev/null "$file"
done
exec "$@"
