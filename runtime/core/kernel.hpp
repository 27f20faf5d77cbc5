// Kernels: an entry of a built program plus its argument values; launches snapshot them.
#pragma once

#include "core/memory.hpp"
#include "core/program.hpp"
#include "core/command_payload.hpp"

#include <array>
#include <optional>
#include <vector>

namespace duet::rt {

/// One argument's value as set by clSetKernelArg, as the kernel keeps it: a buffer or image is
/// not kept alive by the kernel (WeakMemRef says why).
struct KernelArg {
    bool set = false;
    std::vector<unsigned char> bytes; ///< Value args (and the sampler's 32-bit value)
    WeakMemRef mem;                   ///< buffer or image (empty for a NULL buffer)
    Ref<Sampler> sampler;
    size_t localSize = 0; ///< LocalBuffer
    /// clSetKernelArgSVMPointer: the pointer the kernel gets (an SVM allocation's address, an
    /// offset into one, any host address with fine-grain system SVM, or NULL).
    bool viaSvm = false;
    void* svm = nullptr;
};

/// One argument's value as a launch sees it: memory objects retained until the command is done.
struct ArgValue {
    bool set = false;
    std::vector<unsigned char> bytes; ///< Value args (and the sampler's 32-bit value)
    Ref<Mem> mem;                     ///< buffer or image (null for a NULL buffer)
    Ref<Sampler> sampler;
    size_t localSize = 0; ///< LocalBuffer
    bool viaSvm = false;  ///< set by clSetKernelArgSVMPointer: `svm` is the pointer
    void* svm = nullptr;
    /// The address a __global or __constant pointer argument passes: the buffer's storage as
    /// of now, or the SVM pointer.
    void* globalPointer() const;
};

class Kernel final : public _cl_kernel {
public:
    static constexpr Tag kTag = Tag::Kernel;
    Kernel(Ref<Program> program, KernelDesc desc);
    ~Kernel();
    Kernel(const Kernel& other); ///< clCloneKernel

    Program* program() const { return m_program.get(); }
    Context* context() const { return m_program->context(); }
    const KernelDesc& desc() const { return m_desc; }
    const std::string& name() const { return m_desc.name; }
    std::vector<KernelArg>& args() { return m_args; }
    const std::vector<KernelArg>& args() const { return m_args; }
    /// The arguments for a launch, memory objects retained. nullopt when a buffer or image
    /// argument's object was released since it was set; `released` is then its index.
    std::optional<std::vector<ArgValue>> snapshotArgs(size_t& released) const;
    /// Entry for `device` (WorkGroupFn on the CPU); null when not built for it.
    void* entry(const Device* device) const;
    /// The executable of `device` (null when not built there); the kernel keeps it alive.
    const std::shared_ptr<DeviceExecutable>& executable(const Device* device) const;
    /// The owning pointer of `exe`, one of this kernel's executables (KernelLaunch::executable);
    /// null when it is not.
    const std::shared_ptr<DeviceExecutable>& executable(const DeviceExecutable* exe) const;
    /// Whether launches on `device` may have non-uniform work-groups (the program's build
    /// options there: Program::Build::allowsNonUniformWorkGroups). Read on every enqueue, so
    /// resolved when the kernel is created.
    bool allowsNonUniform(const Device* device) const;
    /// What clGetKernelWorkGroupInfo reports for `device`, and clEnqueueNDRangeKernel checks.
    struct Limits {
        size_t workGroupSize = 0;    ///< CL_KERNEL_WORK_GROUP_SIZE
        cl_ulong localMemSize = 0;   ///< CL_KERNEL_LOCAL_MEM_SIZE, __local arguments as set now
        cl_ulong privateMemSize = 0; ///< CL_KERNEL_PRIVATE_MEM_SIZE
    };
    /// The device backend's answer (DeviceBackend::kernelResources: a GPU driver's view of the
    /// compiled kernel) where it has one, else from the device's KernelDesc of this kernel: the
    /// work-group size is the device's limit, lowered so that the per-work-item storage a
    /// work-group function keeps on its thread's stack (values live across barriers, private
    /// arrays) fits in a conservative share of a thread stack; the local memory is the
    /// kernel-scope __local variables plus the __local arguments. Reads the arguments: not
    /// concurrently with clSetKernelArg on this kernel (as the spec allows).
    Limits limits(const Device& device) const;
    /// CL_KERNEL_WORK_GROUP_SIZE on `device` (limits().workGroupSize).
    size_t workGroupLimit(const Device& device) const { return limits(device).workGroupSize; }
    /// The KernelDesc of `device`'s executable (its code generator's view: barriers, sizes,
    /// whether it observes its grouping), or the program's when not built there.
    const KernelDesc& descFor(const Device* device) const;

private:
    void resolveEntries();
    struct DeviceEntry {
        const Device* device;
        std::shared_ptr<DeviceExecutable> executable;
        void* entry;
        const KernelDesc* desc; ///< the executable's own (its code generator's sizes)
        bool nonUniform;        ///< allowsNonUniform
    };
    Ref<Program> m_program;
    KernelDesc m_desc;
    std::vector<KernelArg> m_args;

public:
    /// clSetKernelExecInfo: SVM pointers the kernel may reach indirectly, and whether it may use
    /// any host pointer (fine-grain system SVM). Devices sharing the host's address space need
    /// neither; they are kept for what clSetKernelExecInfo promises and for devices that would.
    std::vector<void*> svmIndirectPointers;
    bool svmFineGrainSystem = false;
    /// True when an argument was set through clSetKernelArgSVMPointer.
    bool hasSvmArgs() const;

private:
    /// Resolved once: a program cannot be rebuilt while kernels are attached to it.
    std::vector<DeviceEntry> m_entries;
};

/// Everything one NDRange execution needs, captured at enqueue time. A queued launch is its
/// command's payload: the queue drops its references when the command completes and frees it
/// later (CommandPayload).
struct KernelLaunch final : CommandPayload {
    Ref<Kernel> kernel;
    /// The kernel's code for the device; `kernel` keeps it alive (a child launch's session
    /// keeps its parent's kernel).
    DeviceExecutable* executable = nullptr;
    void* entry = nullptr;
    cl_uint workDim = 1;
    std::array<size_t, 3> offset{0, 0, 0}, global{1, 1, 1}, local{1, 1, 1};
    std::vector<ArgValue> args; ///< snapshot of the kernel's arguments
    /// Snapshot of clSetKernelExecInfo(CL_KERNEL_EXEC_INFO_SVM_PTRS): SVM the kernel reaches
    /// through pointers stored in memory (a device that must map SVM ranges maps these too).
    std::vector<void*> svmIndirectPointers;

    void collectRefs(std::vector<Object*>& out) const override;
    void forgetRefs() override;
};

} // namespace duet::rt
