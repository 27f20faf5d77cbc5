#!/usr/bin/env bash
# The main job: installs what is needed, builds, and runs the N-body demo on Duet's default
# device through the system ICD loader: a window when there is a display, headless EGL
# otherwise, for a fixed number of frames, writing nbody.png and the timing summary. The depth
# fog pass (GL depth and sRGB textures shared with CL) is on; `--set fog=0` turns it off.
# Usage: scripts/main.sh [duet-nbody options...]   (defaults: --frames 60)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
export OCL_ICD_VENDORS="$PWD/build/icd" # only the build tree's duet.icd
unset OCL_ICD_FILENAMES
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--frames 60)
exec build/samples/nbody/duet-nbody --platform Duet --screenshot nbody.png --stats --set fog=1 \
    "${args[@]}"
