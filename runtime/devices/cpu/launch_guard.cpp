// Argument bounds, fault messages and the timeout watchdog of guarded CPU launches.
#include "devices/cpu/launch_guard.hpp"

#include "core/image.hpp"
#include "core/svm.hpp"

#include <cstdio>
#include <cstring>
#include <set>

namespace duet::rt::cpu {

namespace {

/// Prints `line` on stderr the first time it is seen in this process.
void warnOnce(const std::string& line) {
    static std::mutex mutex;
    static std::set<std::string> said;
    std::lock_guard lock(mutex);
    if (said.insert(line).second)
        std::fprintf(stderr, "duet: cpu: %s\n", line.c_str());
}

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

void argumentBounds(const KernelLaunch& launch, size_t index, const void* imageDesc,
                    uint64_t* bounds) {
    const KernelDesc& desc = launch.kernel->desc();
    const ArgValue& a = launch.args[index];
    uint64_t low = 0, high = 0;
    switch (desc.args[index].kind) {
    case KernelArgKind::GlobalBuffer:
    case KernelArgKind::ConstantBuffer:
        if (a.mem) {
            low = reinterpret_cast<uintptr_t>(a.mem->data());
            high = low + a.mem->size();
        } else if (a.svm) {
            if (std::optional<SvmAllocation> s = svmFind(a.svm)) {
                low = reinterpret_cast<uintptr_t>(s->base);
                high = low + s->size;
            } else {
                high = UINT64_MAX;
                warnOnce("kernel " + desc.name + ": argument " + std::to_string(index) +
                         " is a pointer into no SVM allocation: its accesses are not checked");
            }
        }
        break;
    case KernelArgKind::Image:
        low = reinterpret_cast<uintptr_t>(imageDesc);
        high = low + sizeof(KernelImageDesc);
        break;
    default:
        break;
    }
    bounds[2 * index] = low;
    bounds[2 * index + 1] = high;
}

std::string describeFault(const KernelLaunch& launch, const CheckFault& f) {
    const KernelDesc& desc = launch.kernel->desc();
    std::string what;
    uint64_t origin = f.low;
    if (f.id == 0xffffffffu) {
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

Watchdog::~Watchdog() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_cv.notify_all();
    if (m_thread.joinable())
        m_thread.join();
}

void Watchdog::arm(LaunchGuard& guard, std::chrono::steady_clock::time_point deadline) {
    std::lock_guard lock(m_mutex);
    if (!m_thread.joinable())
        m_thread = std::thread([this] { main(); });
    m_armed = &guard;
    m_deadline = deadline;
    m_cv.notify_all();
}

void Watchdog::disarm() {
    std::lock_guard lock(m_mutex);
    m_armed = nullptr;
}

void Watchdog::main() {
    std::unique_lock lock(m_mutex);
    while (!m_stop) {
        if (!m_armed) {
            m_cv.wait(lock);
            continue;
        }
        if (m_cv.wait_until(lock, m_deadline) == std::cv_status::timeout && m_armed &&
            std::chrono::steady_clock::now() >= m_deadline) {
            m_armed->timedOut.store(true);
            m_armed->cancel.store(1, std::memory_order_release);
            m_armed = nullptr;
        }
    }
}

} // namespace duet::rt::cpu
