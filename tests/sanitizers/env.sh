# The options every test of a sanitizer build runs with: `source tests/sanitizers/env.sh BUILD_DIR`
# (scripts/test.sh does; do it too when running a test of build-asan or build-tsan by hand).
# Suppressions: lsan.supp (Open MPI, PMIx, hwloc) and tsan.supp (Mesa's llvmpipe), foreign code
# only, a reason per entry.
# verify_asan_link_order=0: uninstrumented programs (clinfo) load the instrumented runtime
# through the ICD loader, after libc. detect_leaks: LeakSanitizer at every exit.
# Every report fails the process, so its ctest entry (the sanitizer_canary_* entries check it):
# ASan stops at the first error with status 1, LeakSanitizer exits 23, UBSan (GCC's checks
# recover by default) stops at the first report, TSan reports every race and exits 66.
# intercept_tls_get_addr=0: with GCC 12's runtime LeakSanitizer's tracer died at exit in
# il_gcn_test, every run, after the test passed ("Tracer caught signal 11", no leak report,
# status 1) while scanning the main thread's TLS; use_tls=0 or this option cure it. The cause
# known upstream (Mudlet/Mudlet#9930, fixed after GCC 13): the __tls_get_addr interceptor takes a
# dynamic TLS block that happens to start 16 bytes into a page for a pre-2.25 glibc block and
# reads a bogus range before it. glibc 2.36 mallocs those blocks and points to them from the
# thread's DTV, so LeakSanitizer still sees what they reference (the canary's leak is still
# found, and no entry reports a new one).
export ASAN_OPTIONS="detect_leaks=1:verify_asan_link_order=0:strict_string_checks=1:halt_on_error=1:exitcode=1:intercept_tls_get_addr=0"
export LSAN_OPTIONS="exitcode=23:suppressions=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lsan.supp"
# HWLOC_COMPONENTS=-opencl: Open MPI's hwloc, in MPI_Init of every duet-gasdyn rank, enumerates
# OpenCL devices through its OpenCL plugin and the ICD loader; loading the instrumented runtime
# that way failed in libLLVM's static initialisers (ASan: free of memory not from malloc), which
# the same loader's dlopen in every API test does not. Ranks need no hwloc view of OpenCL.
export HWLOC_COMPONENTS=-opencl
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="halt_on_error=0:exitcode=66:history_size=4:suppressions=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/tsan.supp"
# keep_loaded.so (scripts/test.sh builds it into the build folder): dlclose keeps libraries
# mapped (keep_loaded.c says why).
if [ -n "${1:-}" ] && [ -f "$1/keep_loaded.so" ]; then
  export LD_PRELOAD="$(cd "$1" && pwd)/keep_loaded.so${LD_PRELOAD:+:$LD_PRELOAD}"
fi
