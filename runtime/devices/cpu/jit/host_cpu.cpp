// Host CPU name and features as LLVM spells them, for the CPU device's target.
#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>

#include <string>

namespace duet::rt {

std::string hostCpuName() {
    return llvm::sys::getHostCPUName().str();
}

std::string hostCpuFeatures() {
    const llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    std::string out;
    for (const auto& f : features) {
        if (!out.empty())
            out += ',';
        out += (f.second ? "+" : "-") + f.first().str();
    }
    return out;
}

} // namespace duet::rt
