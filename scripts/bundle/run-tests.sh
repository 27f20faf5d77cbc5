#!/usr/bin/env bash
# Runs the bundle's tests against the bundle's libduet-opencl.so: the ctest entries of the build
# whose programs the bundle carries (tests/manifest, written by scripts/bundle.sh), each with its
# ctest environment, timeout, skip code and pass/fail expressions, in a folder of its own.
#
# Usage: ./run-tests.sh [-R REGEX] [-E REGEX] [-o DIR] [--list]
#   -R REGEX  only tests whose name matches (bash extended regex), -E REGEX  not those
#   -o DIR    where each test runs and leaves its log (default: a new folder under $TMPDIR)
#   --list    print the tests (and those left out of the bundle, with the reason) and exit
# Exit status: 0 when every test run passed or skipped itself (no Xvfb, say), 1 otherwise.
# DUET_BUNDLED_LIBS (setup-env.sh) picks the bundled libraries; the default here is ocl-icd.
set -uo pipefail
home=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
include="" exclude="" out="" list=0
while [ $# -gt 0 ]; do
    case "$1" in
    -R) include="$2"; shift 2 ;;
    -E) exclude="$2"; shift 2 ;;
    -o) out="$2"; shift 2 ;;
    --list) list=1; shift ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "run-tests.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
manifest="$home/tests/manifest"
FS=$'\x1f' IS=$'\x1e' NL=$'\x1d'

if [ "$list" = 1 ]; then
    grep '^#' "$manifest" | tail -n +2
    cut -d "$FS" -f1 <(grep -v '^#' "$manifest")
    exit 0
fi

# Only Duet, as under ctest; tests that compare with PoCL add it themselves where installed.
# The tests were linked against Debian's ocl-icd and call what it exports (clGetGLContextInfoKHR,
# which the Khronos loader in CUDA's toolkit lacks): they use the bundle's copy of that loader
# unless DUET_BUNDLED_LIBS says otherwise (auto: the host's loader where it has one).
export DUET_BUNDLED_LIBS="${DUET_BUNDLED_LIBS:-ocl-icd}"
DUET_ICD_ONLY=1 . "$home/setup-env.sh" || exit 1
echo "run-tests.sh: ICD loader $(LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" ldd "$home/tests/api_test" |
    awk '$1 == "libOpenCL.so.1" {print $3}')"
export DUET_TEST_DUET_ICD="${OCL_ICD_VENDORS%/}/duet.icd"
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/duet-tests.XXXXXX")
mkdir -p "$out"
echo "run-tests.sh: $home on $(uname -n); logs in $out"

passed=0 failed=0 skipped=0 failures=()
while IFS="$FS" read -r name timeout skip env program args pass fail; do
    [[ "$name" == \#* ]] && continue
    [ -z "$include" ] || [[ "$name" =~ $include ]] || continue
    [ -z "$exclude" ] || ! [[ "$name" =~ $exclude ]] || continue
    if [[ "$program" == @* ]]; then
        exe=$(command -v "${program#@}") || {
            printf '%-40s SKIP (%s is not installed)\n' "$name" "${program#@}"
            skipped=$((skipped + 1))
            continue
        }
    else
        exe="$home/$program"
    fi
    envs=() argv=() passes=() fails=()
    [ -z "$env" ] || IFS="$IS" read -r -a envs <<<"$env"
    [ -z "$args" ] || IFS="$IS" read -r -a argv <<<"$args"
    [ -z "$pass" ] || IFS="$IS" read -r -a passes <<<"${pass//$NL/$'\n'}"
    [ -z "$fail" ] || IFS="$IS" read -r -a fails <<<"${fail//$NL/$'\n'}"
    dir="$out/$name"
    mkdir -p "$dir"
    start=$SECONDS
    (cd "$dir" && exec env ${envs[@]+"${envs[@]}"} timeout "$timeout" "$exe" ${argv[@]+"${argv[@]}"}) \
        >"$dir/output.log" 2>&1 </dev/null
    rc=$?
    seconds=$((SECONDS - start))
    output=$(<"$dir/output.log")
    verdict=PASS why=""
    if [ -n "$skip" ] && [ "$rc" = "$skip" ]; then
        verdict=SKIP why="skipped itself"
    elif [ "$rc" = 124 ]; then
        verdict=FAIL why="timed out after ${timeout}s"
    elif [ ${#passes[@]} -gt 0 ]; then
        verdict=FAIL why="output matches no pass expression"
        for re in "${passes[@]}"; do
            [[ "$output" =~ $re ]] && verdict=PASS why="" && break
        done
    elif [ "$rc" != 0 ]; then
        verdict=FAIL why="exit status $rc"
    fi
    if [ "$verdict" != SKIP ]; then
        for re in ${fails[@]+"${fails[@]}"}; do
            if [[ "$output" =~ $re ]]; then
                verdict=FAIL why="output matches fail expression '${BASH_REMATCH[0]//$'\n'/\\n}'"
                break
            fi
        done
    fi
    case "$verdict" in
    PASS) passed=$((passed + 1)) ;;
    SKIP) skipped=$((skipped + 1)) ;;
    FAIL) failed=$((failed + 1)); failures+=("$name") ;;
    esac
    printf '%-40s %s %5ss%s\n' "$name" "$verdict" "$seconds" "${why:+ ($why; $dir/output.log)}"
done <"$manifest"

echo "run-tests.sh: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] || { echo "failed: ${failures[*]}"; exit 1; }
