// The CPU builtin library: each build links the closure of its calls (compiler/library_closure).
#include "devices/cpu/jit/builtin_library.hpp"

#include "compiler/library_closure.hpp"
#include "compiler/llvm_util.hpp"
#include "core/environment.hpp"
#include "devices/cpu/device_enqueue_hooks.hpp"
#include "devices/cpu/jit/guards.hpp"
#include "devices/cpu/jit/local_atomics.hpp"
#include "devices/cpu/jit/printf.hpp"

#include <llvm/IR/Module.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/Support/Path.h>

#include <dlfcn.h>

namespace duet::rt::cpu {

using namespace llvm;

std::string linkBuiltinLibrary(llvm::Module& m) {
    const bool shared = envSwitchOn("DUET_CPU_SHARED_BUILTINS") && sharedLibrariesEnabled();
    std::string error =
        linkLibraryClosure(m, cpuBuiltinLibraryBitcode(), "builtin library", shared);
    return error;
}

/// C functions generated code may call in the process: the maths libraries (the builtin
/// library calls libm, the vectoriser libmvec), the memory intrinsics' libc functions and the
/// compiler's runtime helpers (`__extendhfsf2`, ...). Anything else (a user's prototype without
/// a body, say `system`) is an undefined function, not a call into the host.
namespace {

bool allowedHostFunction(StringRef name) {
    if (name.starts_with("_Z"))
        return false; // mangled: an OpenCL C function, never a host one
    if (name == "memcpy" || name == "memmove" || name == "memset")
        return true;
    const std::string n = name.str();
    void* address = sys::DynamicLibrary::SearchForAddressOfSymbol(n);
    if (!address)
        return false;
    if (name.starts_with("__"))
        return true;
    // dlsym through libm's handle would also find libc (a dependency): ask where it lives.
    Dl_info info;
    if (!dladdr(address, &info) || !info.dli_fname)
        return false;
    StringRef file = sys::path::filename(info.dli_fname);
    return file.starts_with("libm.so") || file.starts_with("libm-") ||
           file.starts_with("libmvec.so") || file.starts_with("libmvec-");
}

/// True for the host functions of device-side enqueue (devices/cpu/device_enqueue.cpp).
bool deviceEnqueueHook(StringRef name) {
    size_t count = 0;
    const DeviceEnqueueHook* hooks = deviceEnqueueHooks(count);
    for (size_t i = 0; i < count; ++i)
        if (name == hooks[i].name)
            return true;
    return false;
}

} // namespace

/// A declaration nothing defines: an OpenCL builtin the library lacks, or a user function
/// without a body. Reported at build time, never left for the JIT to trip on.
std::string unresolvedFunctions(Module& m) {
    return undefinedSymbolReport(m, "this device", [](StringRef name, std::string&) {
        return name == kPrintfHookName || name == kCheckFailHookName ||
               name == kCancelledHookName || name == kDeferredFailHookName ||
               name == kCheckScanHookName || name == kBarrierCheckHookName ||
               deviceEnqueueHook(name) || allowedHostFunction(name) || isScopeMarkerName(name);
    });
}

} // namespace duet::rt::cpu
