#!/usr/bin/env bash
# The Debian package as a user gets it: cpack -G DEB makes duet_<version>_amd64.deb; dpkg -x
# unpacks it into a scratch root (no root needed); then the control fields (name, version,
# architecture, Depends naming a package for every shared library a packaged program or library
# needs, the ICD file as a conffile, the ldconfig trigger), the files, the ICD file's path, and
# clinfo listing the packaged runtime with the project version as CL_DRIVER_VERSION.
# Usage: deb_test.sh CPACK SOURCE_DIR BUILD_DIR VERSION WORK_DIR   (run by ctest as deb_test)
set -euo pipefail
cpack=$1 source=$2 build=$3 version=$4 work=$5
fail() {
    echo "FAILED: $*" >&2
    exit 1
}
for tool in dpkg-deb dpkg readelf; do
    command -v "$tool" >/dev/null || { echo "SKIPPED: $tool is not installed"; exit 77; }
done
rm -rf "$work"
mkdir -p "$work"

"$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$work" >"$work/cpack.log" 2>&1 ||
    { cat "$work/cpack.log"; fail "cpack -G DEB failed"; }
deb="$work/duet_${version}_amd64.deb"
[ -f "$deb" ] || fail "cpack made $(cd "$work" && ls ./*.deb 2>/dev/null) instead of $(basename "$deb")"
echo "package: $(basename "$deb"), $(stat -c %s "$deb") bytes"

field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = duet ] || fail "Package is '$(field Package)'"
[ "$(field Version)" = "$version" ] || fail "Version is '$(field Version)', the project's is $version"
[ "$(field Architecture)" = amd64 ] || fail "Architecture is '$(field Architecture)'"
depends=$(field Depends)
echo "Depends: $depends"
# The package names in Depends, without versions or alternatives' bars.
mapfile -t depended < <(tr ',|' '\n\n' <<<"$depends" | sed -E 's/\(.*\)//; s/^ +//; s/ +$//' | grep .)
depends_on() {
    local p
    for p in "${depended[@]}"; do [ "$p" = "$1" ] && return 0; done
    return 1
}
# Read at run time, not linked: clang's OpenCL headers, libclc's bitcode; and the ICD loader.
for p in libclang-common-19-dev libclc-19 ocl-icd-libopencl1 libllvm19 libclang-cpp19 libc6; do
    depends_on "$p" || fail "Depends does not name $p"
done

dpkg-deb -e "$deb" "$work/control"
grep -qx /etc/OpenCL/vendors/duet.icd "$work/control/conffiles" ||
    fail "the ICD file is not a conffile"
grep -q '^activate-noawait ldconfig' "$work/control/triggers" || fail "no ldconfig trigger"

root="$work/root"
dpkg -x "$deb" "$root"
icd="$root/etc/OpenCL/vendors/duet.icd"
[ -f "$icd" ] || fail "no /etc/OpenCL/vendors/duet.icd in the package"
library=$(cat "$icd")
[[ "$library" == /usr/lib/*libduet-opencl.so.0 ]] || fail "duet.icd names '$library'"
[ -e "$root$library" ] || fail "duet.icd names $library, which the package does not hold"
soname=$(readelf -d "$root$library" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "$(basename "$library")" ] || fail "$library has SONAME '$soname'"
echo "ICD: /etc/OpenCL/vendors/duet.icd -> $library"

libdir=$(dirname "$library")
for f in \
    "$libdir/libduet-interop.a" "$libdir/libduet-engine.a" "$libdir/libduet-engine-main.a" \
    "$libdir/libduet-fft.a" "$libdir/libduet-glad.a" \
    "$libdir/cmake/Duet/DuetConfig.cmake" "$libdir/cmake/Duet/DuetConfigVersion.cmake" \
    "$libdir/cmake/Duet/DuetTargets.cmake" \
    "$libdir/pkgconfig/duet-interop.pc" "$libdir/pkgconfig/duet-engine.pc" \
    /usr/include/duet/interop/interop.hpp /usr/include/duet/engine/app/sample.hpp \
    /usr/include/duet/fft/fft.hpp /usr/include/duet/version.hpp \
    /usr/include/duet/glad/glad/gl.h \
    /usr/bin/duet-nbody /usr/bin/duet-simplegl /usr/bin/duet-ocean /usr/bin/duet-gasdyn \
    /usr/bin/duet-displays \
    /usr/share/duet/kernels/nbody/nbody.cl /usr/share/duet/shaders/simplegl/mesh.vert.glsl \
    /usr/share/doc/duet/CHANGELOG.md /usr/share/doc/duet/examples/starter/starter.cpp; do
    [ -f "$root$f" ] || fail "the package lacks $f"
done
# Nothing outside /usr and /etc/OpenCL/vendors.
stray=$(cd "$root" && find . -type f ! -path './usr/*' ! -path './etc/OpenCL/vendors/*')
[ -z "$stray" ] || fail "files outside /usr and /etc/OpenCL/vendors: $stray"
# The package files a user's build reads (CMake package, pkg-config, headers, the ICD file) name
# nothing of the machine that built the package.
for dir in "$build" "$source"; do
    if grep -rlF "$dir" "$root$libdir/cmake" "$root$libdir/pkgconfig" "$root/usr/include" \
        "$root/etc"; then
        fail "the packaged files above name $dir"
    fi
done

# Every shared library a packaged ELF file needs comes from the package or a package in Depends.
elves=0
cache=$(ldconfig -p)
while IFS= read -r -d '' f; do
    [ "$(head -c4 "$f" | tr -d '\0')" = $'\x7fELF' ] || continue
    # Whole outputs into variables, not pipes into grep -q or awk's exit: under pipefail the writer's
    # SIGPIPE would fail the pipeline, and set -e end the test without a word.
    header=$(readelf -h "$f" 2>/dev/null) || continue
    grep -qE 'Type:[[:space:]]+(EXEC|DYN)' <<<"$header" || continue
    elves=$((elves + 1))
    while IFS= read -r needed; do
        [ -e "$root$libdir/$needed" ] && continue
        path=$(awk -v l="$needed" '$1 == l && /x86-64/ && !found { print $NF; found = 1 }' <<<"$cache")
        [ -n "$path" ] || fail "${f#"$root"} needs $needed, which this machine cannot resolve"
        pkg=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(readlink -f "$path")" 2>/dev/null ||
            dpkg -S "/usr$path" 2>/dev/null || dpkg -S "${path#/usr}" 2>/dev/null || true)
        pkg=${pkg%%:*}
        [ -n "$pkg" ] || fail "no Debian package holds $path (${f#"$root"} needs it)"
        depends_on "$pkg" || fail "${f#"$root"} needs $needed from $pkg, which Depends does not name"
    done < <(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
done < <(find "$root" -type f -print0)
[ "$elves" -ge 7 ] || fail "only $elves programs and libraries in the package"
echo "Depends covers the shared libraries of $elves programs and libraries"

# The packaged programs and runtime report the project version.
v=$("$root/usr/bin/duet-nbody" --version) || fail "duet-nbody --version failed"
[ "$v" = "duet-nbody (Duet) $version" ] || fail "duet-nbody --version printed '$v'"
if command -v clinfo >/dev/null; then
    mkdir -p "$work/vendors"
    echo "$root$library" >"$work/vendors/duet.icd"
    out=$(OCL_ICD_VENDORS="$work/vendors" OCL_ICD_FILENAMES= clinfo) || fail "clinfo failed"
    grep -qE 'Platform Name[[:space:]]+Duet' <<<"$out" || fail "clinfo does not list Duet: $out"
    grep -E 'Driver Version' <<<"$out" | grep -vqE "Driver Version[[:space:]]+$version" &&
        fail "a CL_DRIVER_VERSION is not $version: $(grep 'Driver Version' <<<"$out")"
    grep -qE "Driver Version[[:space:]]+$version" <<<"$out" || fail "clinfo shows no driver version"
    echo "clinfo: the packaged runtime is platform Duet, driver version $version"
else
    echo "clinfo is not installed: the packaged runtime's listing is not checked"
fi
echo "deb_test: PASS"
