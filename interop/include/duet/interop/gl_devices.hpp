// Which OpenCL devices can share with a GL context, asked of one platform through
// clGetGLContextInfoKHR: the one query Context::create picks devices with and duet-displays lists.
#pragma once

#include "duet/interop/interop.hpp"

#include <string>
#include <vector>

namespace duet::interop {

/// One platform's answer to clGetGLContextInfoKHR for one GL context. Plain data; a platform's
/// failure is recorded here, never thrown.
struct GLContextDevices {
    cl_platform_id platform = nullptr;
    /// Empty when the platform was asked; otherwise why it could not be: "no cl_khr_gl_sharing",
    /// or "cl_khr_gl_sharing listed but clGetGLContextInfoKHR not found".
    std::string unsupported;
    /// CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR: the device running the GL context (0 or 1 entries).
    std::vector<cl_device_id> current;
    /// That query's failure ("clGetGLContextInfoKHR: CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR"), or
    /// empty.
    std::string currentError;
    /// CL_DEVICES_FOR_GL_CONTEXT_KHR: every device that can share with the GL context.
    std::vector<cl_device_id> devices;
    /// That query's failure, or empty.
    std::string devicesError;

    /// The devices that can share, the current one first, each once.
    std::vector<cl_device_id> shareable() const;
    /// Why no device of this platform can share; empty when one can.
    std::string why() const;
};

/// Asks `platform` both queries about the GL context `gl` (its handles; the context need not be
/// current for Duet, but some drivers want it current, so callers make it so). The extension
/// function is found with clGetExtensionFunctionAddressForPlatform. Any thread.
GLContextDevices queryGLContextDevices(const GLHandles& gl, cl_platform_id platform);

/// The clGetGLContextInfoKHR / clCreateContext properties for `gl` on `platform`.
std::vector<cl_context_properties> glContextProperties(const GLHandles& gl,
                                                       cl_platform_id platform);

/// Every ICD platform; empty when the loader finds none (CL_PLATFORM_NOT_FOUND_KHR). Throws Error
/// on any other failure.
std::vector<cl_platform_id> platformIds();

/// A string platform / device query; empty when the query fails.
std::string platformString(cl_platform_id platform, cl_platform_info what);
/// As platformString, for a device.
std::string deviceString(cl_device_id device, cl_device_info what);

/// True when the space-separated `list` holds `word` as a whole entry.
bool hasExtension(const std::string& list, const std::string& word);

} // namespace duet::interop
