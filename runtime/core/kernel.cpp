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
      svmIndirectPointers(other.svmIndirectPointers), svmFineGrainSystem(other.svmFineGrainSystem),
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
        const bool nonUniform = m_program->build(d).allowsNonUniformWorkGroups();
        const auto& ks = exe->kernels();
        for (size_t i = 0; i < ks.size(); ++i)
            if (ks[i].name == m_desc.name)
                m_entries.push_back({d, exe, exe->entry(i), &ks[i], nonUniform});
    }
}

const std::shared_ptr<DeviceExecutable>& Kernel::executable(const Device* device) const {
    static const std::shared_ptr<DeviceExecutable> none;
    for (const DeviceEntry& e : m_entries)
        if (e.device == device)
            return e.executable;
    return none;
}

const std::shared_ptr<DeviceExecutable>& Kernel::executable(const DeviceExecutable* exe) const {
    static const std::shared_ptr<DeviceExecutable> none;
    for (const DeviceEntry& e : m_entries)
        if (e.executable.get() == exe)
            return e.executable;
    return none;
}

bool Kernel::allowsNonUniform(const Device* device) const {
    for (const DeviceEntry& e : m_entries)
        if (e.device == device)
            return e.nonUniform;
    return false;
}

const KernelDesc& Kernel::descFor(const Device* device) const {
    for (const DeviceEntry& e : m_entries)
        if (e.device == device)
            return *e.desc;
    return m_desc;
}

Kernel::Limits Kernel::limits(const Device& device) const {
    constexpr size_t kStackBudget = 4u << 20; // of the 8 MiB default thread stack
    const KernelDesc& desc = descFor(&device);
    const KernelResources r = device.backend().kernelResources(device, *this);
    Limits out;
    out.workGroupSize = device.info().maxWorkGroupSize;
    if (r.workGroupSize)
        out.workGroupSize = std::min(out.workGroupSize, std::max<size_t>(1, *r.workGroupSize));
    else if (desc.privateMemSize)
        out.workGroupSize = std::min<size_t>(
            out.workGroupSize, std::max<size_t>(1, kStackBudget / desc.privateMemSize));
    if (r.localMemSize) {
        out.localMemSize = *r.localMemSize;
    } else {
        // Saturating: clSetKernelArg takes any __local size.
        out.localMemSize = desc.staticLocalMemSize;
        for (const KernelArg& a : m_args)
            out.localMemSize = a.localSize > ~cl_ulong(0) - out.localMemSize
                                   ? ~cl_ulong(0)
                                   : out.localMemSize + a.localSize;
    }
    out.privateMemSize = r.privateMemSize.value_or(desc.privateMemSize);
    return out;
}

std::optional<std::vector<ArgValue>> Kernel::snapshotArgs(size_t& released) const {
    std::vector<ArgValue> out(m_args.size());
    for (size_t i = 0; i < m_args.size(); ++i) {
        const KernelArg& a = m_args[i];
        ArgValue& v = out[i];
        v.set = a.set;
        v.bytes = a.bytes;
        v.sampler = a.sampler;
        v.localSize = a.localSize;
        v.viaSvm = a.viaSvm;
        v.svm = a.svm;
        if (a.mem.empty())
            continue;
        v.mem = a.mem.lock();
        if (!v.mem) {
            released = i;
            return std::nullopt;
        }
    }
    return out;
}

void KernelLaunch::collectRefs(std::vector<Object*>& out) const {
    for (const ArgValue& a : args) {
        if (Mem* m = a.mem.get())
            out.push_back(m);
        if (Sampler* s = a.sampler.get())
            out.push_back(s);
    }
    if (Kernel* k = kernel.get())
        out.push_back(k);
}

void KernelLaunch::forgetRefs() {
    kernel.detach();
    for (ArgValue& a : args) {
        a.mem.detach();
        a.sampler.detach();
    }
}

bool Kernel::hasSvmArgs() const {
    for (const KernelArg& a : m_args)
        if (a.viaSvm)
            return true;
    return false;
}

void* ArgValue::globalPointer() const {
    return mem ? static_cast<void*>(mem->data()) : svm;
}

void* Kernel::entry(const Device* device) const {
    for (const DeviceEntry& e : m_entries)
        if (e.device == device)
            return e.entry;
    return nullptr;
}

} // namespace duet::rt
