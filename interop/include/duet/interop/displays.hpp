// GPU and display enumeration: GPUs (libdrm), X screens with a GLX context on each, EGL devices
// with a GL context on each, and for every GL context the OpenCL devices that can share with it.
// Plain data, no X11/EGL/libdrm headers: the tool (duet-displays) and tests format it.
#pragma once

#include <CL/cl.h>

#include <string>
#include <vector>

namespace duet::interop {

/// One OpenCL device, by name.
struct ClDeviceName {
    std::string platform;
    std::string device;
    cl_device_type type = 0;
};

/// An ICD platform and its devices.
struct ClPlatformInfo {
    std::string name, vendor, version;
    bool glSharing = false; ///< lists cl_khr_gl_sharing
    std::vector<ClDeviceName> devices;
};

/// One platform's clGetGLContextInfoKHR answers for one GL context (interop's own query,
/// queryGLContextDevices, which Context::create picks devices with).
struct PlatformSharing {
    std::string platform;
    /// Empty when the platform was asked; else why not, e.g. "no cl_khr_gl_sharing".
    std::string unsupported;
    std::vector<ClDeviceName> current; ///< CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR
    std::string currentError;          ///< empty unless that query failed
    std::vector<ClDeviceName> devices; ///< CL_DEVICES_FOR_GL_CONTEXT_KHR
    std::string devicesError;
};

/// What a GL context made for the listing says about itself, and who can share with it.
struct GLContextReport {
    bool made = false; ///< a context was made and made current
    std::string error; ///< why none was made (made == false)
    std::string renderer, vendor, version;
    std::vector<PlatformSharing> sharing; ///< one entry per ICD platform
    /// True when some platform names at least one device (by either query).
    bool canShare() const;
};

/// A GPU that the kernel's DRM subsystem knows (/dev/dri), from drmGetDevices2.
struct Gpu {
    std::string bus;   ///< "pci", "usb", "platform", "host1x" or "unknown"
    std::string busId; ///< PCI: "0000:01:00.0"; empty for other buses
    unsigned vendorId = 0, deviceId = 0, subVendorId = 0, subDeviceId = 0; ///< PCI only
    std::string primaryNode, renderNode; ///< "/dev/dri/card0", "/dev/dri/renderD128" or empty
    std::string driver;      ///< kernel driver (drmGetVersion), e.g. "amdgpu", "nvidia-drm"
    std::string driverError; ///< why the driver is unknown (the node would not open, ...)
};

struct GpuList {
    std::vector<Gpu> gpus;
    /// Why the list is empty or incomplete ("no /dev/dri: no DRM devices"); empty when all went
    /// well. An empty list is not an error: machines without a GPU have none.
    std::string note;
};

/// One X screen of a display, with a GLX context made on it.
struct XScreen {
    std::string name; ///< ":N.i"
    int number = 0;
    int width = 0, height = 0, depth = 0;
    bool direct = false; ///< the GLX context renders directly (not through the X server)
    GLContextReport gl;
};

struct XDisplayReport {
    std::string name; ///< as asked (or $DISPLAY)
    bool opened = false;
    std::string error;      ///< why it did not open ("cannot open X display ':7'"), or GLX missing
    std::string glxVersion; ///< "1.4"
    std::vector<XScreen> screens;
};

/// One EGL device (EGL_EXT_device_enumeration), with a GL context on its platform display.
struct EglDevice {
    int index = 0;
    std::string drmDeviceFile;  ///< EGL_DRM_DEVICE_FILE_EXT, empty when it has none (software)
    std::string drmRenderNode;  ///< EGL_DRM_RENDER_NODE_FILE_EXT where listed
    std::string deviceRenderer; ///< EGL_RENDERER_EXT (EGL_EXT_device_query_name) where listed
    std::vector<std::string> extensions;
    int gpu = -1; ///< index into GpuList::gpus whose node matches, -1 when none
    std::string eglVendor, eglVersion;
    GLContextReport gl;
};

struct EglDeviceReport {
    /// Why there is no list (no EGL, no EGL_EXT_device_enumeration); empty when asked.
    std::string error;
    std::vector<EglDevice> devices;
};

/// Everything duet-displays prints.
struct DisplayReport {
    std::vector<ClPlatformInfo> platforms;
    std::string platformsError; ///< clGetPlatformIDs failed (not: "no platform")
    GpuList gpus;
    bool xAsked = false; ///< X was listed (a name was given or $DISPLAY is set)
    XDisplayReport x;
    bool eglAsked = false;
    EglDeviceReport egl;
    /// True when some GL context (X screen or EGL device) has a CL device to share with.
    bool anythingShares() const;
};

/// What enumerate() lists.
struct DisplayOptions {
    /// X display to list; empty: $DISPLAY, and no X listing when that is unset.
    std::string xDisplay;
    bool listX = true;
    bool listEgl = true;
};

/// Every ICD platform and its devices; throws Error when clGetPlatformIDs fails (no platform is
/// an empty list).
std::vector<ClPlatformInfo> listClPlatforms();

/// GPUs from libdrm; never throws.
GpuList listGpus();

/// Every screen of the X display `name` (empty: $DISPLAY) with a GLX context made on each (an
/// RGBA pbuffer config, or a tiny unmapped window where the screen has no pbuffers) and the CL
/// devices that can share with it. Failures are recorded per display and per screen; never throws.
/// Opens its own connections; calling thread only.
XDisplayReport listXScreens(const std::string& name);

/// Every EGL device with a GL context made on its platform display (surfaceless where the display
/// allows, else a 1x1 pbuffer), matched to `gpus` by DRM node. Displays this call initialised are
/// terminated again; ones already initialised (by the caller) are left alone. Never throws.
EglDeviceReport listEglDevices(const GpuList& gpus);

/// All of the above.
DisplayReport enumerateDisplays(const DisplayOptions& options);

} // namespace duet::interop
