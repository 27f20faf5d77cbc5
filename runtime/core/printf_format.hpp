// OpenCL C printf formatting on the host, shared by every device that prints from kernels.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace duet::rt {

/// Receives the text of one printf call. A WorkGroupContext::printfCtx that is not null must
/// point at a PrintfSink; `write` may be called from many threads at once and must be
/// thread-safe. With a null printfCtx the text goes to stdout.
class PrintfSink {
public:
    virtual ~PrintfSink() = default;
    virtual void write(std::string_view text) = 0;
};

/// Formats one OpenCL C printf call (OpenCL C 3.0 §6.15.14). `args` holds the arguments,
/// argument i at byte `layout[2*i]` with size `layout[2*i+1]`; the size tells float from
/// double, and a vector's element size. Returns false on a malformed format or missing
/// argument (the text then holds what was formatted before the error).
bool formatOpenClPrintf(const char* format, const char* args, const uint32_t* layout,
                        uint32_t count, std::string& out);

} // namespace duet::rt
