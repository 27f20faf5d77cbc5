#!/usr/bin/env bash
# The main job: installs what is needed, builds, and runs Duet's programs on Duet's default
# device through the system ICD loader. Until the N-body demo exists these are the console
# seeds (memset, SAXPY with the C++ bindings, parallel min, fill tiles) and clinfo.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
export OCL_ICD_VENDORS="$PWD/build/icd" # only the build tree's duet.icd
unset OCL_ICD_FILENAMES
clinfo -l
status=0
for seed in seed-memset seed-saxpy seed-parallel-min seed-fill-tiles; do
    (cd build/samples/seeds && "./$seed" --platform Duet) || status=1
done
exit $status
