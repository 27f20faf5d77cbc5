// The message of a failed bounds check (DUET_KERNEL_CHECKS), the same on every device.
#include "core/kernel_checks.hpp"

#include "core/kernel.hpp"
#include "core/memory.hpp"

#include <cstring>

namespace duet::rt {

const char* qualifierName(cl_kernel_arg_address_qualifier q) {
    switch (q) {
    case CL_KERNEL_ARG_ADDRESS_GLOBAL:
        return "__global ";
    case CL_KERNEL_ARG_ADDRESS_CONSTANT:
        return "__constant ";
    case CL_KERNEL_ARG_ADDRESS_LOCAL:
        return "__local ";
    default:
        return "";
    }
}

namespace {

/// The `index`-th NUL-terminated string of `names`.
std::string nthName(const char* names, uint32_t index) {
    if (!names)
        return {};
    const char* p = names;
    for (uint32_t i = 0; i < index; ++i)
        p += std::strlen(p) + 1;
    return p;
}

const char* accessName(AccessKind kind) {
    switch (kind) {
    case AccessKind::Store:
        return "write";
    case AccessKind::Atomic:
        return "atomic access";
    default:
        return "read";
    }
}

/// An id of `dims` dimensions: "5" for one, "(5, 2)" for more.
std::string idText(const uint64_t id[3], cl_uint dims) {
    if (dims <= 1)
        return std::to_string(id[0]);
    std::string s = "(";
    for (cl_uint d = 0; d < dims; ++d)
        s += (d ? ", " : "") + std::to_string(id[d]);
    return s + ")";
}

std::string describeDivergence(const KernelLaunch& launch, const CheckFault& f) {
    // Work-item 0 of the group is f.localId[0]; the other one did what it did not.
    const std::string other = "work-item " + idText(f.localId[1], launch.workDim);
    const std::string first = "work-item " + idText(f.localId[0], launch.workDim);
    std::string how;
    if (f.stop[1] == BarrierStop::Skipped)
        how = other + " skips a work-group barrier at which " + first + " waits";
    else if (f.stop[1] == f.stop[0])
        how = other + " waits at a different work-group barrier than " + first;
    else if (f.stop[1] == BarrierStop::End)
        how = other + " reaches the end of the kernel while " + first +
              " waits at a work-group barrier";
    else
        how = other + " waits at a work-group barrier while " + first +
              " reaches the end of the kernel";
    return "kernel '" + launch.kernel->desc().name + "': barrier divergence in work-group " +
           idText(f.groupId, 3) + ": " + how +
           " (local ids: a branch or a loop around a barrier went different ways for them); the "
           "launch was stopped (DUET_KERNEL_CHECKS)";
}

} // namespace

std::string describeFault(const KernelLaunch& launch, const CheckFault& f) {
    if (f.what == FaultKind::BarrierDivergence)
        return describeDivergence(launch, f);
    const KernelDesc& desc = launch.kernel->desc();
    std::string what;
    uint64_t origin = f.low;
    if (f.id == kCheckNullId) {
        what = "through a NULL pointer";
        origin = 0;
    } else if (f.id < desc.args.size()) {
        const KernelArgDesc& arg = desc.args[f.id];
        const ArgValue& a = launch.args[f.id];
        std::string name = nthName(f.names, f.id);
        if (name.empty())
            name = arg.name;
        what = "argument " + std::to_string(f.id) + (name.empty() ? "" : " '" + name + "'") + " (" +
               qualifierName(arg.addressQualifier) + arg.typeName;
        if (arg.kind == KernelArgKind::LocalBuffer) {
            what += ", " + std::to_string(a.localSize) + " bytes per work-group)";
        } else if (a.mem) {
            origin = reinterpret_cast<uintptr_t>(a.mem->data());
            what += ", " + std::string(a.mem->parent() ? "a sub-buffer of " : "a buffer of ") +
                    std::to_string(a.mem->size()) + " bytes)";
        } else if (a.svm) {
            origin = reinterpret_cast<uintptr_t>(a.svm);
            what += ", an SVM pointer " + std::to_string(origin - f.low) +
                    " bytes into an allocation of " + std::to_string(f.high - f.low) + " bytes)";
        } else {
            what += ", NULL)";
        }
    } else {
        what = "variable '" + nthName(f.names, f.id) + "' (" + std::to_string(f.high - f.low) +
               " bytes)";
    }
    const int64_t offset = int64_t(f.address - origin);
    const std::string item = idText(f.globalId, launch.workDim);
    return "kernel '" + desc.name + "': out-of-bounds " + accessName(f.kind) + " of " +
           std::to_string(f.bytes) + " bytes at byte offset " + std::to_string(offset) + " of " +
           what + " by work-item " + item + " (global id); the launch was stopped " +
           "(DUET_KERNEL_CHECKS)";
}

} // namespace duet::rt
