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

} // namespace

std::string describeFault(const KernelLaunch& launch, const CheckFault& f) {
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
    std::string item;
    if (launch.workDim <= 1)
        item = std::to_string(f.globalId[0]);
    else {
        item = "(";
        for (cl_uint d = 0; d < launch.workDim; ++d)
            item += (d ? ", " : "") + std::to_string(f.globalId[d]);
        item += ")";
    }
    return "kernel '" + desc.name + "': out-of-bounds " + accessName(f.kind) + " of " +
           std::to_string(f.bytes) + " bytes at byte offset " + std::to_string(offset) + " of " +
           what + " by work-item " + item + " (global id); the launch was stopped " +
           "(DUET_KERNEL_CHECKS)";
}

} // namespace duet::rt
