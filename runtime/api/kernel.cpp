// Kernel entry points: creation, arguments, info, NDRange/task/native enqueues.
#include "api/api.hpp"
#include "core/kernel.hpp"
#include "core/queue.hpp"
#include "core/svm.hpp"

#include <CL/cl_ext.h>

#include <cstring>

using namespace duet::api;

namespace {

Kernel* checkKernel(const char* api, cl_kernel kernel, cl_int& err) {
    Kernel* k = from<Kernel>(kernel);
    if (!k)
        err = report(api, nullptr, CL_INVALID_KERNEL, "not a valid kernel");
    return k;
}

} // namespace

DUET_API cl_kernel CL_API_CALL clCreateKernel(cl_program program, const char* name,
                                              cl_int* errcodeRet) {
    Call call("clCreateKernel", errcodeRet);
    return guardHandle<_cl_kernel>(call, [&]() -> cl_kernel {
        Program* p = from<Program>(program);
        if (!p)
            return call.fail(CL_INVALID_PROGRAM, "not a valid program");
        call.setContext(p->context());
        if (!p->hasExecutable())
            return call.fail(CL_INVALID_PROGRAM_EXECUTABLE,
                             "the program has no successfully built executable");
        if (!name)
            return call.fail(CL_INVALID_VALUE, "kernel_name is NULL");
        for (KernelDesc& k : p->kernels())
            if (k.name == name)
                return call.ok(makeObject<Kernel>(retainRef(p), std::move(k)));
        return call.fail(CL_INVALID_KERNEL_NAME,
                         std::string("no kernel named '") + name + "' in the program");
    });
}

DUET_API cl_int CL_API_CALL clCreateKernelsInProgram(cl_program program, cl_uint num,
                                                     cl_kernel* kernels, cl_uint* numRet) {
    return guard("clCreateKernelsInProgram", [&]() -> cl_int {
        const char* api = "clCreateKernelsInProgram";
        Program* p = from<Program>(program);
        if (!p)
            return report(api, nullptr, CL_INVALID_PROGRAM, "not a valid program");
        if (!p->hasExecutable())
            return report(api, p->context(), CL_INVALID_PROGRAM_EXECUTABLE,
                          "the program has no successfully built executable");
        auto descs = p->kernels();
        if (kernels && num < descs.size())
            return report(api, p->context(), CL_INVALID_VALUE,
                          "num_kernels is less than the number of kernels in the program");
        if (kernels)
            for (size_t i = 0; i < descs.size(); ++i)
                kernels[i] = makeObject<Kernel>(retainRef(p), descs[i]);
        if (numRet)
            *numRet = cl_uint(descs.size());
        return CL_SUCCESS;
    });
}

DUET_API cl_kernel CL_API_CALL clCloneKernel(cl_kernel source, cl_int* errcodeRet) {
    Call call("clCloneKernel", errcodeRet);
    return guardHandle<_cl_kernel>(call, [&]() -> cl_kernel {
        Kernel* k = from<Kernel>(source);
        if (!k)
            return call.fail(CL_INVALID_KERNEL, "not a valid kernel");
        return call.ok(makeObject<Kernel>(*k));
    });
}

DUET_API cl_int CL_API_CALL clRetainKernel(cl_kernel kernel) {
    cl_int err;
    Kernel* k = checkKernel("clRetainKernel", kernel, err);
    if (!k)
        return err;
    k->retain();
    return CL_SUCCESS;
}

DUET_API cl_int CL_API_CALL clReleaseKernel(cl_kernel kernel) {
    cl_int err;
    Kernel* k = checkKernel("clReleaseKernel", kernel, err);
    if (!k)
        return err;
    k->release();
    return CL_SUCCESS;
}

DUET_API cl_int CL_API_CALL clSetKernelArg(cl_kernel kernel, cl_uint index, size_t size,
                                           const void* value) {
    return guard("clSetKernelArg", [&]() -> cl_int {
        const char* api = "clSetKernelArg";
        cl_int err;
        Kernel* k = checkKernel(api, kernel, err);
        if (!k)
            return err;
        Context* ctx = k->context();
        if (index >= k->desc().args.size())
            return report(api, ctx, CL_INVALID_ARG_INDEX,
                          "arg_index " + std::to_string(index) + " but " + k->name() + " has " +
                              std::to_string(k->desc().args.size()) + " arguments");
        const KernelArgDesc& d = k->desc().args[index];
        std::string which = "argument " + std::to_string(index) +
                            (d.name.empty() ? "" : " (" + d.name + ")") + " of " + k->name();
        KernelArg a;
        a.set = true;
        switch (d.kind) {
        case KernelArgKind::LocalBuffer:
            if (value)
                return report(api, ctx, CL_INVALID_ARG_VALUE,
                              which + " is __local: arg_value must be NULL");
            if (size == 0)
                return report(api, ctx, CL_INVALID_ARG_SIZE, which + " is __local: size is 0");
            a.localSize = size;
            break;
        case KernelArgKind::GlobalBuffer:
            if (d.typeQualifier & CL_KERNEL_ARG_TYPE_PIPE) {
                // CL_INVALID_ARG_SIZE: a pipe is a memory object, sizeof(cl_mem).
                if (size != sizeof(cl_mem))
                    return report(api, ctx, CL_INVALID_ARG_SIZE,
                                  which + " is a pipe: arg_size must be sizeof(cl_mem)");
                // CL_INVALID_ARG_VALUE: no pipe given.
                cl_mem m = value ? *static_cast<const cl_mem*>(value) : nullptr;
                if (!m)
                    return report(api, ctx, CL_INVALID_ARG_VALUE,
                                  which + " is a pipe: arg_value must point to a pipe object");
                // CL_INVALID_MEM_OBJECT: not a memory object, or one of another context.
                Mem* mem = from<Mem>(m);
                if (!mem || mem->context() != ctx)
                    return report(api, ctx, CL_INVALID_MEM_OBJECT,
                                  which + " needs a pipe object of the kernel's context");
                // CL_INVALID_ARG_VALUE: a memory object that is not a pipe, or a pipe whose
                // packets are not the size of the kernel's pipe type.
                if (mem->type() != CL_MEM_OBJECT_PIPE)
                    return report(api, ctx, CL_INVALID_ARG_VALUE,
                                  which + " is a pipe but the memory object is not one");
                if (d.pipePacketSize && mem->pipePacketSize != d.pipePacketSize)
                    return report(api, ctx, CL_INVALID_ARG_VALUE,
                                  which + " is a pipe of " + d.typeName + " (" +
                                      std::to_string(d.pipePacketSize) +
                                      "-byte packets) but the pipe's packets are " +
                                      std::to_string(mem->pipePacketSize) + " bytes");
                a.mem = WeakMemRef(*mem);
                break;
            }
            [[fallthrough]];
        case KernelArgKind::ConstantBuffer: {
            if (size != sizeof(cl_mem))
                return report(api, ctx, CL_INVALID_ARG_SIZE,
                              which + " is a buffer: arg_size must be sizeof(cl_mem)");
            cl_mem m = value ? *static_cast<const cl_mem*>(value) : nullptr;
            if (m) {
                Mem* mem = from<Mem>(m);
                if (!mem || mem->type() != CL_MEM_OBJECT_BUFFER || mem->context() != ctx)
                    return report(api, ctx, CL_INVALID_MEM_OBJECT,
                                  which + " needs a buffer of the kernel's context");
                a.mem = WeakMemRef(*mem);
            }
            break;
        }
        case KernelArgKind::Image: {
            if (size != sizeof(cl_mem) || !value)
                return report(api, ctx, CL_INVALID_ARG_VALUE,
                              which + " is an image: arg_value must point to a cl_mem");
            Mem* mem = from<Mem>(*static_cast<const cl_mem*>(value));
            if (!mem || !mem->isImage() || mem->context() != ctx || mem->type() != d.imageType)
                return report(api, ctx, CL_INVALID_MEM_OBJECT,
                              which + " needs an image object of type " + d.typeName);
            // image2d_depth_t takes exactly the depth images (CL_DEPTH, and CL_DEPTH_STENCIL
            // from GL), image2d_t the others.
            const cl_channel_order order = mem->format.image_channel_order;
            if (d.imageDepth != (order == CL_DEPTH || order == CL_DEPTH_STENCIL))
                return report(api, ctx, CL_INVALID_MEM_OBJECT,
                              which + (d.imageDepth ? " is a depth image: it needs a CL_DEPTH or "
                                                      "CL_DEPTH_STENCIL image"
                                                    : " cannot take a depth image (declare it "
                                                      "image2d_depth_t)"));
            if (d.accessQualifier == CL_KERNEL_ARG_ACCESS_READ_ONLY &&
                (mem->flags() & CL_MEM_WRITE_ONLY))
                return report(api, ctx, CL_INVALID_ARG_VALUE,
                              which + " is read_only but the image is CL_MEM_WRITE_ONLY");
            if (d.accessQualifier == CL_KERNEL_ARG_ACCESS_WRITE_ONLY &&
                (mem->flags() & CL_MEM_READ_ONLY))
                return report(api, ctx, CL_INVALID_ARG_VALUE,
                              which + " is write_only but the image is CL_MEM_READ_ONLY");
            a.mem = WeakMemRef(*mem);
            break;
        }
        case KernelArgKind::Sampler: {
            if (size != sizeof(cl_sampler) || !value)
                return report(api, ctx, CL_INVALID_ARG_VALUE,
                              which + " is a sampler: arg_value must point to a cl_sampler");
            Sampler* s = from<Sampler>(*static_cast<const cl_sampler*>(value));
            if (!s || s->context() != ctx)
                return report(api, ctx, CL_INVALID_SAMPLER,
                              which + " needs a sampler of the kernel's context");
            uint32_t v = s->kernelValue();
            a.bytes.assign(reinterpret_cast<unsigned char*>(&v),
                           reinterpret_cast<unsigned char*>(&v) + sizeof v);
            a.sampler = retainRef(s);
            break;
        }
        case KernelArgKind::Value:
            if (!value)
                return report(api, ctx, CL_INVALID_ARG_VALUE, which + ": arg_value is NULL");
            if (size != d.size)
                return report(api, ctx, CL_INVALID_ARG_SIZE,
                              which + " (" + d.typeName + ") takes " + std::to_string(d.size) +
                                  " bytes, got " + std::to_string(size));
            a.bytes.assign(static_cast<const unsigned char*>(value),
                           static_cast<const unsigned char*>(value) + size);
            break;
        }
        k->args()[index] = std::move(a);
        return CL_SUCCESS;
    });
}

DUET_API cl_int CL_API_CALL clSetKernelArgSVMPointer(cl_kernel kernel, cl_uint index,
                                                     const void* value) {
    return guard("clSetKernelArgSVMPointer", [&]() -> cl_int {
        const char* api = "clSetKernelArgSVMPointer";
        cl_int err;
        Kernel* k = checkKernel(api, kernel, err);
        if (!k)
            return err;
        Context* ctx = k->context();
        // CL_INVALID_OPERATION: no device of the kernel's context supports SVM.
        cl_device_svm_capabilities caps = contextSvmCapabilities(*ctx);
        if (!caps)
            return report(api, ctx, CL_INVALID_OPERATION,
                          "no device of the context supports SVM (CL_DEVICE_SVM_CAPABILITIES "
                          "is 0)");
        // CL_INVALID_ARG_INDEX
        if (index >= k->desc().args.size())
            return report(api, ctx, CL_INVALID_ARG_INDEX,
                          "arg_index " + std::to_string(index) + " but " + k->name() + " has " +
                              std::to_string(k->desc().args.size()) + " arguments");
        const KernelArgDesc& d = k->desc().args[index];
        std::string which = "argument " + std::to_string(index) +
                            (d.name.empty() ? "" : " (" + d.name + ")") + " of " + k->name();
        // CL_INVALID_ARG_VALUE: not a __global or __constant pointer, or not an SVM pointer
        // of this context.
        if ((d.kind != KernelArgKind::GlobalBuffer && d.kind != KernelArgKind::ConstantBuffer) ||
            (d.typeQualifier & CL_KERNEL_ARG_TYPE_PIPE))
            return report(api, ctx, CL_INVALID_ARG_VALUE,
                          which + " is not a __global or __constant pointer");
        if (value) {
            std::optional<SvmAllocation> a = svmFind(value);
            if (a && a->context != ctx)
                return report(api, ctx, CL_INVALID_ARG_VALUE,
                              which + ": arg_value points into an SVM allocation of another "
                                      "context");
            if (!a && !(caps & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM))
                return report(api, ctx, CL_INVALID_ARG_VALUE,
                              which + ": arg_value is not inside an SVM allocation of the "
                                      "context (no device has fine-grain system SVM)");
        }
        KernelArg a;
        a.set = true;
        a.viaSvm = true;
        a.svm = const_cast<void*>(value);
        k->args()[index] = std::move(a);
        return CL_SUCCESS;
    });
}

DUET_API cl_int CL_API_CALL clSetKernelExecInfo(cl_kernel kernel, cl_kernel_exec_info param,
                                                size_t size, const void* value) {
    return guard("clSetKernelExecInfo", [&]() -> cl_int {
        const char* api = "clSetKernelExecInfo";
        cl_int err;
        Kernel* k = checkKernel(api, kernel, err);
        if (!k)
            return err;
        Context* ctx = k->context();
        const cl_device_svm_capabilities caps = contextSvmCapabilities(*ctx);
        switch (param) {
        case CL_KERNEL_EXEC_INFO_SVM_PTRS: {
            // CL_INVALID_OPERATION: no device of the context supports SVM.
            if (!caps)
                return report(api, ctx, CL_INVALID_OPERATION,
                              "no device of the context supports SVM");
            // CL_INVALID_VALUE: param_value NULL or its size not a whole number of pointers.
            if (!value || size == 0 || size % sizeof(void*))
                return report(api, ctx, CL_INVALID_VALUE,
                              "CL_KERNEL_EXEC_INFO_SVM_PTRS needs an array of void* (param_value "
                              "NULL or param_value_size not a multiple of sizeof(void*))");
            auto* ptrs = static_cast<void* const*>(value);
            std::vector<void*> list(ptrs, ptrs + size / sizeof(void*));
            for (void* p : list) {
                std::optional<SvmAllocation> a = svmFind(p);
                if ((a && a->context != ctx) || (!a && !(caps & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM)))
                    return report(api, ctx, CL_INVALID_VALUE,
                                  "CL_KERNEL_EXEC_INFO_SVM_PTRS: a pointer is not inside an SVM "
                                  "allocation of the kernel's context");
            }
            k->svmIndirectPointers = std::move(list);
            return CL_SUCCESS;
        }
        case CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM: {
            if (!value || size != sizeof(cl_bool))
                return report(api, ctx, CL_INVALID_VALUE,
                              "CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM needs one cl_bool");
            const cl_bool on = *static_cast<const cl_bool*>(value);
            // CL_INVALID_OPERATION: CL_TRUE but no device supports fine-grain system SVM.
            if (on && !(caps & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM))
                return report(api, ctx, CL_INVALID_OPERATION,
                              "no device of the context supports fine-grain system SVM");
            k->svmFineGrainSystem = on != CL_FALSE;
            return CL_SUCCESS;
        }
        default:
            return report(api, ctx, CL_INVALID_VALUE,
                          "unknown param_name " + std::to_string(param));
        }
    });
}

DUET_API cl_int CL_API_CALL clGetKernelInfo(cl_kernel kernel, cl_kernel_info param, size_t size,
                                            void* value, size_t* sizeRet) {
    return guard("clGetKernelInfo", [&]() -> cl_int {
        const char* api = "clGetKernelInfo";
        cl_int err;
        Kernel* k = checkKernel(api, kernel, err);
        if (!k)
            return err;
        cl_int r;
        switch (param) {
        case CL_KERNEL_FUNCTION_NAME:
            r = infoString(size, value, sizeRet, k->name());
            break;
        case CL_KERNEL_NUM_ARGS:
            r = infoValue<cl_uint>(size, value, sizeRet, cl_uint(k->desc().args.size()));
            break;
        case CL_KERNEL_REFERENCE_COUNT:
            r = infoValue<cl_uint>(size, value, sizeRet, k->refCount.load());
            break;
        case CL_KERNEL_CONTEXT:
            r = infoValue<cl_context>(size, value, sizeRet, k->context());
            break;
        case CL_KERNEL_PROGRAM:
            r = infoValue<cl_program>(size, value, sizeRet, k->program());
            break;
        case CL_KERNEL_ATTRIBUTES:
            r = infoString(size, value, sizeRet, k->desc().attributes);
            break;
        default:
            return report(api, k->context(), CL_INVALID_VALUE,
                          "unknown param_name " + std::to_string(param));
        }
        if (r != CL_SUCCESS)
            return report(api, k->context(), r, "param_value_size is smaller than the answer");
        return CL_SUCCESS;
    });
}

DUET_API cl_int CL_API_CALL clGetKernelArgInfo(cl_kernel kernel, cl_uint index,
                                               cl_kernel_arg_info param, size_t size, void* value,
                                               size_t* sizeRet) {
    return guard("clGetKernelArgInfo", [&]() -> cl_int {
        const char* api = "clGetKernelArgInfo";
        cl_int err;
        Kernel* k = checkKernel(api, kernel, err);
        if (!k)
            return err;
        if (index >= k->desc().args.size())
            return report(api, k->context(), CL_INVALID_ARG_INDEX,
                          "arg_indx is not a valid argument index");
        if (!k->desc().argInfoAvailable)
            return report(api, k->context(), CL_KERNEL_ARG_INFO_NOT_AVAILABLE,
                          "build the program with -cl-kernel-arg-info for argument information");
        const KernelArgDesc& d = k->desc().args[index];
        cl_int r;
        switch (param) {
        case CL_KERNEL_ARG_ADDRESS_QUALIFIER:
            r = infoValue(size, value, sizeRet, d.addressQualifier);
            break;
        case CL_KERNEL_ARG_ACCESS_QUALIFIER:
            r = infoValue(size, value, sizeRet, d.accessQualifier);
            break;
        case CL_KERNEL_ARG_TYPE_NAME:
            r = infoString(size, value, sizeRet, d.typeName);
            break;
        case CL_KERNEL_ARG_TYPE_QUALIFIER:
            r = infoValue(size, value, sizeRet, d.typeQualifier);
            break;
        case CL_KERNEL_ARG_NAME:
            r = infoString(size, value, sizeRet, d.name);
            break;
        default:
            return report(api, k->context(), CL_INVALID_VALUE,
                          "unknown param_name " + std::to_string(param));
        }
        if (r != CL_SUCCESS)
            return report(api, k->context(), r, "param_value_size is smaller than the answer");
        return CL_SUCCESS;
    });
}

DUET_API cl_int CL_API_CALL clGetKernelWorkGroupInfo(cl_kernel kernel, cl_device_id device,
                                                     cl_kernel_work_group_info param, size_t size,
                                                     void* value, size_t* sizeRet) {
    return guard("clGetKernelWorkGroupInfo", [&]() -> cl_int {
        const char* api = "clGetKernelWorkGroupInfo";
        cl_int err;
        Kernel* k = checkKernel(api, kernel, err);
        if (!k)
            return err;
        const auto& devs = k->program()->devices();
        Device* d = device ? from<Device>(device) : nullptr;
        if (!device && devs.size() == 1)
            d = devs.front();
        if (!d || std::find(devs.begin(), devs.end(), d) == devs.end())
            return report(api, k->context(), CL_INVALID_DEVICE,
                          device ? "device is not associated with the kernel"
                                 : "device is NULL but the kernel has several devices");
        const KernelDesc& desc = k->desc();
        cl_int r;
        switch (param) {
        case CL_KERNEL_WORK_GROUP_SIZE:
            r = infoValue<size_t>(size, value, sizeRet, k->limits(*d).workGroupSize);
            break;
        case CL_KERNEL_COMPILE_WORK_GROUP_SIZE:
            r = writeInfo(size, value, sizeRet, desc.reqdWorkGroupSize.data(), 3 * sizeof(size_t));
            break;
        case CL_KERNEL_LOCAL_MEM_SIZE:
            r = infoValue<cl_ulong>(size, value, sizeRet, k->limits(*d).localMemSize);
            break;
        case CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
            r = infoValue<size_t>(size, value, sizeRet, d->info().preferredWorkGroupSizeMultiple);
            break;
        case CL_KERNEL_PRIVATE_MEM_SIZE:
            r = infoValue<cl_ulong>(size, value, sizeRet, k->limits(*d).privateMemSize);
            break;
        case CL_KERNEL_GLOBAL_WORK_SIZE:
            return report(api, k->context(), CL_INVALID_VALUE,
                          "CL_KERNEL_GLOBAL_WORK_SIZE is for custom devices and built-in "
                          "kernels only");
        default:
            return report(api, k->context(), CL_INVALID_VALUE,
                          "unknown param_name " + std::to_string(param));
        }
        if (r != CL_SUCCESS)
            return report(api, k->context(), r, "param_value_size is smaller than the answer");
        return CL_SUCCESS;
    });
}

namespace {

/// clGetKernelSubGroupInfo and its cl_khr_subgroups twin: sub-groups are runs of
/// DeviceInfo::subGroupSize consecutive local linear ids (OpenCL 3.0 §5.9.4, table 34).
cl_int kernelSubGroupInfo(const char* api, cl_kernel kernel, cl_device_id device,
                          cl_kernel_sub_group_info param, size_t inSize, const void* in,
                          size_t size, void* value, size_t* sizeRet) {
    cl_int err;
    Kernel* k = checkKernel(api, kernel, err);
    if (!k)
        return err;
    // CL_INVALID_DEVICE: device not associated with the kernel, or NULL with several devices.
    const auto& devs = k->program()->devices();
    Device* d = device ? from<Device>(device) : nullptr;
    if (!device && devs.size() == 1)
        d = devs.front();
    if (!d || std::find(devs.begin(), devs.end(), d) == devs.end())
        return report(api, k->context(), CL_INVALID_DEVICE,
                      device ? "device is not associated with the kernel"
                             : "device is NULL but the kernel has several devices");
    // CL_INVALID_OPERATION: the device does not support sub-groups.
    const cl_uint sg = d->info().subGroupSize;
    if (sg == 0)
        return report(api, k->context(), CL_INVALID_OPERATION,
                      "the device does not support sub-groups (CL_DEVICE_MAX_NUM_SUB_GROUPS is 0)");
    const size_t wgLimit = k->limits(*d).workGroupSize;
    // Sub-groups in a group of `items` work-items, and the largest one's size.
    auto countFor = [&](size_t items) { return (items + sg - 1) / sg; };
    auto sizeFor = [&](size_t items) { return std::min<size_t>(items, sg); };
    cl_int r;
    switch (param) {
    case CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE:
    case CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE: {
        // CL_INVALID_VALUE: input_value must be a local size of 1 to 3 size_t.
        const size_t dims = inSize / sizeof(size_t);
        if (!in || inSize % sizeof(size_t) != 0 || dims < 1 || dims > 3)
            return report(api, k->context(), CL_INVALID_VALUE,
                          "input_value must point to a local work size of 1, 2 or 3 size_t "
                          "(input_value_size " +
                              std::to_string(inSize) + ")");
        size_t local[3] = {1, 1, 1};
        std::memcpy(local, in, inSize);
        size_t items = 1;
        for (size_t l : local) {
            if (l == 0)
                return report(api, k->context(), CL_INVALID_VALUE,
                              "the local work size in input_value has a 0 entry");
            items = items > wgLimit ? items : items * l;
        }
        const size_t answer =
            param == CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE ? countFor(items) : sizeFor(items);
        r = infoValue<size_t>(size, value, sizeRet, answer);
        break;
    }
    case CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT: {
        // CL_INVALID_VALUE: input_value must be one size_t (the sub-group count), and the answer
        // a local size of 1 to 3 size_t.
        if (!in || inSize != sizeof(size_t))
            return report(api, k->context(), CL_INVALID_VALUE,
                          "input_value must point to one size_t, the number of sub-groups");
        const size_t dims = size / sizeof(size_t);
        if (value && (size % sizeof(size_t) != 0 || dims < 1 || dims > 3))
            return report(api, k->context(), CL_INVALID_VALUE,
                          "param_value_size must hold a local work size of 1, 2 or 3 size_t");
        size_t count;
        std::memcpy(&count, in, sizeof count);
        // A 1D group of count full sub-groups, or reqd_work_group_size when that makes count;
        // 0s when none fits.
        size_t local[3] = {0, 0, 0};
        const auto& reqd = k->desc().reqdWorkGroupSize;
        const size_t maxX = std::min(wgLimit, d->info().maxWorkItemSizes[0]);
        if (reqd[0] != 0) {
            if (count != 0 && countFor(reqd[0] * reqd[1] * reqd[2]) == count)
                std::copy(reqd.begin(), reqd.end(), local);
        } else if (count != 0 && count <= maxX / sg) {
            local[0] = count * sg;
            local[1] = local[2] = 1;
        }
        if (sizeRet)
            *sizeRet = dims >= 1 && dims <= 3 ? dims * sizeof(size_t) : sizeof(local);
        if (value)
            std::memcpy(value, local, dims * sizeof(size_t));
        return CL_SUCCESS;
    }
    case CL_KERNEL_MAX_NUM_SUB_GROUPS:
        r = infoValue<size_t>(size, value, sizeRet, countFor(wgLimit));
        break;
    case CL_KERNEL_COMPILE_NUM_SUB_GROUPS:
        // OpenCL C has no attribute that sets it (SPIR-V's SubgroupsPerWorkgroup does).
        r = infoValue<size_t>(size, value, sizeRet, 0);
        break;
    default:
        return report(api, k->context(), CL_INVALID_VALUE,
                      "unknown param_name " + std::to_string(param));
    }
    if (r != CL_SUCCESS)
        return report(api, k->context(), r, "param_value_size is smaller than the answer");
    return CL_SUCCESS;
}

} // namespace

DUET_API cl_int CL_API_CALL clGetKernelSubGroupInfo(cl_kernel kernel, cl_device_id device,
                                                    cl_kernel_sub_group_info param, size_t inSize,
                                                    const void* in, size_t size, void* value,
                                                    size_t* sizeRet) {
    return guard("clGetKernelSubGroupInfo", [&]() -> cl_int {
        return kernelSubGroupInfo("clGetKernelSubGroupInfo", kernel, device, param, inSize, in,
                                  size, value, sizeRet);
    });
}

DUET_API cl_int CL_API_CALL clGetKernelSubGroupInfoKHR(cl_kernel kernel, cl_device_id device,
                                                       cl_kernel_sub_group_info param,
                                                       size_t inSize, const void* in, size_t size,
                                                       void* value, size_t* sizeRet) {
    return guard("clGetKernelSubGroupInfoKHR", [&]() -> cl_int {
        return kernelSubGroupInfo("clGetKernelSubGroupInfoKHR", kernel, device, param, inSize, in,
                                  size, value, sizeRet);
    });
}

namespace {

/// clEnqueueNDRangeKernel's checks in the spec's order (clEnqueueTask: the same with one
/// work-item in one work-group), then the launch.
cl_int enqueueKernel(const char* api, cl_command_type type, cl_command_queue queue,
                     cl_kernel kernel, cl_uint dims, const size_t* offset, const size_t* global,
                     const size_t* local, cl_uint num, const cl_event* list, cl_event* event) {
    Queue* q = hostQueue(queue);
    if (!q)
        return report(api, nullptr, CL_INVALID_COMMAND_QUEUE, "not a valid command queue");
    Context* ctx = q->context();
    Kernel* k = from<Kernel>(kernel);
    if (!k)
        return report(api, ctx, CL_INVALID_KERNEL, "not a valid kernel");
    if (k->context() != ctx)
        return report(api, ctx, CL_INVALID_CONTEXT, "kernel and queue have different contexts");
    Device* dev = q->device();
    if (!k->entry(dev))
        return report(api, ctx, CL_INVALID_PROGRAM_EXECUTABLE,
                      "no executable of " + k->name() + " for " + dev->info().name);
    // A device that cannot execute kernels in this build (the GCN device without its model).
    if (std::string why = dev->backend().cannotRun(); !why.empty())
        return report(api, ctx, CL_OUT_OF_RESOURCES, why);
    const KernelDesc& desc = k->desc();
    for (size_t i = 0; i < k->args().size(); ++i)
        if (!k->args()[i].set)
            return report(api, ctx, CL_INVALID_KERNEL_ARGS,
                          "argument " + std::to_string(i) +
                              (desc.args[i].name.empty() ? "" : " (" + desc.args[i].name + ")") +
                              " of " + k->name() + " is not set");
    // SVM pointers need a device that addresses them (CL_INVALID_OPERATION: the spec has no
    // code of its own for this; the device cannot run such a launch).
    if (k->hasSvmArgs() && !dev->info().svmCapabilities)
        return report(api, ctx, CL_INVALID_OPERATION,
                      k->name() + " has SVM pointer arguments but " + dev->info().name +
                          " does not support SVM (CL_DEVICE_SVM_CAPABILITIES is 0)");
    // The kernel does not keep its arguments' memory objects alive (WeakMemRef); from here on
    // the command does.
    size_t released = 0;
    std::optional<std::vector<ArgValue>> args = k->snapshotArgs(released);
    if (!args)
        return report(
            api, ctx, CL_INVALID_KERNEL_ARGS,
            "argument " + std::to_string(released) +
                (desc.args[released].name.empty() ? "" : " (" + desc.args[released].name + ")") +
                " of " + k->name() +
                ": its memory object was released after clSetKernelArg (a kernel "
                "does not keep its arguments' memory objects alive)");
    if (dims < 1 || dims > dev->info().maxWorkItemDimensions)
        return report(api, ctx, CL_INVALID_WORK_DIMENSION, "work_dim must be 1, 2 or 3");
    if (!global)
        return report(api, ctx, CL_INVALID_GLOBAL_WORK_SIZE, "global_work_size is NULL");
    bool empty = false;
    for (cl_uint d = 0; d < dims; ++d) {
        if (global[d] == 0)
            empty = true; // OpenCL 2.1+: a zero-sized NDRange does nothing
        if ((offset ? offset[d] : 0) > ~size_t(0) - global[d])
            return report(api, ctx, CL_INVALID_GLOBAL_OFFSET,
                          "global_work_offset + global_work_size overflows size_t");
    }
    const auto& reqd = desc.reqdWorkGroupSize;
    // CL_KERNEL_WORK_GROUP_SIZE and CL_KERNEL_LOCAL_MEM_SIZE as clGetKernelWorkGroupInfo
    // reports them (the device's driver may have its say: Kernel::limits).
    const Kernel::Limits limits = k->limits(*dev);
    if (local) {
        size_t total = 1;
        size_t given[3] = {1, 1, 1}; // dimensions past work_dim count as 1
        for (cl_uint d = 0; d < dims; ++d) {
            if (local[d] == 0)
                return report(api, ctx, CL_INVALID_WORK_GROUP_SIZE, "a local_work_size is 0");
            if (local[d] > dev->info().maxWorkItemSizes[d])
                return report(api, ctx, CL_INVALID_WORK_ITEM_SIZE,
                              "local_work_size[" + std::to_string(d) +
                                  "] exceeds "
                                  "CL_DEVICE_MAX_WORK_ITEM_SIZES");
            total *= local[d];
            given[d] = local[d];
        }
        if (reqd[0] && (reqd[0] != given[0] || reqd[1] != given[1] || reqd[2] != given[2]))
            return report(api, ctx, CL_INVALID_WORK_GROUP_SIZE,
                          "local_work_size differs from the kernel's reqd_work_group_size");
        if (total > limits.workGroupSize)
            return report(api, ctx, CL_INVALID_WORK_GROUP_SIZE,
                          "the work-group has " + std::to_string(total) +
                              " work-items, more than CL_KERNEL_WORK_GROUP_SIZE (" +
                              std::to_string(limits.workGroupSize) + ")");
        bool nonUniformOk = k->allowsNonUniform(dev);
        for (cl_uint d = 0; d < dims && !empty; ++d)
            if (global[d] % local[d] && !nonUniformOk)
                return report(api, ctx, CL_INVALID_WORK_GROUP_SIZE,
                              "global_work_size[" + std::to_string(d) +
                                  "] is not a multiple of local_work_size (non-uniform "
                                  "work-groups need -cl-std=CL2.0 or later)");
    } else if (reqd[0]) {
        for (cl_uint d = 0; d < dims; ++d)
            if (!empty && global[d] % reqd[d] && !k->allowsNonUniform(dev))
                return report(api, ctx, CL_INVALID_WORK_GROUP_SIZE,
                              "global_work_size is not a multiple of reqd_work_group_size");
    }
    // CL_OUT_OF_RESOURCES: "insufficient resources needed to execute the kernel", here local
    // memory: __local variables and arguments together (CL_KERNEL_LOCAL_MEM_SIZE).
    if (limits.localMemSize > dev->info().localMemSize)
        return report(api, ctx, CL_OUT_OF_RESOURCES,
                      "kernel " + k->name() + " needs " + std::to_string(limits.localMemSize) +
                          " bytes of local memory per work-group (CL_KERNEL_LOCAL_MEM_SIZE: "
                          "its __local variables and __local arguments); the device has " +
                          std::to_string(dev->info().localMemSize) + " (CL_DEVICE_LOCAL_MEM_SIZE)");
    // cl_khr_gl_sharing: a GL object must be acquired before a kernel uses it.
    for (const ArgValue& a : *args)
        if (a.mem && a.mem->glUnacquired())
            return report(api, ctx, CL_INVALID_OPERATION,
                          "a kernel argument is a GL object not acquired with "
                          "clEnqueueAcquireGLObjects");
    if (cl_int e = checkWaitList(api, ctx, num, list))
        return e;
    Submit how = submitOf(num, list, false, event);
    if (type == CL_COMMAND_TASK)
        return handOut(enqueueTask(*q, *k, std::move(*args), how), event);
    return handOut(enqueueNDRange(*q, *k, std::move(*args), dims, offset, global, local, how),
                   event);
}

} // namespace

DUET_API cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel,
                                                   cl_uint dims, const size_t* offset,
                                                   const size_t* global, const size_t* local,
                                                   cl_uint num, const cl_event* list,
                                                   cl_event* event) {
    return guard("clEnqueueNDRangeKernel", [&] {
        return enqueueKernel("clEnqueueNDRangeKernel", CL_COMMAND_NDRANGE_KERNEL, queue, kernel,
                             dims, offset, global, local, num, list, event);
    });
}

DUET_API cl_int CL_API_CALL clEnqueueTask(cl_command_queue queue, cl_kernel kernel, cl_uint num,
                                          const cl_event* list, cl_event* event) {
    return guard("clEnqueueTask", [&] {
        const size_t one = 1;
        return enqueueKernel("clEnqueueTask", CL_COMMAND_TASK, queue, kernel, 1, nullptr, &one,
                             &one, num, list, event);
    });
}

DUET_API cl_int CL_API_CALL clEnqueueNativeKernel(cl_command_queue queue,
                                                  void(CL_CALLBACK* fn)(void*), void* args,
                                                  size_t cbArgs, cl_uint numMem,
                                                  const cl_mem* memList, const void** argsMemLoc,
                                                  cl_uint num, const cl_event* list,
                                                  cl_event* event) {
    return guard("clEnqueueNativeKernel", [&]() -> cl_int {
        const char* api = "clEnqueueNativeKernel";
        Queue* q = hostQueue(queue);
        if (!q)
            return report(api, nullptr, CL_INVALID_COMMAND_QUEUE, "not a valid command queue");
        Context* ctx = q->context();
        if (!fn)
            return report(api, ctx, CL_INVALID_VALUE, "user_func is NULL");
        if ((!args && cbArgs) || (args && !cbArgs))
            return report(api, ctx, CL_INVALID_VALUE, "args and cb_args disagree");
        if (numMem && (!memList || !argsMemLoc))
            return report(api, ctx, CL_INVALID_VALUE,
                          "num_mem_objects > 0 but mem_list or args_mem_loc is NULL");
        if (!numMem && (memList || argsMemLoc))
            return report(api, ctx, CL_INVALID_VALUE,
                          "mem_list or args_mem_loc given with num_mem_objects 0");
        if (!(q->device()->info().executionCapabilities & CL_EXEC_NATIVE_KERNEL))
            return report(api, ctx, CL_INVALID_OPERATION, "the device cannot run native kernels");
        for (cl_uint i = 0; i < numMem; ++i) {
            Mem* m = from<Mem>(memList[i]);
            if (!m || m->context() != ctx)
                return report(api, ctx, CL_INVALID_MEM_OBJECT,
                              "mem_list[" + std::to_string(i) + "] is not a valid memory object");
            if (m->glUnacquired())
                return report(api, ctx, CL_INVALID_OPERATION,
                              "mem_list[" + std::to_string(i) +
                                  "] was created from a GL object "
                                  "that is not acquired");
            auto loc = static_cast<const char*>(argsMemLoc[i]) - static_cast<const char*>(args);
            if (loc < 0 || size_t(loc) + sizeof(void*) > cbArgs)
                return report(api, ctx, CL_INVALID_VALUE,
                              "args_mem_loc[" + std::to_string(i) + "] is outside args");
        }
        if (cl_int e = checkWaitList(api, ctx, num, list))
            return e;
        std::span<Mem* const> mems(reinterpret_cast<Mem* const*>(memList), numMem);
        return handOut(enqueueNativeKernel(*q, fn, args, cbArgs, mems, argsMemLoc,
                                           submitOf(num, list, false, event)),
                       event);
    });
}
