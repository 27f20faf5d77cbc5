#!/usr/bin/env bash
# Duet bundle environment: makes the OpenCL ICD loader see this bundle's libduet-opencl.so and
# fills in the libraries the host lacks. Shipped at the top of the bundle (scripts/bundle.sh).
#
#   . ./setup-env.sh                 # bash or zsh: set up the current shell
#   ./setup-env.sh PROGRAM ARGS...   # run one program in that environment
#
# What it sets:
#   OCL_ICD_VENDORS   a folder of .icd files, which both ICD loaders (ocl-icd, Khronos) read instead
#                     of /etc/OpenCL/vendors: duet.icd, written here with this bundle's absolute
#                     path, plus links to the host's own .icd files unless DUET_ICD_ONLY=1, which
#                     also unsets a host's OCL_ICD_FILENAMES (Khronos' loader adds those ICDs).
#                     (Without this script, give the loader the library's absolute path:
#                     OCL_ICD_FILENAMES=$PWD/lib/libduet-opencl.so for Khronos' loader, which adds
#                     it to the host's ICDs; OCL_ICD_VENDORS=$PWD/lib/libduet-opencl.so for
#                     ocl-icd, which then loads it alone.)
#   __EGL_VENDOR_LIBRARY_DIRS  only where GLVND's folders hold no EGL vendor but NVIDIA's
#                     /usr/local/nvidia/share/glvnd/egl_vendor.d does.
#   LD_LIBRARY_PATH   lib/glvnd (GLVND's libEGL, libGL, libOpenGL, libGLX, libGLdispatch), lib/x11
#                     (Xlib for GLFW) and lib/ocl-icd (Debian's ocl-icd loader), each only when the
#                     host lacks one of the libraries in it. DUET_BUNDLED_LIBS=all takes them all,
#                     =none none, a list of folder names (ocl-icd,glvnd) those whatever the host has.
#   PATH              bin/ first.
# The executables find the rest by themselves: lib/ through their RUNPATH ($ORIGIN/../lib), the
# kernels and shaders in share/duet, libduet-opencl.so its clang headers and libclc beside it.

duet_setup_env() {
    local home="$1"
    local lib="$home/lib/libduet-opencl.so"
    if [ ! -f "$lib" ]; then
        echo "setup-env.sh: no $lib (is this an unpacked Duet bundle?)" >&2
        return 1
    fi

    # The .icd folder: in the bundle when it is writable, else a private temporary one.
    local icd="$home/icd"
    if ! mkdir -p "$icd" 2>/dev/null || [ ! -w "$icd" ]; then
        icd=$(mktemp -d "${TMPDIR:-/tmp}/duet-icd.XXXXXX") || return 1
    fi
    rm -f "$icd"/*.icd
    printf '%s\n' "$lib" >"$icd/duet.icd"
    # The host's own ICDs join unless DUET_ICD_ONLY=1: its .icd files, less those whose library
    # the host already names in OCL_ICD_FILENAMES (Khronos' loader enumerates both).
    local f
    if [ "${DUET_ICD_ONLY:-0}" = 1 ]; then
        unset OCL_ICD_FILENAMES
    else
        for f in /etc/OpenCL/vendors/*.icd; do
            [ -f "$f" ] && [ "$(basename "$f")" != duet.icd ] || continue
            case ":${OCL_ICD_FILENAMES:-}:" in
            *":$(head -n1 "$f"):"*) continue ;;
            esac
            ln -sf "$f" "$icd/$(basename "$f")"
        done
    fi
    # The trailing slash: Khronos loaders before 2020 join the folder and the file name without one.
    export OCL_ICD_VENDORS="$icd/"

    # Optional library folders: used when the host misses any library they hold.
    local dir name missing add=""
    for dir in "$home/lib/ocl-icd" "$home/lib/x11" "$home/lib/glvnd"; do
        [ -d "$dir" ] || continue
        case ",${DUET_BUNDLED_LIBS:-auto}," in
        *,all,* | *",$(basename "$dir"),"*) add="$dir${add:+:$add}"; continue ;;
        *,none,*) continue ;;
        esac
        missing=0
        for f in "$dir"/*.so*; do
            name=$(basename "$f")
            duet_host_has "$name" || { missing=1; break; }
        done
        [ "$missing" = 1 ] && add="$dir${add:+:$add}"
    done
    if [ -n "$add" ]; then
        export LD_LIBRARY_PATH="$add${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    fi
    # GLVND finds EGL vendors by their JSON files; some NVIDIA installs keep theirs only under
    # /usr/local/nvidia, which GLVND does not search.
    if [ -z "${__EGL_VENDOR_LIBRARY_DIRS:-}${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ] &&
        ! compgen -G "/etc/glvnd/egl_vendor.d/*.json" >/dev/null &&
        ! compgen -G "/usr/share/glvnd/egl_vendor.d/*.json" >/dev/null &&
        compgen -G "/usr/local/nvidia/share/glvnd/egl_vendor.d/*.json" >/dev/null; then
        export __EGL_VENDOR_LIBRARY_DIRS=/usr/local/nvidia/share/glvnd/egl_vendor.d
    fi
    export DUET_BUNDLE_HOME="$home"
    case ":$PATH:" in
    *":$home/bin:"*) ;;
    *) export PATH="$home/bin:$PATH" ;;
    esac
}

# Whether the dynamic linker would find a real (non-empty) library of this name on the host.
duet_host_has() {
    local ldconfig path
    for ldconfig in /sbin/ldconfig /usr/sbin/ldconfig; do
        [ -x "$ldconfig" ] || continue
        while read -r path; do
            [ -s "$path" ] && return 0
        done < <("$ldconfig" -p 2>/dev/null | awk -v n="$1" '$1 == n && /x86-64/ {print $NF}')
        break
    done
    for path in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64 /usr/lib64; do
        [ -s "$path/$1" ] && return 0
    done
    return 1
}

if [ -n "${BASH_SOURCE[0]:-}" ]; then
    duet_self="${BASH_SOURCE[0]}"
else
    duet_self="$0" # zsh sets $0 to the sourced file
fi
duet_home=$(cd "$(dirname "$duet_self")" && pwd)
if [ "${BASH_SOURCE[0]:-$0}" = "$0" ] && [ -z "${ZSH_EVAL_CONTEXT:-}" ]; then
    # Executed, not sourced: run the given program in the environment.
    set -e
    duet_setup_env "$duet_home"
    if [ $# -eq 0 ]; then
        echo "usage: . $0   (set up this shell)   or   $0 PROGRAM [ARGS...]" >&2
        exit 2
    fi
    exec "$@"
fi
duet_setup_env "$duet_home"
unset duet_self duet_home
