// Program entry points: creation from source/binary, build, compile, link, info.
#include "api/api.hpp"
#include "core/program.hpp"

#include <cstdlib>
#include <span>
#include <thread>

using namespace duet::api;

namespace {

using BuildNotifyFn = void(CL_CALLBACK*)(cl_program, void*);

/// Resolves a (device_list, num_devices) pair against a program's devices.
Result<std::vector<Device*>> programDevices(Program* p, cl_uint num, const cl_device_id* list) {
    if ((num == 0) != (list == nullptr))
        return makeError(CL_INVALID_VALUE, "device_list and num_devices disagree");
    if (!list)
        return p->devices();
    std::vector<Device*> out;
    for (cl_uint i = 0; i < num; ++i) {
        Device* d = from<Device>(list[i]);
        if (!d || std::find(p->devices().begin(), p->devices().end(), d) == p->devices().end())
            return makeError(CL_INVALID_DEVICE, "device_list[" + std::to_string(i) +
                                                    "] is not a device of the program");
        out.push_back(d);
    }
    return out;
}

/// Runs `work` now, or, with a callback, on a thread that calls it when done (the spec lets
/// clBuildProgram return at once when pfn_notify is given).
cl_int runBuild(Program* p, BuildNotifyFn notify, void* userData, std::function<Status()> work,
                const char* api) {
    if (p->building.exchange(true))
        return report(api, p->context(), CL_INVALID_OPERATION,
                      "a build of this program is already in progress");
    if (notify) {
        Ref<Program> keep = retainRef(p);
        std::thread([keep, notify, userData, work = std::move(work)] {
            Status s = work();
            (void)s;
            keep->building = false;
            notify(keep.get(), userData);
        }).detach();
        return CL_SUCCESS;
    }
    Status s = work();
    p->building = false;
    if (!s)
        return report(api, p->context(), s.code(), s.error().message);
    return CL_SUCCESS;
}

} // namespace

DUET_API cl_program CL_API_CALL clCreateProgramWithSource(cl_context context, cl_uint count,
                                                          const char** strings,
                                                          const size_t* lengths,
                                                          cl_int* errcodeRet) {
    Call call("clCreateProgramWithSource", errcodeRet);
    return guardHandle<_cl_program>(call, [&]() -> cl_program {
        Context* c = from<Context>(context);
        if (!c)
            return call.fail(CL_INVALID_CONTEXT, "not a valid context");
        call.setContext(c);
        if (count == 0 || !strings)
            return call.fail(CL_INVALID_VALUE, "count is 0 or strings is NULL");
        std::string src;
        for (cl_uint i = 0; i < count; ++i) {
            if (!strings[i])
                return call.fail(CL_INVALID_VALUE, "strings[" + std::to_string(i) + "] is NULL");
            if (lengths && lengths[i])
                src.append(strings[i], lengths[i]);
            else
                src.append(strings[i]);
        }
        return call.ok(makeObject<Program>(retainRef(c), Program::Origin::Source, std::move(src)));
    });
}

DUET_API cl_program CL_API_CALL clCreateProgramWithBinary(
    cl_context context, cl_uint num, const cl_device_id* devices, const size_t* lengths,
    const unsigned char** binaries, cl_int* binaryStatus, cl_int* errcodeRet) {
    Call call("clCreateProgramWithBinary", errcodeRet);
    return guardHandle<_cl_program>(call, [&]() -> cl_program {
        Context* c = from<Context>(context);
        if (!c)
            return call.fail(CL_INVALID_CONTEXT, "not a valid context");
        call.setContext(c);
        if (num == 0 || !devices)
            return call.fail(CL_INVALID_VALUE, "device_list is NULL or num_devices is 0");
        std::vector<Device*> list;
        for (cl_uint i = 0; i < num; ++i) {
            Device* d = from<Device>(devices[i]);
            if (!d || !c->hasDevice(d))
                return call.fail(CL_INVALID_DEVICE, "device_list[" + std::to_string(i) +
                                                        "] is not a device of the context");
            list.push_back(d);
        }
        if (!lengths || !binaries)
            return call.fail(CL_INVALID_VALUE, "lengths or binaries is NULL");
        for (cl_uint i = 0; i < num; ++i)
            if (!lengths[i] || !binaries[i]) {
                if (binaryStatus)
                    binaryStatus[i] = CL_INVALID_VALUE;
                return call.fail(CL_INVALID_VALUE, "lengths[" + std::to_string(i) +
                                                       "] is 0 or binaries[" + std::to_string(i) +
                                                       "] is NULL");
            }
        Ref<Program> p = adoptRef(makeObject<Program>(retainRef(c), Program::Origin::Binary, ""));
        p->setDevices(list);
        cl_int result = CL_SUCCESS;
        std::string why;
        for (cl_uint i = 0; i < num; ++i) {
            LoadBinaryResult r =
                list[i]->backend().toolchain().loadBinary({binaries[i], lengths[i]});
            if (binaryStatus)
                binaryStatus[i] = r.status;
            if (r.status != CL_SUCCESS) {
                result = CL_INVALID_BINARY;
                why = "binaries[" + std::to_string(i) + "]: " + r.log;
                continue;
            }
            Program::Build b;
            b.binaryType = r.binaryType;
            b.bitcode = std::move(r.bitcode);
            b.executable = std::move(r.executable);
            b.binary.assign(reinterpret_cast<const char*>(binaries[i]), lengths[i]);
            b.status = CL_BUILD_NONE;
            p->setBuild(list[i], std::move(b));
        }
        if (result != CL_SUCCESS)
            return call.fail(result, why);
        return call.ok(p.detach());
    });
}

DUET_API cl_program CL_API_CALL clCreateProgramWithBuiltInKernels(cl_context context, cl_uint,
                                                                  const cl_device_id*, const char*,
                                                                  cl_int* errcodeRet) {
    Call call("clCreateProgramWithBuiltInKernels", errcodeRet);
    Context* c = from<Context>(context);
    if (!c)
        return call.fail(CL_INVALID_CONTEXT, "not a valid context");
    call.setContext(c);
    return call.fail(CL_INVALID_VALUE, "no device has built-in kernels "
                                       "(CL_DEVICE_BUILT_IN_KERNELS is empty)");
}

DUET_API cl_program CL_API_CALL clCreateProgramWithIL(cl_context context, const void* il,
                                                      size_t length, cl_int* errcodeRet) {
    Call call("clCreateProgramWithIL", errcodeRet);
    return guardHandle<_cl_program>(call, [&]() -> cl_program {
        Context* c = from<Context>(context);
        if (!c)
            return call.fail(CL_INVALID_CONTEXT, "not a valid context");
        call.setContext(c);
        // CL_INVALID_OPERATION: no device of the context supports intermediate languages.
        const Device* taker = nullptr;
        for (Device* d : c->devices())
            if (!taker && !d->backend().toolchain().ilVersions().empty())
                taker = d;
        if (!taker)
            return call.fail(CL_INVALID_OPERATION,
                             "no device of the context supports intermediate languages "
                             "(CL_DEVICE_IL_VERSION is empty; SPIR-V needs the llvm-spirv-15 "
                             "translator, DUET_LLVM_SPIRV)");
        // CL_INVALID_VALUE: il is NULL or length is zero.
        if (!il || length == 0)
            return call.fail(CL_INVALID_VALUE, "il is NULL or length is 0");
        // CL_INVALID_VALUE: the bytes are no well-formed module of the OpenCL environment.
        std::span<const unsigned char> bytes(static_cast<const unsigned char*>(il), length);
        ILCheckResult check = taker->backend().toolchain().checkIL(bytes);
        if (check.status != CL_SUCCESS)
            return call.fail(check.status, check.reason);
        Ref<Program> p = adoptRef(makeObject<Program>(retainRef(c), Program::Origin::IL, ""));
        p->setIL(std::string(static_cast<const char*>(il), length),
                 std::move(check.specConstantSizes));
        return call.ok(p.detach());
    });
}

DUET_API cl_int CL_API_CALL clRetainProgram(cl_program program) {
    Program* p = from<Program>(program);
    if (!p)
        return report("clRetainProgram", nullptr, CL_INVALID_PROGRAM, "not a valid program");
    p->retain();
    return CL_SUCCESS;
}

DUET_API cl_int CL_API_CALL clReleaseProgram(cl_program program) {
    Program* p = from<Program>(program);
    if (!p)
        return report("clReleaseProgram", nullptr, CL_INVALID_PROGRAM, "not a valid program");
    p->release();
    return CL_SUCCESS;
}

DUET_API cl_int CL_API_CALL clSetProgramReleaseCallback(cl_program program,
                                                        void(CL_CALLBACK*)(cl_program, void*),
                                                        void*) {
    Program* p = from<Program>(program);
    if (!p)
        return report("clSetProgramReleaseCallback", nullptr, CL_INVALID_PROGRAM,
                      "not a valid program");
    return report("clSetProgramReleaseCallback", p->context(), CL_INVALID_OPERATION,
                  "no device supports program-scope global destructors");
}

DUET_API cl_int CL_API_CALL clSetProgramSpecializationConstant(cl_program program, cl_uint specId,
                                                               size_t specSize,
                                                               const void* specValue) {
    return guard("clSetProgramSpecializationConstant", [&]() -> cl_int {
        const char* api = "clSetProgramSpecializationConstant";
        Program* p = from<Program>(program);
        // CL_INVALID_PROGRAM: not a program.
        if (!p)
            return report(api, nullptr, CL_INVALID_PROGRAM, "not a valid program");
        // CL_INVALID_OPERATION: no device of the program supports intermediate languages.
        bool anyIl = false;
        for (Device* d : p->devices())
            anyIl |= !d->backend().toolchain().ilVersions().empty();
        if (!anyIl)
            return report(api, p->context(), CL_INVALID_OPERATION,
                          "no device of the program supports intermediate languages "
                          "(CL_DEVICE_IL_VERSION is empty)");
        // CL_INVALID_PROGRAM: the program was not created from a SPIR-V module.
        if (p->origin() != Program::Origin::IL)
            return report(api, p->context(), CL_INVALID_PROGRAM,
                          "the program was not created with clCreateProgramWithIL");
        // CL_INVALID_SPEC_ID: spec_id names no specialisation constant of the module.
        auto it = p->specConstantSizes().find(specId);
        if (it == p->specConstantSizes().end())
            return report(api, p->context(), CL_INVALID_SPEC_ID,
                          "the module has no specialisation constant with SpecId " +
                              std::to_string(specId));
        // CL_INVALID_VALUE: spec_size is not the constant's size, or spec_value is NULL.
        if (specSize != it->second)
            return report(api, p->context(), CL_INVALID_VALUE,
                          "spec_size is " + std::to_string(specSize) + "; SpecId " +
                              std::to_string(specId) + " is " + std::to_string(it->second) +
                              " byte(s)");
        if (!specValue)
            return report(api, p->context(), CL_INVALID_VALUE, "spec_value is NULL");
        p->setSpecConstant(specId, std::string(static_cast<const char*>(specValue), specSize));
        return CL_SUCCESS;
    });
}

DUET_API cl_int CL_API_CALL clBuildProgram(cl_program program, cl_uint num,
                                           const cl_device_id* devices, const char* options,
                                           BuildNotifyFn notify, void* userData) {
    return guard("clBuildProgram", [&]() -> cl_int {
        const char* api = "clBuildProgram";
        Program* p = from<Program>(program);
        if (!p)
            return report(api, nullptr, CL_INVALID_PROGRAM, "not a valid program");
        auto devs = programDevices(p, num, devices);
        if (!devs)
            return report(api, p->context(), devs.error().code, devs.error().message);
        if (!notify && userData)
            return report(api, p->context(), CL_INVALID_VALUE,
                          "user_data given without pfn_notify");
        if (p->origin() == Program::Origin::Binary)
            for (Device* d : *devs)
                if (p->build(d).binaryType == CL_PROGRAM_BINARY_TYPE_NONE)
                    return report(api, p->context(), CL_INVALID_BINARY,
                                  "the program has no valid binary for " + d->info().name);
        if (p->attachedKernels.load())
            return report(api, p->context(), CL_INVALID_OPERATION,
                          "kernel objects are attached to the program");
        std::string opts = options ? options : "";
        auto list = *devs;
        return runBuild(
            p, notify, userData, [p, list, opts] { return p->buildFor(list, opts); }, api);
    });
}

DUET_API cl_int CL_API_CALL clCompileProgram(cl_program program, cl_uint num,
                                             const cl_device_id* devices, const char* options,
                                             cl_uint numHeaders, const cl_program* headers,
                                             const char** headerNames, BuildNotifyFn notify,
                                             void* userData) {
    return guard("clCompileProgram", [&]() -> cl_int {
        const char* api = "clCompileProgram";
        Program* p = from<Program>(program);
        if (!p)
            return report(api, nullptr, CL_INVALID_PROGRAM, "not a valid program");
        auto devs = programDevices(p, num, devices);
        if (!devs)
            return report(api, p->context(), devs.error().code, devs.error().message);
        if ((numHeaders == 0) != (headers == nullptr) || (numHeaders && !headerNames))
            return report(api, p->context(), CL_INVALID_VALUE,
                          "input_headers, header_include_names and num_input_headers disagree");
        if (!notify && userData)
            return report(api, p->context(), CL_INVALID_VALUE,
                          "user_data given without pfn_notify");
        if (p->origin() != Program::Origin::Source && p->origin() != Program::Origin::IL)
            return report(api, p->context(), CL_INVALID_OPERATION,
                          "the program was not created with clCreateProgramWithSource or "
                          "clCreateProgramWithIL");
        std::vector<HeaderSource> hs;
        for (cl_uint i = 0; i < numHeaders; ++i) {
            Program* h = from<Program>(headers[i]);
            if (!h || !headerNames[i])
                return report(api, p->context(), CL_INVALID_VALUE,
                              "input_headers[" + std::to_string(i) +
                                  "] is not a program or its "
                                  "name is NULL");
            hs.push_back({headerNames[i], h->source()});
        }
        if (p->attachedKernels.load())
            return report(api, p->context(), CL_INVALID_OPERATION,
                          "kernel objects are attached to the program");
        std::string opts = options ? options : "";
        auto list = *devs;
        return runBuild(
            p, notify, userData, [p, list, opts, hs] { return p->compileFor(list, opts, hs); },
            api);
    });
}

DUET_API cl_program CL_API_CALL clLinkProgram(cl_context context, cl_uint num,
                                              const cl_device_id* devices, const char* options,
                                              cl_uint numInputs, const cl_program* inputs,
                                              BuildNotifyFn notify, void* userData,
                                              cl_int* errcodeRet) {
    Call call("clLinkProgram", errcodeRet);
    return guardHandle<_cl_program>(call, [&]() -> cl_program {
        Context* c = from<Context>(context);
        if (!c)
            return call.fail(CL_INVALID_CONTEXT, "not a valid context");
        call.setContext(c);
        if ((num == 0) != (devices == nullptr))
            return call.fail(CL_INVALID_VALUE, "device_list and num_devices disagree");
        if (numInputs == 0 || !inputs)
            return call.fail(CL_INVALID_VALUE, "num_input_programs is 0 or input_programs is NULL");
        if (!notify && userData)
            return call.fail(CL_INVALID_VALUE, "user_data given without pfn_notify");
        std::vector<Device*> list;
        if (devices) {
            for (cl_uint i = 0; i < num; ++i) {
                Device* d = from<Device>(devices[i]);
                if (!d || !c->hasDevice(d))
                    return call.fail(CL_INVALID_DEVICE, "device_list[" + std::to_string(i) +
                                                            "] is not a device of the context");
                list.push_back(d);
            }
        } else {
            list = c->devices();
        }
        std::vector<Program*> ins;
        for (cl_uint i = 0; i < numInputs; ++i) {
            Program* p = from<Program>(inputs[i]);
            if (!p)
                return call.fail(CL_INVALID_PROGRAM,
                                 "input_programs[" + std::to_string(i) + "] is not a program");
            for (Device* d : list) {
                auto t = p->build(d).binaryType;
                if (t != CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT &&
                    t != CL_PROGRAM_BINARY_TYPE_LIBRARY)
                    return call.fail(CL_INVALID_OPERATION,
                                     "input_programs[" + std::to_string(i) +
                                         "] has no compiled object or library for " +
                                         d->info().name);
            }
            ins.push_back(p);
        }
        Ref<Program> out = adoptRef(makeObject<Program>(retainRef(c), Program::Origin::Linked, ""));
        out->setDevices(list);
        std::string opts = options ? options : "";
        std::vector<Ref<Program>> keepInputs;
        for (Program* p : ins)
            keepInputs.push_back(retainRef(p));
        Program* raw = out.get();
        cl_int r = runBuild(
            raw, notify, userData,
            [raw, list, opts, ins, keepInputs] { return raw->linkFrom(list, opts, ins); },
            "clLinkProgram");
        if (r == CL_INVALID_LINKER_OPTIONS)
            return call.fail(r, "invalid linker options; see CL_PROGRAM_BUILD_LOG");
        if (r != CL_SUCCESS && r != CL_LINK_PROGRAM_FAILURE)
            return call.fail(r, "link failed");
        // A failed link still returns a program whose build log says why (spec).
        if (errcodeRet)
            *errcodeRet = r;
        return out.detach();
    });
}

DUET_API cl_int CL_API_CALL clGetProgramInfo(cl_program program, cl_program_info param, size_t size,
                                             void* value, size_t* sizeRet) {
    return guard("clGetProgramInfo", [&]() -> cl_int {
        const char* api = "clGetProgramInfo";
        Program* p = from<Program>(program);
        if (!p)
            return report(api, nullptr, CL_INVALID_PROGRAM, "not a valid program");
        cl_int r;
        switch (param) {
        case CL_PROGRAM_REFERENCE_COUNT:
            r = infoValue<cl_uint>(size, value, sizeRet, p->refCount.load());
            break;
        case CL_PROGRAM_CONTEXT:
            r = infoValue<cl_context>(size, value, sizeRet, p->context());
            break;
        case CL_PROGRAM_NUM_DEVICES:
            r = infoValue<cl_uint>(size, value, sizeRet, cl_uint(p->devices().size()));
            break;
        case CL_PROGRAM_DEVICES: {
            std::vector<cl_device_id> ids(p->devices().begin(), p->devices().end());
            r = infoVector(size, value, sizeRet, ids);
            break;
        }
        case CL_PROGRAM_SOURCE:
            r = infoString(size, value, sizeRet, p->source());
            break;
        case CL_PROGRAM_IL: // the module as given; nothing for other programs
            r = writeInfo(size, value, sizeRet, p->il().data(), p->il().size());
            break;
        case CL_PROGRAM_BINARY_SIZES: {
            std::vector<size_t> sizes;
            for (Device* d : p->devices())
                sizes.push_back(p->binary(d).size());
            r = infoVector(size, value, sizeRet, sizes);
            break;
        }
        case CL_PROGRAM_BINARIES: {
            // value is an array of pointers, one per device, each to a buffer of the size
            // CL_PROGRAM_BINARY_SIZES gave; a NULL entry skips that device.
            size_t need = p->devices().size() * sizeof(unsigned char*);
            if (value) {
                if (size < need)
                    return report(api, p->context(), CL_INVALID_VALUE,
                                  "param_value_size is smaller than the array of pointers");
                auto** out = static_cast<unsigned char**>(value);
                for (size_t i = 0; i < p->devices().size(); ++i)
                    if (out[i]) {
                        std::string b = p->binary(p->devices()[i]);
                        std::memcpy(out[i], b.data(), b.size());
                    }
            }
            if (sizeRet)
                *sizeRet = need;
            return CL_SUCCESS;
        }
        case CL_PROGRAM_NUM_KERNELS:
        case CL_PROGRAM_KERNEL_NAMES: {
            if (!p->hasExecutable())
                return report(api, p->context(), CL_INVALID_PROGRAM_EXECUTABLE,
                              "the program has no executable built for any device");
            auto ks = p->kernels();
            if (param == CL_PROGRAM_NUM_KERNELS) {
                r = infoValue<size_t>(size, value, sizeRet, ks.size());
            } else {
                std::string names;
                for (auto& k : ks)
                    names += (names.empty() ? "" : ";") + k.name;
                r = infoString(size, value, sizeRet, names);
            }
            break;
        }
        case CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT:
        case CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT:
            r = infoValue<cl_bool>(size, value, sizeRet, CL_FALSE);
            break;
        default:
            return report(api, p->context(), CL_INVALID_VALUE,
                          "unknown param_name " + std::to_string(param));
        }
        if (r != CL_SUCCESS)
            return report(api, p->context(), r, "param_value_size is smaller than the answer");
        return CL_SUCCESS;
    });
}

DUET_API cl_int CL_API_CALL clGetProgramBuildInfo(cl_program program, cl_device_id device,
                                                  cl_program_build_info param, size_t size,
                                                  void* value, size_t* sizeRet) {
    return guard("clGetProgramBuildInfo", [&]() -> cl_int {
        const char* api = "clGetProgramBuildInfo";
        Program* p = from<Program>(program);
        if (!p)
            return report(api, nullptr, CL_INVALID_PROGRAM, "not a valid program");
        Device* d = from<Device>(device);
        if (!d || std::find(p->devices().begin(), p->devices().end(), d) == p->devices().end())
            return report(api, p->context(), CL_INVALID_DEVICE,
                          "device is not associated with the program");
        Program::Build b = p->build(d);
        if (p->building.load() && param == CL_PROGRAM_BUILD_STATUS)
            b.status = CL_BUILD_IN_PROGRESS;
        cl_int r;
        switch (param) {
        case CL_PROGRAM_BUILD_STATUS:
            r = infoValue<cl_build_status>(size, value, sizeRet, b.status);
            break;
        case CL_PROGRAM_BUILD_OPTIONS:
            r = infoString(size, value, sizeRet, b.options);
            break;
        case CL_PROGRAM_BUILD_LOG:
            r = infoString(size, value, sizeRet, b.log);
            break;
        case CL_PROGRAM_BINARY_TYPE:
            r = infoValue<cl_program_binary_type>(size, value, sizeRet, b.binaryType);
            break;
        case CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE:
            r = infoValue<size_t>(size, value, sizeRet,
                                  b.executable ? b.executable->globalVariableTotalSize() : 0);
            break;
        default:
            return report(api, p->context(), CL_INVALID_VALUE,
                          "unknown param_name " + std::to_string(param));
        }
        if (r != CL_SUCCESS)
            return report(api, p->context(), r, "param_value_size is smaller than the answer");
        return CL_SUCCESS;
    });
}
