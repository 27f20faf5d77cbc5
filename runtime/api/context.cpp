// Context entry points.
#include "api/api.hpp"
#include "core/device.hpp"
#include "gl/gl_share.hpp"

using namespace duet::api;

namespace {

/// Validates a context property list. Returns the copy to keep (0-terminated) or an error.
Result<std::vector<cl_context_properties>> checkProperties(const cl_context_properties* props) {
    std::vector<cl_context_properties> out;
    if (!props)
        return out;
    bool seenPlatform = false, seenSync = false;
    for (const cl_context_properties* p = props; *p; p += 2) {
        switch (p[0]) {
        case CL_CONTEXT_PLATFORM:
            if (seenPlatform)
                return makeError(CL_INVALID_PROPERTY, "CL_CONTEXT_PLATFORM given twice");
            seenPlatform = true;
            if (!from<Platform>(reinterpret_cast<cl_platform_id>(p[1])))
                return makeError(CL_INVALID_PLATFORM, "CL_CONTEXT_PLATFORM is not a Duet platform");
            break;
        case CL_CONTEXT_INTEROP_USER_SYNC:
            if (seenSync)
                return makeError(CL_INVALID_PROPERTY, "CL_CONTEXT_INTEROP_USER_SYNC given twice");
            seenSync = true;
            break;
        default:
            if (duet::rt::gl::isGlProperty(p[0])) {
                for (size_t i = 0; i < out.size(); i += 2)
                    if (out[i] == p[0])
                        return makeError(CL_INVALID_PROPERTY, "a GL property is given twice");
                break; // checked by gl::parseProperties
            }
            return makeError(CL_INVALID_PROPERTY,
                             "unsupported context property " + std::to_string(p[0]));
        }
        out.push_back(p[0]);
        out.push_back(p[1]);
    }
    out.push_back(0);
    return out;
}

void CL_CALLBACK detachGl(cl_context c, void*) {
    duet::rt::gl::detachShare(static_cast<Context*>(c));
}

/// Creates the context; with CL_GL_CONTEXT_KHR, first the runtime's GL context in the
/// application's share group (cl_khr_gl_sharing).
cl_context makeContext(Call& call, const cl_context_properties* properties,
                       std::vector<Device*> list, std::vector<cl_context_properties> props,
                       ContextNotifyFn notify, void* userData, bool fromType) {
    call.setCreationNotify(notify, userData);
    auto glProps = duet::rt::gl::parseProperties(properties);
    if (!glProps)
        return call.fail(glProps.error());
    std::shared_ptr<duet::rt::gl::Share> share;
    if (glProps->sharing()) {
        // CL_INVALID_OPERATION: a device cannot share data with the GL context (no
        // cl_khr_gl_sharing, or a GPU other than the one running it). By type: such devices
        // are left out, and only none left fails.
        using Kind = duet::rt::GlAffinity::Kind;
        Device* interop = nullptr;
        std::vector<Device*> sharing;
        std::string refused;
        for (auto& [d, affinity] : duet::rt::gl::matchDevices(*glProps, list)) {
            if (affinity.kind == Kind::Foreign) {
                refused += (refused.empty() ? "" : "; ") + affinity.why;
                continue;
            }
            if (affinity.kind == Kind::Interop && !interop)
                interop = d;
            sharing.push_back(d);
        }
        if (!refused.empty() && (!fromType || sharing.empty()))
            return call.fail(CL_INVALID_OPERATION,
                             "a device cannot share data with the GL context: " + refused);
        list = std::move(sharing);
        auto made = duet::rt::gl::createShare(*glProps);
        if (!made)
            return call.fail(made.error());
        share = std::move(*made);
        share->setInteropDevice(interop);
    }
    Context* c = makeObject<Context>(std::move(list), std::move(props), notify, userData);
    if (share) {
        duet::rt::gl::attachShare(c, std::move(share));
        c->addDestructorCallback(&detachGl, nullptr);
    }
    return call.ok(c);
}

} // namespace

DUET_API cl_context CL_API_CALL clCreateContext(const cl_context_properties* properties,
                                                cl_uint numDevices, const cl_device_id* devices,
                                                ContextNotifyFn notify, void* userData,
                                                cl_int* errcodeRet) {
    Call call("clCreateContext", errcodeRet);
    return guardHandle<_cl_context>(call, [&]() -> cl_context {
        auto props = checkProperties(properties);
        if (!props)
            return call.fail(props.error());
        if (!devices || numDevices == 0)
            return call.fail(CL_INVALID_VALUE, "devices is NULL or num_devices is 0");
        if (!notify && userData)
            return call.fail(CL_INVALID_VALUE, "user_data given without pfn_notify");
        std::vector<Device*> list;
        for (cl_uint i = 0; i < numDevices; ++i) {
            Device* d = from<Device>(devices[i]);
            if (!d)
                return call.fail(CL_INVALID_DEVICE,
                                 "devices[" + std::to_string(i) + "] is not a valid device");
            // CL_DEVICE_NOT_AVAILABLE: "a device in devices is currently not available".
            if (!d->info().available)
                return call.fail(CL_DEVICE_NOT_AVAILABLE, d->info().name + " is not available: " +
                                                              d->info().unavailableReason);
            // Duplicates are ignored (spec).
            if (std::find(list.begin(), list.end(), d) == list.end())
                list.push_back(d);
        }
        return makeContext(call, properties, std::move(list), std::move(*props), notify, userData,
                           false);
    });
}

DUET_API cl_context CL_API_CALL clCreateContextFromType(const cl_context_properties* properties,
                                                        cl_device_type type, ContextNotifyFn notify,
                                                        void* userData, cl_int* errcodeRet) {
    Call call("clCreateContextFromType", errcodeRet);
    return guardHandle<_cl_context>(call, [&]() -> cl_context {
        auto props = checkProperties(properties);
        if (!props)
            return call.fail(props.error());
        if (!notify && userData)
            return call.fail(CL_INVALID_VALUE, "user_data given without pfn_notify");
        cl_uint n = 0;
        cl_int err = clGetDeviceIDs(nullptr, type, 0, nullptr, &n);
        if (err == CL_INVALID_DEVICE_TYPE)
            return call.fail(err, "device_type is not valid");
        if (err != CL_SUCCESS || n == 0)
            return call.fail(CL_DEVICE_NOT_FOUND, "no device of the requested type");
        std::vector<cl_device_id> ids(n);
        clGetDeviceIDs(nullptr, type, n, ids.data(), nullptr);
        std::vector<Device*> list;
        for (cl_device_id id : ids)
            if (static_cast<Device*>(id)->info().available)
                list.push_back(static_cast<Device*>(id));
        if (list.empty())
            return call.fail(CL_DEVICE_NOT_AVAILABLE,
                             "no device of the requested type is available");
        return makeContext(call, properties, std::move(list), std::move(*props), notify, userData,
                           true);
    });
}

DUET_API cl_int CL_API_CALL clRetainContext(cl_context context) {
    Context* c = from<Context>(context);
    if (!c)
        return report("clRetainContext", nullptr, CL_INVALID_CONTEXT, "not a valid context");
    c->retain();
    return CL_SUCCESS;
}

DUET_API cl_int CL_API_CALL clReleaseContext(cl_context context) {
    Context* c = from<Context>(context);
    if (!c)
        return report("clReleaseContext", nullptr, CL_INVALID_CONTEXT, "not a valid context");
    c->release();
    return CL_SUCCESS;
}

DUET_API cl_int CL_API_CALL clGetContextInfo(cl_context context, cl_context_info param, size_t size,
                                             void* value, size_t* sizeRet) {
    return guard("clGetContextInfo", [&]() -> cl_int {
        const char* api = "clGetContextInfo";
        Context* c = from<Context>(context);
        if (!c)
            return report(api, nullptr, CL_INVALID_CONTEXT, "not a valid context");
        cl_int r;
        switch (param) {
        case CL_CONTEXT_REFERENCE_COUNT:
            r = infoValue<cl_uint>(size, value, sizeRet, c->refCount.load());
            break;
        case CL_CONTEXT_NUM_DEVICES:
            r = infoValue<cl_uint>(size, value, sizeRet, cl_uint(c->devices().size()));
            break;
        case CL_CONTEXT_DEVICES: {
            std::vector<cl_device_id> ids(c->devices().begin(), c->devices().end());
            r = infoVector(size, value, sizeRet, ids);
            break;
        }
        case CL_CONTEXT_PROPERTIES:
            r = infoVector(size, value, sizeRet, c->properties());
            break;
        default:
            return report(api, c, CL_INVALID_VALUE, "unknown param_name " + std::to_string(param));
        }
        if (r != CL_SUCCESS)
            return report(api, c, r, "param_value_size is smaller than the answer");
        return CL_SUCCESS;
    });
}

DUET_API cl_int CL_API_CALL clSetContextDestructorCallback(cl_context context,
                                                           Context::DestructorFn fn,
                                                           void* userData) {
    return guard("clSetContextDestructorCallback", [&]() -> cl_int {
        Context* c = from<Context>(context);
        if (!c)
            return report("clSetContextDestructorCallback", nullptr, CL_INVALID_CONTEXT,
                          "not a valid context");
        if (!fn)
            return report("clSetContextDestructorCallback", c, CL_INVALID_VALUE,
                          "pfn_notify is NULL");
        c->addDestructorCallback(fn, userData);
        return CL_SUCCESS;
    });
}
