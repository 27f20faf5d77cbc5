#!/usr/bin/env bash
# Weak and strong scaling of duet-gasdyn's MPI solver: runs duet-gasdyn-mpi-bench under mpirun for
# each rank count and prints step time, parallel efficiency against one rank and the share of the
# step spent in halo exchange and in the time step's MPI_Allreduce. From the source tree it builds
# the bench first; the relocatable bundle carries it as bin/duet-gasdyn-mpi-scaling, which uses
# the bundle's programs and its Open MPI (bin/duet-mpirun) and needs nothing installed.
#
# Usage: gasdyn_mpi_run.sh [--ranks "1 2 4 8 16"] [--modes "weak strong"] [--weak-n 512]
#                          [--strong-n 2048] [--steps 20] [--cores-per-rank 1]
#                          [--overlap off|on|both] [--staging host|mapped] [--device NAME]
#                          [--json FILE]
# Modes: weak (an n x n block per rank), strong (one n x n grid), hybrid (the strong grid with
# the host's cores divided among the ranks: ranks x threads = cores, so MPI ranks against CPU
# device threads on the same cores), alone (weak scaling's ceiling on this host: every rank steps
# its own --weak-n grid with no communication, on the same cores). In weak and strong each rank keeps --cores-per-rank cores
# (its CPU device runs that many threads), so the cores in use grow with the ranks. --overlap on:
# each block's interior is updated while its halos travel (off by default; both: each point twice).
# --staging: where the halos stop on the host (plain memory, or a mapped ALLOC_HOST_PTR buffer).
# Efficiency: weak and alone T(1) / T(P), strong T(1) / (P T(P)), hybrid T(1) / T(P) (against the first
# rank count listed when that is not 1).
# Environment: BUILD_DIR (default <repo>/build), DUET_DEVICES (default cpu), MPIRUN (default the
# bundle's duet-mpirun or mpirun on PATH), MPIRUN_ARGS (extra mpirun arguments).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ranks="1 2 4 8 16"
modes="weak strong"
weak_n=512
strong_n=2048
steps=20
per_rank=1
overlap=off
staging=host
device=()
json=""
while (($#)); do
    case "$1" in
    --ranks) ranks="$2"; shift 2 ;;
    --modes) modes="$2"; shift 2 ;;
    --weak-n) weak_n="$2"; shift 2 ;;
    --strong-n) strong_n="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --cores-per-rank) per_rank="$2"; shift 2 ;;
    --overlap) overlap="$2"; shift 2 ;;
    --staging) staging="$2"; shift 2 ;;
    --device) device=(--device "$2"); shift 2 ;;
    --json) json="$2"; shift 2 ;;
    -h | --help) sed -n '2,22p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "gasdyn_mpi_run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
for m in $modes; do
    case "$m" in weak | strong | hybrid | alone) ;; *) echo "gasdyn_mpi_run.sh: unknown mode $m" >&2; exit 2 ;; esac
done
case "$staging" in host | mapped) ;; *) echo "gasdyn_mpi_run.sh: --staging takes host or mapped" >&2; exit 2 ;; esac
case "$overlap" in
on) overlaps=(on) ;; off) overlaps=(off) ;; both) overlaps=(off on) ;;
*) echo "gasdyn_mpi_run.sh: --overlap takes on, off or both" >&2; exit 2 ;;
esac

if [ -f "$here/../lib/libduet-opencl.so" ]; then
    # In the bundle: its ICD, its bench and its Open MPI.
    home="$(cd "$here/.." && pwd)"
    DUET_ICD_ONLY=1 . "$home/setup-env.sh"
    bench="$home/bin/duet-gasdyn-mpi-bench"
    mpirun="${MPIRUN:-$home/bin/duet-mpirun}"
else
    repo="$(cd "$here/.." && pwd)"
    build="${BUILD_DIR:-$repo/build}"
    [ -f "$build/build.ninja" ] ||
        cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
    ninja -C "$build" -j"$(nproc)" duet-gasdyn-mpi-bench duet-opencl
    export OCL_ICD_VENDORS="$build/icd"
    unset OCL_ICD_FILENAMES
    bench="$build/bench/gasdyn_mpi/duet-gasdyn-mpi-bench"
    mpirun="${MPIRUN:-mpirun}"
fi
[ -x "$bench" ] || { echo "gasdyn_mpi_run.sh: no $bench (built without MPI?)" >&2; exit 1; }
export DUET_DEVICES="${DUET_DEVICES:-cpu}"
# Shared memory between the ranks of this host, without CMA (containers often forbid it).
export OMPI_MCA_btl="${OMPI_MCA_btl:-self,vader}"
export OMPI_MCA_btl_vader_single_copy_mechanism="${OMPI_MCA_btl_vader_single_copy_mechanism:-none}"
# Its shared-memory segments go to /dev/shm, which containers often keep at 64 MB: /tmp then.
if [ -z "${OMPI_MCA_btl_vader_backing_directory:-}" ]; then
    shm_kb="$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 {print $4}')"
    if [ -z "$shm_kb" ] || [ "$shm_kb" -lt 524288 ]; then
        export OMPI_MCA_btl_vader_backing_directory="${TMPDIR:-/tmp}"
    fi
fi
root=()
[ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
cores="$(nproc)"
echo "gasdyn_mpi_run.sh: $cores cores, $(uname -n); $("$mpirun" --version 2>&1 | head -n1)"

results="$(mktemp "${TMPDIR:-/tmp}/duet-gasdyn-mpi.XXXXXX")"
trap 'rm -f "$results"' EXIT
for mode in $modes; do
    n=$strong_n
    case "$mode" in weak | alone) n=$weak_n ;; esac
    for ov in "${overlaps[@]}"; do
        for np in $ranks; do
            # Every rank sees all the cores (--bind-to none) and keeps its own share
            # (shareHostCores): --cores-per-rank, or in hybrid the host's cores divided.
            extra=(--bind-to none)
            k=$per_rank
            [ "$mode" = hybrid ] && k=0
            ((np * (k > 0 ? k : 1) > cores)) && extra+=(--oversubscribe)
            args=(--mode "${mode/hybrid/strong}" --n "$n" --steps "$steps" --cores-per-rank "$k"
                --staging "$staging")
            [ "$ov" = on ] && args+=(--overlap)
            line="$("$mpirun" ${root[@]+"${root[@]}"} "${extra[@]}" ${MPIRUN_ARGS:-} -np "$np" \
                "$bench" "${args[@]}" ${device[@]+"${device[@]}"})"
            echo "${line%\}}, \"table\": \"$mode\"}" >>"$results"
        done
    done
done

# The table (awk, so that the bundle needs no Python on the host).
awk -v json="$json" '
function val(key,   m) {
    if (!match($0, "\"" key "\": *(\"[^\"]*\"|[^,}]*)")) return ""
    m = substr($0, RSTART, RLENGTH); sub(/^"[^"]*": */, "", m); gsub(/"/, "", m); return m
}
BEGIN {
    printf "%-6s %7s %5s %7s %5s %11s %9s %9s %9s %10s %7s %10s %8s %11s %s\n", "mode",
        "overlap", "ranks", "layout", "cores", "grid", "step ms", "rank ms", "Mcell/s",
        "efficiency", "halo %", "halo max %", "halo ms", "allreduce %", "valid"
}
{
    mode = val("table"); ov = val("overlap") == "true" ? "on" : "off"; key = mode ov
    np = val("ranks") + 0; t = val("step_ms") + 0
    if (np == 1 || !(key in bt)) { bt[key] = t; bp[key] = np }
    eff = mode == "strong" ? bt[key] * bp[key] / (t * np) : bt[key] / t
    printf "%-6s %7s %5d %7s %5s %11s %9.2f %9.2f %9.1f %9.1f%% %6.1f%% %9.1f%% %8.3f %10.1f%% %s\n",
        mode, ov, np, val("layout"), val("cores_per_rank"), val("nx") "x" val("ny"), t,
        val("rank_step_ms_mean"), val("mcells"), 100 * eff, 100 * val("halo_share_mean"), 100 * val("halo_share_max"),
        val("halo_ms_mean"), 100 * val("allreduce_share_mean"), val("valid") == "true" ? "yes" : "NO"
    rows[NR] = substr($0, 1, length($0) - 1) sprintf(", \"efficiency\": %.4f}", eff)
    if (val("valid") != "true") bad = 1
}
END {
    if (json != "") {
        printf "[\n" > json
        for (i = 1; i <= NR; i++) printf " %s%s\n", rows[i], i < NR ? "," : "" > json
        printf "]\n" > json
    }
    exit bad
}' "$results"
