// Guards of GCN dispatches on the software model: the memory a checked launch may touch, and
// the messages of a launch stopped by a check or by DUET_KERNEL_TIMEOUT.
#include "devices/gcn/launch_guards.hpp"

#include "core/kernel_checks.hpp"
#include "core/memory.hpp"
#include "core/svm.hpp"
#include "devices/gcn/code_object.hpp"

#include <chrono>
#include <cstdio>

namespace duet::rt::gcn_device {

namespace {

const char* accessName(gcn::MemoryFault::Kind kind) {
    switch (kind) {
    case gcn::MemoryFault::Kind::Write:
        return "write";
    case gcn::MemoryFault::Kind::Atomic:
        return "atomic access";
    default:
        return "read";
    }
}

/// Argument `index`'s name: the OpenCL argument info, else the code object's `.name` (the IR
/// names, which the GCN device keeps when checks are on).
std::string argumentName(const KernelLaunch& launch, size_t index) {
    const std::string& name = launch.kernel->desc().args[index].name;
    if (!name.empty())
        return name;
    const auto* entry = static_cast<const gcn::KernelEntry*>(launch.entry);
    if (!entry || !entry->kernel)
        return {};
    size_t explicitIndex = 0;
    for (const gcn::KernelArgMeta& a : entry->kernel->args) {
        if (a.valueKind.rfind("hidden_", 0) == 0)
            continue;
        if (explicitIndex++ == index)
            return a.name;
    }
    return {};
}

} // namespace

gcn::DispatchGuards dispatchGuards(double timeoutSeconds, bool checks,
                                   const std::vector<std::pair<const void*, uint64_t>>& ranges) {
    gcn::DispatchGuards g;
    if (timeoutSeconds > 0) {
        const auto now = std::chrono::steady_clock::now().time_since_epoch();
        g.deadlineNs = std::chrono::duration_cast<std::chrono::nanoseconds>(now).count() +
                       int64_t(timeoutSeconds * 1e9);
    }
    g.checkMemory = checks;
    g.checkBarriers = checks;
    if (checks) {
        for (auto [p, bytes] : ranges) {
            const auto base = reinterpret_cast<uint64_t>(p);
            g.memory.emplace_back(base, base + bytes);
        }
        // Fine-grain SVM: pointers stored in one allocation may lead into any other.
        g.accept = [](uint64_t address, uint64_t bytes) {
            std::optional<SvmAllocation> s = svmFind(reinterpret_cast<const void*>(address));
            return s && address + bytes <= reinterpret_cast<uint64_t>(s->base) + s->size;
        };
    }
    return g;
}

std::string describeFault(const KernelLaunch& launch, const gcn::MemoryFault& f) {
    const KernelDesc& desc = launch.kernel->desc();
    // The buffer argument nearest to the address: the one that holds it, else the least distance
    // to its bytes (a NULL buffer is the empty range at 0).
    size_t best = SIZE_MAX;
    uint64_t bestDistance = UINT64_MAX, bestLow = 0, bestHigh = 0;
    for (size_t i = 0; i < desc.args.size() && i < launch.args.size(); ++i) {
        const KernelArgKind kind = desc.args[i].kind;
        if (kind != KernelArgKind::GlobalBuffer && kind != KernelArgKind::ConstantBuffer)
            continue;
        const ArgValue& a = launch.args[i];
        uint64_t low = 0, high = 0;
        if (a.mem) {
            low = reinterpret_cast<uint64_t>(a.mem->data());
            high = low + a.mem->size();
        } else if (a.svm) {
            low = reinterpret_cast<uint64_t>(a.svm);
            high = low;
            if (std::optional<SvmAllocation> s = svmFind(a.svm)) {
                low = reinterpret_cast<uint64_t>(s->base);
                high = low + s->size;
            }
        }
        const uint64_t distance = f.address < low     ? low - f.address
                                  : f.address >= high ? f.address - high + (high > low ? 1 : 0)
                                                      : 0;
        if (distance < bestDistance) {
            best = i;
            bestDistance = distance;
            bestLow = low;
            bestHigh = high;
        }
    }
    std::string what;
    if (best == SIZE_MAX) {
        char text[64];
        std::snprintf(text, sizeof text, "address 0x%llx",
                      static_cast<unsigned long long>(f.address));
        what = std::string(text) + ", outside every buffer the dispatch was given (the kernel has "
                                   "no buffer arguments)";
    } else {
        const KernelArgDesc& arg = desc.args[best];
        const ArgValue& a = launch.args[best];
        const std::string name = argumentName(launch, best);
        uint64_t origin = bestLow;
        std::string buffer;
        if (a.mem) {
            buffer = std::string(a.mem->parent() ? "a sub-buffer of " : "a buffer of ") +
                     std::to_string(a.mem->size()) + " bytes";
        } else if (a.svm) {
            origin = reinterpret_cast<uint64_t>(a.svm);
            buffer = "an SVM pointer " + std::to_string(origin - bestLow) +
                     " bytes into an allocation of " + std::to_string(bestHigh - bestLow) +
                     " bytes";
        } else {
            buffer = "NULL";
        }
        what = "byte offset " + std::to_string(int64_t(f.address - origin)) + " of argument " +
               std::to_string(best) + (name.empty() ? "" : " '" + name + "'") + " (" +
               qualifierName(arg.addressQualifier) + arg.typeName + ", " + buffer + ")";
    }
    // Global id = group id * enqueued local size + local id + offset.
    std::string item;
    const cl_uint dims = std::max<cl_uint>(1, launch.workDim);
    if (dims > 1)
        item = "(";
    for (cl_uint d = 0; d < dims; ++d) {
        const uint64_t id =
            uint64_t(f.groupId[d]) * launch.local[d] + f.localId[d] + launch.offset[d];
        item += (d ? ", " : "") + std::to_string(id);
    }
    if (dims > 1)
        item += ")";
    char where[96];
    std::snprintf(where, sizeof where, " at kernel offset 0x%llx",
                  static_cast<unsigned long long>(f.kernelOffset));
    return "kernel '" + desc.name + "': out-of-bounds " + accessName(f.kind) + " of " +
           std::to_string(f.bytes) + " bytes at " + what + " by work-item " + item +
           " (global id) (" + f.instruction + where + "); the launch was stopped " +
           "(DUET_KERNEL_CHECKS)";
}

std::string describeDivergence(const KernelLaunch& launch, const gcn::BarrierDivergence& d) {
    // The CPU device's text (core/kernel_checks.cpp), from the model's account.
    CheckFault f;
    f.what = FaultKind::BarrierDivergence;
    for (int i = 0; i < 3; ++i) {
        f.groupId[i] = d.groupId[i];
        f.localId[0][i] = d.localId[0][i];
        f.localId[1][i] = d.localId[1][i];
    }
    for (int k = 0; k < 2; ++k)
        f.stop[k] = d.stop[k] == gcn::BarrierDivergence::Stop::End       ? BarrierStop::End
                    : d.stop[k] == gcn::BarrierDivergence::Stop::Skipped ? BarrierStop::Skipped
                                                                         : BarrierStop::Barrier;
    return rt::describeFault(launch, f);
}

std::string describeTimeout(const KernelLaunch& launch, double timeoutSeconds, double ran) {
    char text[200];
    std::snprintf(text, sizeof text,
                  "kernel '%s' ran longer than DUET_KERNEL_TIMEOUT=%g s and was stopped after "
                  "%.2f s",
                  launch.kernel->desc().name.c_str(), timeoutSeconds, ran);
    return text;
}

} // namespace duet::rt::gcn_device
