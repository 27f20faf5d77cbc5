// Context creation (which platform/device can share with the current GL context), the sharing
// and host-copy acquire/release, and OpenCL error names.
#include "duet/cl_error_name.hpp"
#include "duet/interop/interop.hpp"
#include "duet/interop/gl_devices.hpp"

#include <CL/cl_ext.h>
#include <glad/gl.h>

#include <cstdio>
#include <mutex>
#include <set>

namespace duet::interop {

std::string errorName(cl_int code) {
    return clErrorName(code);
}

void check(cl_int code, const char* what) {
    if (code != CL_SUCCESS)
        throw Error(std::string(what) + " failed: " + errorName(code), code);
}

namespace {

// One CL device the search saw, and why it was or was not taken.
struct Candidate {
    cl_platform_id platform;
    cl_device_id device;
    std::string platformName, deviceName;
    cl_device_type type = 0;
    std::string why;      // empty: it can share
    bool current = false; // CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR named it
};

std::string glRenderer() {
    const GLubyte* renderer = glad_glGetString ? glGetString(GL_RENDERER) : nullptr;
    return renderer ? reinterpret_cast<const char*>(renderer) : "(no current GL context)";
}

/// Why `device` cannot share with `gl` although its platform has cl_khr_gl_sharing, in the
/// platform's own words: what its clCreateContext with the GL properties reports (the notify
/// callback's message, else the error's name), e.g. Duet's "the GL context runs on another GPU".
/// Empty when that context can be made after all. Only asked on the way to an error or a
/// fallback.
std::string refusal(const GLHandles& gl, cl_platform_id platform, cl_device_id device) {
    std::string said;
    auto props = glContextProperties(gl, platform);
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(
        props.data(), 1, &device,
        [](const char* message, const void*, size_t, void* self) {
            *static_cast<std::string*>(self) = message;
        },
        &said, &err);
    if (ctx) {
        clReleaseContext(ctx);
        return {};
    }
    return said.empty() ? "clCreateContext: " + errorName(err) : said;
}

} // namespace

std::unique_ptr<Context> Context::create(const GLHandles& gl, const Options& options) {
    std::vector<cl_platform_id> platforms = platformIds();
    cl_int err = CL_SUCCESS;

    std::vector<Candidate> seen;
    const Candidate* sharing = nullptr;
    for (cl_platform_id platform : platforms) {
        std::string name = platformString(platform, CL_PLATFORM_NAME);
        if (name.find(options.platform) == std::string::npos)
            continue;
        cl_uint n = 0;
        if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS || !n)
            continue;
        std::vector<cl_device_id> devices(n);
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, devices.data(), nullptr);
        // The same query duet-displays lists (gl_devices.cpp); the current device first.
        GLContextDevices answer = queryGLContextDevices(gl, platform);
        std::string why = answer.why();
        std::vector<cl_device_id> shareable = answer.shareable();
        for (cl_device_id device : devices) {
            Candidate c{platform, device, name, deviceString(device, CL_DEVICE_NAME), 0, why};
            clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof c.type, &c.type, nullptr);
            if (c.deviceName.find(options.device) == std::string::npos)
                continue;
            if (why.empty()) {
                bool listed = false;
                for (cl_device_id d : shareable)
                    listed |= d == device;
                if (!listed)
                    c.why = "not a device for this GL context";
                for (cl_device_id d : answer.current)
                    c.current |= d == device;
            }
            // Not listed by a platform that shares with GL: ask it why (a GL context on
            // another GPU, say), so the error or the fallback's line names the real reason.
            if (!c.why.empty() && answer.unsupported.empty())
                if (std::string r = refusal(gl, platform, device); !r.empty())
                    c.why = r;
            seen.push_back(c);
        }
    }
    // The device that runs the GL context shares without a copy across devices: prefer it, then
    // any device that can share, in platform order.
    for (const Candidate& c : seen)
        if (c.why.empty() && (!sharing || (c.current && !sharing->current)))
            sharing = &c;

    std::unique_ptr<Context> ctx(new Context());
    const Candidate* chosen = sharing;
    if (sharing && !options.forceHostCopy) {
        auto props = glContextProperties(gl, sharing->platform);
        std::vector<cl_device_id> devices{sharing->device};
        if (options.spanSharingDevices) {
            // Every device that can share, whatever the device-name filter chose among them.
            for (cl_device_id d : queryGLContextDevices(gl, sharing->platform).shareable())
                if (d != sharing->device)
                    devices.push_back(d);
        }
        ctx->m_context = clCreateContext(props.data(), cl_uint(devices.size()), devices.data(),
                                         nullptr, nullptr, &err);
        if (err != CL_SUCCESS)
            throw Error("interop: clCreateContext with GL sharing on " + sharing->platformName +
                            " / " + sharing->deviceName + " failed: " + errorName(err),
                        err);
        ctx->m_mode = Mode::Sharing;
        ctx->m_glEvents =
            hasExtension(deviceString(sharing->device, CL_DEVICE_EXTENSIONS), "cl_khr_gl_event");
    } else {
        if (options.allowHostCopy || options.forceHostCopy) {
            // Forced: the device that could share. Default: Duet's CPU device; else whatever
            // the filters left first.
            for (const Candidate& c : seen)
                if (!chosen && options.platform.empty() &&
                    c.platformName.find("Duet") != std::string::npos &&
                    (c.type & CL_DEVICE_TYPE_CPU)) {
                    chosen = &c;
                    break;
                }
            if (!chosen && !seen.empty())
                chosen = &seen.front();
        }
        if (!chosen) {
            std::string message = "interop: no OpenCL device can share with GL renderer '" +
                                  glRenderer() + "'; devices seen:";
            if (seen.empty())
                message += " none";
            for (const Candidate& c : seen)
                message += " [" + c.platformName + " / " + c.deviceName + ": " + c.why + "]";
            if (!options.platform.empty() || !options.device.empty())
                message += " (filters: platform '" + options.platform + "', device '" +
                           options.device + "')";
            throw Error(message, CL_DEVICE_NOT_FOUND);
        }
        cl_context_properties props[] = {
            CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(chosen->platform), 0};
        ctx->m_context = clCreateContext(props, 1, &chosen->device, nullptr, nullptr, &err);
        check(err, "interop: clCreateContext");
        ctx->m_mode = Mode::HostCopy;
        static std::mutex reportedMutex;
        static std::set<std::string> reported;
        std::lock_guard lock(reportedMutex);
        if (reported.insert(chosen->platformName).second) {
            if (chosen->why.empty())
                std::fprintf(stderr, "interop: %s could share; using host copies as asked\n",
                             chosen->platformName.c_str());
            else if (chosen->why == "no cl_khr_gl_sharing")
                std::fprintf(stderr, "interop: %s has no cl_khr_gl_sharing; using host copies\n",
                             chosen->platformName.c_str());
            else
                std::fprintf(stderr,
                             "interop: %s cannot share with this GL context (%s); using host "
                             "copies\n",
                             chosen->platformName.c_str(), chosen->why.c_str());
        }
    }
    ctx->m_platform = chosen->platform;
    ctx->m_device = chosen->device;
    ctx->m_platformName = chosen->platformName;
    ctx->m_deviceName = chosen->deviceName;
    cl_queue_properties qprops[] = {
        CL_QUEUE_PROPERTIES, cl_queue_properties(options.profiling ? CL_QUEUE_PROFILING_ENABLE : 0),
        0};
    ctx->m_queue = clCreateCommandQueueWithProperties(ctx->m_context, ctx->m_device, qprops, &err);
    if (err == CL_INVALID_OPERATION || !ctx->m_queue) // an OpenCL 1.x device
        ctx->m_queue = clCreateCommandQueue(
            ctx->m_context, ctx->m_device, options.profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    check(err, "interop: creating the command queue");
    return ctx;
}

Context::~Context() {
    if (m_queue)
        clReleaseCommandQueue(m_queue);
    if (m_context)
        clReleaseContext(m_context);
}

std::string Context::description() const {
    return m_platformName + " / " + m_deviceName +
           (m_mode == Mode::Sharing ? (m_glEvents ? " (GL sharing, gl_event)" : " (GL sharing)")
                                    : " (host copies)");
}

void Context::acquire(const std::vector<SharedObject*>& objects) {
    std::vector<cl_mem> mems;
    for (SharedObject* o : objects)
        if (o->hostCopy())
            o->upload(m_queue);
        else
            mems.push_back(o->mem());
    if (mems.empty())
        return;
    // Without cl_khr_gl_event the spec leaves GL/CL ordering to the application: glFinish.
    if (m_glEvents)
        glFlush();
    else
        glFinish();
    check(
        clEnqueueAcquireGLObjects(m_queue, cl_uint(mems.size()), mems.data(), 0, nullptr, nullptr),
        "clEnqueueAcquireGLObjects");
}

void Context::release(const std::vector<SharedObject*>& objects) {
    std::vector<cl_mem> mems;
    for (SharedObject* o : objects)
        if (o->hostCopy())
            o->download(m_queue);
        else
            mems.push_back(o->mem());
    if (mems.empty())
        return;
    check(
        clEnqueueReleaseGLObjects(m_queue, cl_uint(mems.size()), mems.data(), 0, nullptr, nullptr),
        "clEnqueueReleaseGLObjects");
    check(m_glEvents ? clFlush(m_queue) : clFinish(m_queue), "finishing the GL release");
}

AcquireScope::AcquireScope(Context& context, std::initializer_list<SharedObject*> objects)
    : AcquireScope(context, std::vector<SharedObject*>(objects)) {}

AcquireScope::AcquireScope(Context& context, std::vector<SharedObject*> objects)
    : m_context(context), m_objects(std::move(objects)) {
    m_context.acquire(m_objects);
}

AcquireScope::~AcquireScope() {
    try {
        release();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "interop: release failed: %s\n", e.what());
    }
}

void AcquireScope::release() {
    if (m_released)
        return;
    m_released = true;
    m_context.release(m_objects);
}

} // namespace duet::interop
