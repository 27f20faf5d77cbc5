// The CPU device's printf hook: JIT-compiled kernels call it; it formats with core's formatter.
#include "devices/cpu/jit/printf.hpp"

#include <cstdio>
#include <mutex>

extern "C" int __duet_printf(void* printfCtx, const char* format, const char* args,
                             const uint32_t* layout, uint32_t count) {
    static std::mutex stdoutMutex;
    std::string text;
    const bool ok = duet::rt::formatOpenClPrintf(format, args, layout, count, text);
    if (printfCtx) {
        static_cast<duet::rt::PrintfSink*>(printfCtx)->write(text);
    } else {
        std::lock_guard<std::mutex> lock(stdoutMutex);
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
    }
    return ok ? 0 : -1;
}
