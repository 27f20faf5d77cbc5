#!/bin/bash
# The Khronos CTS on the GCN model, sliced over processes to fill a many-core host (the run of
# 27 Nov 2026 on the lent 16-vCPU GPU host: tests/README.md, "Conformance"). Usage, from a
# checkout's root that holds .gl/duet.tar.xz (scripts/bundle.sh's bundle) and .gl/gcncts.tar.xz
# (the CTS binaries below, stripped, in one folder), with $OUT a folder for the results:
#   bash scripts/cts-gcn-sliced.sh [T seconds, 540] [P processes at once, 24]
# test_c11_atomics at FULL iterations (no -internalIterations, no wimpy), one process per test;
# computeinfo, api, buffers, basic and the image suites (small_images), each sliced by test name.
# P workers take the jobs in the order below (cheap first, so that the most finish); every
# process is stopped at T seconds. Each process of the model runs up to one host thread per core.
T=${1:-540}; P=${2:-24}
exec > >(tee $OUT/log.txt) 2>&1
date -u; lscpu | grep -E 'Model name|^CPU\(s\)'
mkdir -p /tmp/duet-b /tmp/cts2
[ -d /tmp/duet-b/done ] || { tar -C /tmp/duet-b -xf .gl/duet.tar.xz && mkdir /tmp/duet-b/done; }
tar -C /tmp/cts2 -xf .gl/gcncts.tar.xz
home=$(ls -d /tmp/duet-b/*/ | grep -v done | head -1); home=${home%/}; cd $home
export DUET_BUNDLED_LIBS=ocl-icd DUET_ICD_ONLY=1; . ./setup-env.sh; export DUET_DEVICES=gcn
cd /tmp/cts2; J=/tmp/jobs.txt; : > $J
names() { ./$1 --help 2>&1 | sed -n '/Test names/,$p' | tail -n +2 | tr -d '\t '; }
slice() { # slice <job prefix> <n> <binary> <args> : round-robin the suite's tests into n jobs
  local p=$1 n=$2 b=$3 a=$4; names $b | grep -v -x -E "${EXCL:-^$}" | awk -v n=$n '{l[NR%n]=l[NR%n]" "$1} END {for (i=0;i<n;i++) if (l[i]!="") print i, l[i]}' |
  while read i tests; do echo "$p$i|$b $a $tests" >> $J; done; }
c11() { for t in "$@"; do echo "c11_$t|test_c11_atomics $t" >> $J; done; }
c11 atomic_init atomic_store atomic_load atomic_flag atomic_fence svm_atomic_init svm_atomic_store svm_atomic_load svm_atomic_flag svm_atomic_fence
echo "computeinfo|test_computeinfo" >> $J
echo "getinfo|test_cl_get_info small_images" >> $J
echo "rw|test_cl_read_write_images small_images" >> $J
EXCL='min_max_constant_buffer_size' slice api_ 3 test_api ""
slice buffers_ 4 test_buffers ""
echo "fill|test_cl_fill_images small_images" >> $J
echo "samplerless|test_samplerless_reads small_images" >> $J
echo "streams_rest|test_image_streams small_images $(names test_image_streams | grep -v -x -E '1D|2D|3D|1Darray|2Darray' | tr '\n' ' ')" >> $J
c11 atomic_fetch_add atomic_fetch_sub atomic_fetch_and atomic_fetch_or atomic_fetch_xor atomic_fetch_min atomic_fetch_max svm_atomic_fetch_add svm_atomic_fetch_sub svm_atomic_fetch_and svm_atomic_fetch_or svm_atomic_fetch_xor svm_atomic_fetch_min svm_atomic_fetch_max
slice basic_ 6 test_basic ""
for t in 1D 2D 3D 1Darray 2Darray; do echo "streams_$t|test_image_streams small_images $t" >> $J; done
for t in 1D 2D 3D; do echo "copy_$t|test_cl_copy_images small_images $t" >> $J; done
echo "copy_rest|test_cl_copy_images small_images 1Darray 2Darray 2Dto3D 3Dto2D 2Darrayto2D 2Dto2Darray 2Darrayto3D 3Dto2Darray" >> $J
echo "kim_a|test_kernel_image_methods small_images 1D 2D 1Darray" >> $J
echo "kim_b|test_kernel_image_methods small_images 3D 2Darray" >> $J
c11 atomic_fetch_orand atomic_fetch_xor2 svm_atomic_fetch_orand svm_atomic_fetch_xor2 atomic_exchange svm_atomic_exchange atomic_compare_exchange_weak atomic_compare_exchange_strong svm_atomic_compare_exchange_weak svm_atomic_compare_exchange_strong
echo "api_cbuf|test_api min_max_constant_buffer_size" >> $J
cut -c1-200 $J
START=$(date +%s); export END=$((START + T))
R=/tmp/r; rm -rf $R; mkdir -p $R /tmp/cache; export R START
( while sleep 15; do echo "$(date -u +%T) $(cut -d' ' -f1-4 /proc/loadavg)"; done ) > $R/load.txt & LOADPID=$!
one() {
  n=${1%%|*}; cmd=${1#*|}; s=$(date +%s); left=$((END - s)); [ $left -lt 5 ] && { echo "$n notstarted" >> $R/summary.txt; return; }
  DUET_CACHE_DIR=/tmp/cache/$n CL_CONFORMANCE_RESULTS_FILENAME=$R/$n.json timeout $left stdbuf -oL -eL ./$cmd > $R/$n.log 2>&1
  rc=$?; e=$(date +%s); times > $R/.t.$n; set -- $(tail -1 $R/.t.$n)
  echo "$n rc=$rc start=$((s - START)) wall=$((e - s)) cpu_user=$1 cpu_sys=$2" >> $R/summary.txt
}
export -f one
tr '\n' '\0' < $J | xargs -0 -P $P -I{} bash -c 'one "{}"'
kill $LOADPID
echo "== summary"; sort $R/summary.txt
for f in $R/*.json; do echo "$(basename $f .json): $(tr -d ' \n' < $f | grep -o '"results":{[^}]*}')"; done
for f in $R/*.log; do echo "$(basename $f .log): $(grep -a -E '^(PASSED|FAILED|SKIPPED) .*tests?\.$' $f | tail -1) | $(grep -a -i -E '^[A-Za-z0-9_]+ (passed|failed|skipped)' $f | tail -1)"; done
echo "== error lines"; grep -a -i -E 'error|fail' $R/*.log | grep -v -E ' passed$' | head -60
for f in $R/c11_*.log; do echo "$(basename $f .log): subtests_started=$(grep -a -c -E '^\s+\S.*\.\.\.$' $f) executed_ok=$(grep -a -o -E '[0-9]+ tests executed successfully' $f | awk '{s+=$1} END {print s+0}')"; done
free -g | head -2; dmesg 2>/dev/null | grep -i -E 'oom|killed process' | tail -3
tr '\n' ' ' < $R/load.txt; echo
tar -C /tmp -czf $OUT/r.tar.gz r
if [ $(stat -c %s $OUT/r.tar.gz) -gt 15000000 ]; then for f in $R/*.log; do { head -c 300000 $f; echo ...; tail -c 300000 $f; } > $f.cut; mv $f.cut $f; done; tar -C /tmp -czf $OUT/r.tar.gz r; fi
ls -la $OUT; date -u
