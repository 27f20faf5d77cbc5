// clGetGLContextInfoKHR on one platform (both device queries), and the small CL string queries
// that Context::create and the display enumeration share.
#include "duet/interop/gl_devices.hpp"

#include <CL/cl_ext.h>

#include <algorithm>

namespace duet::interop {

std::string platformString(cl_platform_id platform, cl_platform_info what) {
    size_t size = 0;
    if (clGetPlatformInfo(platform, what, 0, nullptr, &size) != CL_SUCCESS || size == 0)
        return {};
    std::string text(size, '\0');
    if (clGetPlatformInfo(platform, what, size, text.data(), nullptr) != CL_SUCCESS)
        return {};
    text.resize(std::min(text.find('\0'), size));
    return text;
}

std::string deviceString(cl_device_id device, cl_device_info what) {
    size_t size = 0;
    if (clGetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS || size == 0)
        return {};
    std::string text(size, '\0');
    if (clGetDeviceInfo(device, what, size, text.data(), nullptr) != CL_SUCCESS)
        return {};
    text.resize(std::min(text.find('\0'), size));
    return text;
}

bool hasExtension(const std::string& list, const std::string& word) {
    size_t at = 0;
    while ((at = list.find(word, at)) != std::string::npos) {
        size_t end = at + word.size();
        if ((at == 0 || list[at - 1] == ' ') && (end == list.size() || list[end] == ' '))
            return true;
        at = end;
    }
    return false;
}

std::vector<cl_platform_id> platformIds() {
    cl_uint count = 0;
    cl_int err = clGetPlatformIDs(0, nullptr, &count);
    // ocl-icd answers CL_PLATFORM_NOT_FOUND_KHR when no ICD is installed: that is "none".
    if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && count == 0))
        return {};
    check(err, "clGetPlatformIDs");
    std::vector<cl_platform_id> platforms(count);
    check(clGetPlatformIDs(count, platforms.data(), &count), "clGetPlatformIDs");
    platforms.resize(std::min<size_t>(count, platforms.size()));
    return platforms;
}

std::vector<cl_context_properties> glContextProperties(const GLHandles& gl,
                                                       cl_platform_id platform) {
    return {CL_GL_CONTEXT_KHR,
            reinterpret_cast<cl_context_properties>(gl.context),
            gl.api == GLHandles::Api::Egl ? CL_EGL_DISPLAY_KHR : CL_GLX_DISPLAY_KHR,
            reinterpret_cast<cl_context_properties>(gl.display),
            CL_CONTEXT_PLATFORM,
            reinterpret_cast<cl_context_properties>(platform),
            0};
}

namespace {

using GetGLContextInfoFn = cl_int(CL_API_CALL*)(const cl_context_properties*, cl_gl_context_info,
                                                size_t, void*, size_t*);

// One clGetGLContextInfoKHR query: size first, then the devices. An answer of zero bytes is "no
// device" (the spec's answer for CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR when none runs the context).
std::vector<cl_device_id> askDevices(GetGLContextInfoFn fn, const cl_context_properties* props,
                                     cl_gl_context_info param, std::string& error) {
    size_t size = 0;
    cl_int err = fn(props, param, 0, nullptr, &size);
    if (err != CL_SUCCESS) {
        error = "clGetGLContextInfoKHR: " + errorName(err);
        return {};
    }
    std::vector<cl_device_id> devices(size / sizeof(cl_device_id));
    if (devices.empty())
        return {};
    err = fn(props, param, devices.size() * sizeof(cl_device_id), devices.data(), nullptr);
    if (err != CL_SUCCESS) {
        error = "clGetGLContextInfoKHR: " + errorName(err);
        return {};
    }
    // A null entry is no device (seen from drivers that answer one slot for "none").
    devices.erase(std::remove(devices.begin(), devices.end(), nullptr), devices.end());
    return devices;
}

} // namespace

GLContextDevices queryGLContextDevices(const GLHandles& gl, cl_platform_id platform) {
    GLContextDevices out;
    out.platform = platform;
    if (!hasExtension(platformString(platform, CL_PLATFORM_EXTENSIONS), "cl_khr_gl_sharing")) {
        out.unsupported = "no cl_khr_gl_sharing";
        return out;
    }
    auto fn = reinterpret_cast<GetGLContextInfoFn>(
        clGetExtensionFunctionAddressForPlatform(platform, "clGetGLContextInfoKHR"));
    if (!fn) {
        out.unsupported = "cl_khr_gl_sharing listed but clGetGLContextInfoKHR not found";
        return out;
    }
    auto props = glContextProperties(gl, platform);
    out.current =
        askDevices(fn, props.data(), CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR, out.currentError);
    out.devices = askDevices(fn, props.data(), CL_DEVICES_FOR_GL_CONTEXT_KHR, out.devicesError);
    return out;
}

std::vector<cl_device_id> GLContextDevices::shareable() const {
    std::vector<cl_device_id> out = current;
    for (cl_device_id d : devices)
        if (std::find(out.begin(), out.end(), d) == out.end())
            out.push_back(d);
    return out;
}

std::string GLContextDevices::why() const {
    if (!unsupported.empty())
        return unsupported;
    if (!current.empty() || !devices.empty())
        return {};
    if (!devicesError.empty())
        return devicesError;
    if (!currentError.empty())
        return currentError;
    return "clGetGLContextInfoKHR: no device";
}

} // namespace duet::interop
