#!/usr/bin/env bash
# Checks the runtime's one-way include graph (runtime/README.md) and the size rules:
#   core/     includes nothing from compiler/, devices/, gl/, api/
#   compiler/ includes nothing from devices/, gl/, api/
#   gl/       includes nothing from devices/, compiler/, api/
#   devices/<kind>/ includes nothing from another device, api/ or gl/
#   no C++ source of the runtime, engine, interop or samples over 1,500 lines;
#   no function in the runtime, engine, interop, samples or kernels over 200 lines (first to
#   last line, as universal-ctags finds them; scripts/install-deps.sh installs it). Without
#   universal-ctags that check cannot run, which is a failure too, so CI notices.
# Prints each violation; exits 1 if there is any. Run by ctest (layering_test).
set -euo pipefail
cd "$(dirname "$0")/../runtime"
bad=0
violation() {
    echo "check-layers: $1" >&2
    bad=1
}
includes() { # folder, forbidden-prefix regex
    grep -rnE "^#include \"($2)" --include='*.cpp' --include='*.hpp' --include='*.inc' "$1" || true
}
while IFS= read -r hit; do [ -n "$hit" ] && violation "core reaches out: $hit"; done \
    < <(includes core 'compiler/|devices/|gl/|api/')
while IFS= read -r hit; do [ -n "$hit" ] && violation "compiler knows a device: $hit"; done \
    < <(includes compiler 'devices/|gl/|api/')
while IFS= read -r hit; do [ -n "$hit" ] && violation "gl reaches out: $hit"; done \
    < <(includes gl 'devices/|compiler/|api/')
for dev in devices/*/; do
    kind=$(basename "$dev")
    others=$(find devices -mindepth 1 -maxdepth 1 -type d ! -name "$kind" -printf 'devices/%f/|')
    while IFS= read -r hit; do [ -n "$hit" ] && violation "$kind reaches out: $hit"; done \
        < <(includes "$dev" "${others}api/|gl/")
done
cd ..
while read -r n f; do
    [ "$f" = total ] && continue
    [ "$n" -gt 1500 ] && violation "$f has $n lines (over 1,500)"
done < <(git ls-files 'runtime/*.cpp' 'runtime/*.hpp' 'engine/*.cpp' 'interop/*.cpp' \
    'samples/*.cpp' | xargs wc -l)
if [[ "$(ctags --version 2>/dev/null)" == "Universal Ctags"* ]]; then
    while read -r end start file name; do
        [[ "$end" =~ ^[0-9]+$ && "$start" =~ ^[0-9]+$ ]] || continue
        n=$((end - start + 1))
        [ "$n" -gt 200 ] && violation "$file:$start: function $name has $n lines (over 200)"
    done < <(git ls-files 'runtime/*.cpp' 'runtime/*.hpp' 'engine/*.cpp' 'interop/*.cpp' \
        'samples/*.cpp' 'kernels/*.cpp' |
        ctags -L - --c++-kinds=f --fields=+ne -x --_xformat='%{end} %{line} %F %N')
else
    violation "universal-ctags not installed, function lengths not checked"
fi
[ "$bad" -eq 0 ] && echo "check-layers: the include graph is one-way, no file is over 1,500 lines" \
    "and no function over 200"
exit "$bad"
