// A GL context on an NVIDIA GPU's EGL device, for the tests that run on a GPU host
// (nvidia_gl_gpu_test, nvidia_gl_two_gpu_test): EGL_EXT_device_enumeration lists the devices,
// EGL_NV_device_cuda says which CUDA device each one is. Include after <EGL/egl.h>,
// <EGL/eglext.h> and the GL headers.
#pragma once

#include <CL/cl_gl.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace duet::test {

/// The EGL devices that are CUDA devices (EGL_NV_device_cuda), with their CUDA ordinals; every
/// EGL device (ordinal -1) with DUET_TEST_EGL_ANY (Mesa with the fake driver).
struct EglGpu {
    EGLDeviceEXT device = nullptr;
    int cudaDevice = -1;
};

inline std::vector<EglGpu> eglGpus() {
    auto queryDevices =
        reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    auto deviceString = reinterpret_cast<PFNEGLQUERYDEVICESTRINGEXTPROC>(
        eglGetProcAddress("eglQueryDeviceStringEXT"));
    auto deviceAttrib = reinterpret_cast<PFNEGLQUERYDEVICEATTRIBEXTPROC>(
        eglGetProcAddress("eglQueryDeviceAttribEXT"));
    std::vector<EglGpu> out;
    EGLDeviceEXT devices[16];
    EGLint n = 0;
    if (!queryDevices || !deviceString || !deviceAttrib || !queryDevices(16, devices, &n))
        return out;
    const bool any = std::getenv("DUET_TEST_EGL_ANY") != nullptr;
    for (EGLint i = 0; i < n; ++i) {
        const char* ext = deviceString(devices[i], EGL_EXTENSIONS);
        EGLAttrib ordinal = -1;
        if (ext && std::strstr(ext, "EGL_NV_device_cuda"))
            deviceAttrib(devices[i], EGL_CUDA_DEVICE_NV, &ordinal);
        else if (!any)
            continue;
        out.push_back({devices[i], int(ordinal)});
    }
    return out;
}

/// A current GL 3.3 core context and its display.
struct EglGpuContext {
    EGLDisplay display = EGL_NO_DISPLAY;
    EGLContext context = EGL_NO_CONTEXT;
    std::string renderer;
    int cudaDevice = -1; ///< the CUDA ordinal of the GPU that runs it (-1: not a CUDA device)

    /// CL context properties that share with it, on `platform`.
    std::vector<cl_context_properties> properties(cl_platform_id platform) const {
        return {CL_CONTEXT_PLATFORM,
                cl_context_properties(platform),
                CL_GL_CONTEXT_KHR,
                cl_context_properties(context),
                CL_EGL_DISPLAY_KHR,
                cl_context_properties(display),
                0};
    }
};

/// Makes `out` current on the EGL device of CUDA device `cudaDevice` (-1: the first EGL device
/// that gives a context); empty on success, else why not.
inline std::string makeEglGpuContext(EglGpuContext& out, int cudaDevice = -1) {
    auto platformDisplay = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
        eglGetProcAddress("eglGetPlatformDisplayEXT"));
    if (!platformDisplay)
        return "no EGL_EXT_platform_device";
    std::vector<EglGpu> gpus = eglGpus();
    if (gpus.empty())
        return "no EGL device with EGL_NV_device_cuda (EGL_EXT_device_enumeration)";
    for (const EglGpu& gpu : gpus) {
        if (cudaDevice >= 0 && gpu.cudaDevice != cudaDevice)
            continue;
        EGLDisplay dpy = platformDisplay(EGL_PLATFORM_DEVICE_EXT, gpu.device, nullptr);
        if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, nullptr, nullptr))
            continue;
        eglBindAPI(EGL_OPENGL_API);
        const EGLint configAttrs[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE,
                                      EGL_OPENGL_BIT, EGL_NONE};
        EGLConfig config = nullptr;
        EGLint configs = 0;
        eglChooseConfig(dpy, configAttrs, &config, 1, &configs);
        const EGLint attrs[] = {EGL_CONTEXT_MAJOR_VERSION,
                                3,
                                EGL_CONTEXT_MINOR_VERSION,
                                3,
                                EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                EGL_NONE};
        EGLContext ctx =
            eglCreateContext(dpy, configs ? config : EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attrs);
        if (ctx == EGL_NO_CONTEXT)
            continue;
        if (!eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
            eglDestroyContext(dpy, ctx);
            continue;
        }
        out.display = dpy;
        out.context = ctx;
        out.renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
        out.cudaDevice = gpu.cudaDevice;
        return {};
    }
    return cudaDevice >= 0 ? "the EGL device of CUDA device " + std::to_string(cudaDevice) +
                                 " gives no current GL 3.3 context"
                           : "no EGL device with EGL_NV_device_cuda gives a current GL 3.3 context";
}

} // namespace duet::test
