#!/usr/bin/env bash
# Weak and strong scaling of duet-gasdyn's MPI solver: builds duet-gasdyn-mpi-bench, runs it
# under mpirun for each rank count, and prints step time, parallel efficiency against one rank
# and the share of the step spent in halo exchange and in the time step's MPI_Allreduce.
# Usage: bench/gasdyn_mpi_run.sh [--ranks "1 2 4 8 16"] [--weak-n 512] [--strong-n 2048]
#                                [--steps 20] [--device NAME] [--json FILE]
# Environment: BUILD_DIR (default <repo>/build), DUET_DEVICES (default cpu), MPIRUN_ARGS (extra
# mpirun arguments, e.g. "--bind-to core").
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$repo/build}"
ranks="1 2 4 8 16"
weak_n=512
strong_n=2048
steps=20
device=()
json=""
while (($#)); do
    case "$1" in
    --ranks) ranks="$2"; shift 2 ;;
    --weak-n) weak_n="$2"; shift 2 ;;
    --strong-n) strong_n="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --device) device=(--device "$2"); shift 2 ;;
    --json) json="$2"; shift 2 ;;
    *) echo "gasdyn_mpi_run.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

[ -f "$build/build.ninja" ] || cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
ninja -C "$build" -j"$(nproc)" duet-gasdyn-mpi-bench duet-opencl

export OCL_ICD_VENDORS="$build/icd"
unset OCL_ICD_FILENAMES
export DUET_DEVICES="${DUET_DEVICES:-cpu}"
# Shared memory between the ranks of this host; as root in a container too.
export OMPI_MCA_btl="${OMPI_MCA_btl:-self,vader}"
export OMPI_MCA_btl_vader_single_copy_mechanism="${OMPI_MCA_btl_vader_single_copy_mechanism:-none}"
root=()
[ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
cores="$(nproc)"

lines=()
for mode in weak strong; do
    n=$weak_n
    [ "$mode" = strong ] && n=$strong_n
    for np in $ranks; do
        extra=()
        ((np > cores)) && extra=(--oversubscribe)
        line="$(mpirun "${root[@]}" "${extra[@]}" ${MPIRUN_ARGS:-} -np "$np" \
            "$build/bench/gasdyn_mpi/duet-gasdyn-mpi-bench" --mode "$mode" --n "$n" \
            --steps "$steps" "${device[@]}")"
        lines+=("$line")
    done
done

results="$(mktemp "${TMPDIR:-/tmp}/duet-gasdyn-mpi.XXXXXX")"
trap 'rm -f "$results"' EXIT
printf '%s\n' "${lines[@]}" >"$results"
python3 - "$results" "$json" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
base = {}
print(f"{'mode':6} {'ranks':>5} {'layout':>7} {'grid':>11} {'step ms':>9} {'Mcell/s':>9} "
      f"{'efficiency':>10} {'halo %':>7} {'halo max %':>10} {'allreduce %':>11} valid")
for r in rows:
    key = r["mode"]
    if r["ranks"] == 1 or key not in base:
        base[key] = r
    b = base[key]
    # weak: the same work per rank, so T(1) / T(p); strong: T(1) / (p T(p)), against the first
    # rank count listed when that is not 1.
    if key == "weak":
        eff = b["step_ms"] / r["step_ms"]
    else:
        eff = b["step_ms"] * b["ranks"] / (r["step_ms"] * r["ranks"])
    r["efficiency"] = eff
    grid = f"{r['nx']}x{r['ny']}"
    print(f"{r['mode']:6} {r['ranks']:5} {r['layout']:>7} {grid:>11} {r['step_ms']:9.2f} "
          f"{r['mcells']:9.1f} {100 * eff:9.1f}% {100 * r['halo_share_mean']:6.1f}% "
          f"{100 * r['halo_share_max']:9.1f}% {100 * r['allreduce_share_mean']:10.1f}% "
          f"{'yes' if r['valid'] else 'NO'}")
if len(sys.argv) > 2 and sys.argv[2]:
    json.dump(rows, open(sys.argv[2], "w"), indent=1)
PY
