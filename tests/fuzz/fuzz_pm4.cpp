// Fuzzes PM4 command streams through the decoder the software GCN model's sink runs
// (devices/gcn/pm4.hpp): every stream is either decoded or rejected with the dword it stopped at.
#include "devices/gcn/pm4.hpp"
#include "fuzz_check.hpp"

#include <cstring>
#include <vector>

using namespace duet::gcn;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::vector<uint32_t> dwords(size / 4);
    if (!dwords.empty())
        std::memcpy(dwords.data(), data, dwords.size() * 4);
    pm4::DecodeResult r = pm4::decode(dwords);
    if (!r) {
        FUZZ_CHECK(r.error.find("dword ") != std::string::npos, "an error that names no dword");
        FUZZ_CHECK(r.commands.empty(), "a rejected stream yielded commands");
        return 0;
    }
    size_t last = 0;
    for (const pm4::Command& c : r.commands) {
        FUZZ_CHECK(c.dwordOffset < dwords.size(), "a command outside the stream");
        FUZZ_CHECK(c.dwordOffset >= last, "commands out of stream order");
        last = c.dwordOffset;
        if (c.kind == pm4::Command::Kind::Dispatch)
            FUZZ_CHECK(c.dispatch.pgmAddress != 0 && c.dispatch.pgmAddress % 256 == 0,
                       "a dispatch without a 256-byte aligned program address");
        if (c.kind == pm4::Command::Kind::Fence)
            FUZZ_CHECK(c.fence.address != 0, "a fence to address 0");
    }
    return 0;
}
