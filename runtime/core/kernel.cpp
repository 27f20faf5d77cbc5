// Kernel objects: argument storage and per-device entries.
#include "core/kernel.hpp"

#include <algorithm>

namespace duet::rt {

Kernel::Kernel(Ref<Program> program, KernelDesc desc)
    : _cl_kernel(kTag), m_program(std::move(program)), m_desc(std::move(desc)),
      m_args(m_desc.args.size()) {
    m_program->attachedKernels.fetch_add(1);
    resolveEntries();
}

Kernel::Kernel(const Kernel& other)
    : _cl_kernel(kTag), m_program(other.m_program), m_desc(other.m_desc), m_args(other.m_args),
      m_entries(other.m_entries) {
    m_program->attachedKernels.fetch_add(1);
}

Kernel::~Kernel() {
    m_program->attachedKernels.fetch_sub(1);
}

void Kernel::resolveEntries() {
    for (const Device* d : m_program->devices()) {
        auto exe = m_program->executable(d);
        if (!exe)
            continue;
        const auto& ks = exe->kernels();
        for (size_t i = 0; i < ks.size(); ++i)
            if (ks[i].name == m_desc.name)
                m_entries.push_back({d, exe, exe->entry(i)});
    }
}

std::shared_ptr<DeviceExecutable> Kernel::executable(const Device* device) const {
    for (const DeviceEntry& e : m_entries)
        if (e.device == device)
            return e.executable;
    return nullptr;
}

size_t Kernel::workGroupLimit(const Device& device) const {
    constexpr size_t kStackBudget = 4u << 20; // of the 8 MiB default thread stack
    size_t limit = device.info().maxWorkGroupSize;
    if (m_desc.privateMemSize)
        limit = std::min<size_t>(limit, std::max<size_t>(1, kStackBudget / m_desc.privateMemSize));
    return limit;
}

void* Kernel::entry(const Device* device) const {
    for (const DeviceEntry& e : m_entries)
        if (e.device == device)
            return e.entry;
    return nullptr;
}

} // namespace duet::rt
