// GPU and display enumeration: libdrm for GPUs, GLX on each X screen, EGL device platform
// displays, and interop's own clGetGLContextInfoKHR query (gl_devices.cpp) for each GL context.
#include "duet/interop/displays.hpp"
#include "duet/interop/gl_devices.hpp"

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/glx.h>
#include <X11/Xlib.h>
#include <xf86drm.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace duet::interop {

bool GLContextReport::canShare() const {
    for (const PlatformSharing& p : sharing)
        if (!p.current.empty() || !p.devices.empty())
            return true;
    return false;
}

bool DisplayReport::anythingShares() const {
    for (const XScreen& s : x.screens)
        if (s.gl.canShare())
            return true;
    for (const EglDevice& d : egl.devices)
        if (d.gl.canShare())
            return true;
    return false;
}

namespace {

// GL entry points are looked up through the window system that made the context, so the
// listing needs no GL loader and works with glvnd's per-context dispatch.
using GetStringFn = const GLubyte* (*)(GLenum);

void readGLStrings(GetStringFn getString, GLContextReport& out) {
    auto text = [&](GLenum name) {
        const GLubyte* s = getString ? getString(name) : nullptr;
        return s ? std::string(reinterpret_cast<const char*>(s)) : std::string("(unknown)");
    };
    out.renderer = text(GL_RENDERER);
    out.vendor = text(GL_VENDOR);
    out.version = text(GL_VERSION);
}

ClDeviceName nameOf(cl_platform_id platform, cl_device_id device) {
    ClDeviceName n;
    n.platform = platformString(platform, CL_PLATFORM_NAME);
    n.device = deviceString(device, CL_DEVICE_NAME);
    clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof n.type, &n.type, nullptr);
    return n;
}

// Every platform's answer for one GL context, through the query Context::create uses.
std::vector<PlatformSharing> askPlatforms(const GLHandles& gl,
                                          const std::vector<cl_platform_id>& platforms) {
    std::vector<PlatformSharing> out;
    for (cl_platform_id platform : platforms) {
        GLContextDevices answer = queryGLContextDevices(gl, platform);
        PlatformSharing p;
        p.platform = platformString(platform, CL_PLATFORM_NAME);
        p.unsupported = answer.unsupported;
        p.currentError = answer.currentError;
        p.devicesError = answer.devicesError;
        for (cl_device_id d : answer.current)
            p.current.push_back(nameOf(platform, d));
        for (cl_device_id d : answer.devices)
            p.devices.push_back(nameOf(platform, d));
        out.push_back(std::move(p));
    }
    return out;
}

// The platforms to ask; a failing loader leaves the list empty (enumerateDisplays reports it).
std::vector<cl_platform_id> platformsOrNone() {
    try {
        return platformIds();
    } catch (const Error&) {
        return {};
    }
}

std::vector<std::string> splitWords(const char* list) {
    std::vector<std::string> out;
    std::string word;
    for (const char* c = list ? list : "";; ++c) {
        if (*c == ' ' || *c == '\0') {
            if (!word.empty())
                out.push_back(word);
            word.clear();
            if (*c == '\0')
                break;
        } else {
            word += *c;
        }
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// libdrm

const char* busName(int bustype) {
    switch (bustype) {
    case DRM_BUS_PCI:
        return "pci";
    case DRM_BUS_USB:
        return "usb";
    case DRM_BUS_PLATFORM:
        return "platform";
    case DRM_BUS_HOST1X:
        return "host1x";
    default:
        return "unknown";
    }
}

// The kernel driver behind a DRM node: drmGetVersion where the node opens (render nodes
// usually do for any user), else the sysfs driver link, which needs no permission.
void findDriver(Gpu& gpu) {
    for (const std::string& node : {gpu.renderNode, gpu.primaryNode}) {
        if (node.empty())
            continue;
        int fd = open(node.c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            gpu.driverError = "cannot open " + node + ": " + std::strerror(errno);
            continue;
        }
        drmVersionPtr version = drmGetVersion(fd);
        close(fd);
        if (version) {
            gpu.driver = std::string(version->name, size_t(version->name_len));
            drmFreeVersion(version);
            gpu.driverError.clear();
            return;
        }
        gpu.driverError = "drmGetVersion failed on " + node;
    }
    for (const std::string& node : {gpu.renderNode, gpu.primaryNode}) {
        if (node.empty())
            continue;
        std::string link = "/sys/class/drm/" + node.substr(node.rfind('/') + 1) + "/device/driver";
        char target[4096];
        ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
        if (n > 0) {
            target[n] = '\0';
            std::string path(target);
            gpu.driver = path.substr(path.rfind('/') + 1);
            gpu.driverError += " (driver from sysfs)";
            return;
        }
    }
    if (gpu.driverError.empty())
        gpu.driverError = "no DRM node to ask";
}

} // namespace

GpuList listGpus() {
    GpuList out;
    // Flags 0: no PCI revision, which would read config space and wake sleeping GPUs.
    int count = drmGetDevices2(0, nullptr, 0);
    if (count == -ENOENT) {
        out.note = "no /dev/dri: this machine has no DRM devices";
        return out;
    }
    if (count < 0) {
        out.note = std::string("drmGetDevices2: ") + std::strerror(-count);
        return out;
    }
    if (count == 0) {
        out.note = "no DRM devices in /dev/dri";
        return out;
    }
    std::vector<drmDevicePtr> devices(size_t(count), nullptr);
    count = drmGetDevices2(0, devices.data(), count);
    if (count < 0) {
        out.note = std::string("drmGetDevices2: ") + std::strerror(-count);
        return out;
    }
    for (int i = 0; i < count; ++i) {
        const drmDevice& d = *devices[size_t(i)];
        Gpu gpu;
        gpu.bus = busName(d.bustype);
        if (d.bustype == DRM_BUS_PCI && d.businfo.pci && d.deviceinfo.pci) {
            char id[32];
            std::snprintf(id, sizeof id, "%04x:%02x:%02x.%u", unsigned(d.businfo.pci->domain),
                          unsigned(d.businfo.pci->bus), unsigned(d.businfo.pci->dev),
                          unsigned(d.businfo.pci->func));
            gpu.busId = id;
            gpu.vendorId = d.deviceinfo.pci->vendor_id;
            gpu.deviceId = d.deviceinfo.pci->device_id;
            gpu.subVendorId = d.deviceinfo.pci->subvendor_id;
            gpu.subDeviceId = d.deviceinfo.pci->subdevice_id;
        }
        if (d.available_nodes & (1 << DRM_NODE_PRIMARY))
            gpu.primaryNode = d.nodes[DRM_NODE_PRIMARY];
        if (d.available_nodes & (1 << DRM_NODE_RENDER))
            gpu.renderNode = d.nodes[DRM_NODE_RENDER];
        findDriver(gpu);
        out.gpus.push_back(std::move(gpu));
    }
    drmFreeDevices(devices.data(), count);
    return out;
}

// ---------------------------------------------------------------------------------------------
// X screens and GLX

namespace {

// Xlib's default error handler exits the process; while GLX objects are made on a foreign
// screen an X error must become a per-screen message instead. Xlib's handler is process-wide:
// calling thread only, and nested traps restore in order.
class XErrorTrap {
public:
    explicit XErrorTrap(Display* dpy) : m_dpy(dpy) {
        XSync(m_dpy, False);
        s_error.clear();
        m_previous = XSetErrorHandler(&XErrorTrap::handler);
    }
    ~XErrorTrap() {
        XSync(m_dpy, False);
        XSetErrorHandler(m_previous);
    }
    /// The first X error since the trap was set (or since the last take), after a round trip.
    std::string take() {
        XSync(m_dpy, False);
        std::string e = s_error;
        s_error.clear();
        return e;
    }

private:
    static int handler(Display* dpy, XErrorEvent* event) {
        if (s_error.empty()) {
            char text[256] = {};
            XGetErrorText(dpy, event->error_code, text, sizeof text);
            s_error = "X error: " + std::string(text) + " (request " +
                      std::to_string(int(event->request_code)) + "." +
                      std::to_string(int(event->minor_code)) + ")";
        }
        return 0;
    }
    static inline std::string s_error;
    Display* m_dpy;
    int (*m_previous)(Display*, XErrorEvent*) = nullptr;
};

// ":7.1" -> ":7"; "host:10.0" -> "host:10"; a name without a screen part stays as it is.
std::string withoutScreen(const std::string& name) {
    size_t colon = name.rfind(':');
    if (colon == std::string::npos)
        return name;
    size_t dot = name.find('.', colon);
    return dot == std::string::npos ? name : name.substr(0, dot);
}

// A GLX context on the default screen of `dpy`, current on a pbuffer (or an unmapped 1x1 window
// where the screen has no pbuffer configs), then the GL strings and the CL answers.
void probeScreen(Display* dpy, XScreen& screen, const std::vector<cl_platform_id>& platforms) {
    XErrorTrap trap(dpy);
    int scr = DefaultScreen(dpy);
    const int pbufferAttrs[] = {GLX_DRAWABLE_TYPE,
                                GLX_PBUFFER_BIT,
                                GLX_RENDER_TYPE,
                                GLX_RGBA_BIT,
                                GLX_RED_SIZE,
                                1,
                                GLX_GREEN_SIZE,
                                1,
                                GLX_BLUE_SIZE,
                                1,
                                None};
    const int windowAttrs[] = {GLX_DRAWABLE_TYPE,
                               GLX_WINDOW_BIT,
                               GLX_RENDER_TYPE,
                               GLX_RGBA_BIT,
                               GLX_X_RENDERABLE,
                               True,
                               None};
    bool pbuffer = true;
    int n = 0;
    GLXFBConfig* configs = glXChooseFBConfig(dpy, scr, pbufferAttrs, &n);
    if (!configs || n < 1) {
        if (configs)
            XFree(configs);
        pbuffer = false;
        configs = glXChooseFBConfig(dpy, scr, windowAttrs, &n);
    }
    if (!configs || n < 1) {
        if (configs)
            XFree(configs);
        std::string x = trap.take();
        screen.gl.error = "no RGBA GLX framebuffer config on this screen" +
                          (x.empty() ? std::string() : ": " + x);
        return;
    }
    GLXFBConfig config = configs[0];
    XFree(configs);

    GLXContext context = glXCreateNewContext(dpy, config, GLX_RGBA_TYPE, nullptr, True);
    std::string x = trap.take();
    if (!context || !x.empty()) {
        if (context)
            glXDestroyContext(dpy, context);
        screen.gl.error = "glXCreateNewContext failed" + (x.empty() ? std::string() : ": " + x);
        return;
    }
    GLXDrawable drawable = 0;
    Window window = 0;
    Colormap colormap = 0;
    if (pbuffer) {
        const int size[] = {GLX_PBUFFER_WIDTH, 1, GLX_PBUFFER_HEIGHT, 1, None};
        drawable = glXCreatePbuffer(dpy, config, size);
    } else if (XVisualInfo* visual = glXGetVisualFromFBConfig(dpy, config)) {
        colormap = XCreateColormap(dpy, RootWindow(dpy, scr), visual->visual, AllocNone);
        XSetWindowAttributes wa = {};
        wa.colormap = colormap;
        window = XCreateWindow(dpy, RootWindow(dpy, scr), 0, 0, 1, 1, 0, visual->depth, InputOutput,
                               visual->visual, CWColormap | CWBorderPixel, &wa);
        XFree(visual);
        drawable = glXCreateWindow(dpy, config, window, nullptr);
    }
    x = trap.take();
    if (drawable && x.empty() && glXMakeContextCurrent(dpy, drawable, drawable, context) &&
        (x = trap.take()).empty()) {
        screen.gl.made = true;
        screen.direct = glXIsDirect(dpy, context);
        readGLStrings(reinterpret_cast<GetStringFn>(
                          glXGetProcAddressARB(reinterpret_cast<const GLubyte*>("glGetString"))),
                      screen.gl);
        GLHandles gl{GLHandles::Api::Glx, dpy, context};
        screen.gl.sharing = askPlatforms(gl, platforms);
        glXMakeContextCurrent(dpy, None, None, nullptr);
    } else {
        screen.gl.error = std::string(drawable  ? "glXMakeContextCurrent failed"
                                      : pbuffer ? "glXCreatePbuffer failed"
                                                : "no window for the GLX config") +
                          (x.empty() ? std::string() : ": " + x);
    }
    if (drawable)
        pbuffer ? glXDestroyPbuffer(dpy, drawable) : glXDestroyWindow(dpy, drawable);
    if (window)
        XDestroyWindow(dpy, window);
    if (colormap)
        XFreeColormap(dpy, colormap);
    glXDestroyContext(dpy, context);
    trap.take();
}

XDisplayReport listX(const std::string& asked, const std::vector<cl_platform_id>& platforms) {
    XDisplayReport out;
    const char* env = std::getenv("DISPLAY");
    out.name = !asked.empty() ? asked : env ? env : "";
    if (out.name.empty()) {
        out.error = "no X display named and DISPLAY is not set";
        return out;
    }
    Display* dpy = XOpenDisplay(out.name.c_str());
    if (!dpy) {
        out.error = "cannot open X display '" + out.name +
                    "' (no X server there, or access refused: check DISPLAY and xauth)";
        return out;
    }
    out.opened = true;
    int errorBase = 0, eventBase = 0, major = 0, minor = 0;
    if (!glXQueryExtension(dpy, &errorBase, &eventBase) || !glXQueryVersion(dpy, &major, &minor)) {
        out.error = "X display '" + out.name + "' has no GLX extension";
    } else {
        out.glxVersion = std::to_string(major) + "." + std::to_string(minor);
        if (major == 1 && minor < 3)
            out.error = "GLX " + out.glxVersion + " on '" + out.name +
                        "' has no framebuffer configs (GLX 1.3 needed)";
    }
    std::string base = withoutScreen(DisplayString(dpy));
    int screens = ScreenCount(dpy);
    for (int i = 0; i < screens; ++i) {
        XScreen screen;
        screen.number = i;
        screen.name = base + "." + std::to_string(i);
        screen.width = DisplayWidth(dpy, i);
        screen.height = DisplayHeight(dpy, i);
        screen.depth = DefaultDepth(dpy, i);
        if (!out.error.empty()) {
            screen.gl.error = out.error;
        } else if (Display* own = XOpenDisplay(screen.name.c_str())) {
            // Its own connection, as an application on that screen would have: DefaultScreen is
            // this screen, and a CL implementation that looks at it sees the right one.
            probeScreen(own, screen, platforms);
            XCloseDisplay(own);
        } else {
            screen.gl.error = "cannot open X display '" + screen.name + "'";
        }
        out.screens.push_back(std::move(screen));
    }
    XCloseDisplay(dpy);
    return out;
}

// ---------------------------------------------------------------------------------------------
// EGL devices

std::string eglErrorName(EGLint e) {
    switch (e) {
#define DUET_CASE(x)                                                                               \
    case x:                                                                                        \
        return #x;
        DUET_CASE(EGL_SUCCESS)
        DUET_CASE(EGL_NOT_INITIALIZED)
        DUET_CASE(EGL_BAD_ACCESS)
        DUET_CASE(EGL_BAD_ALLOC)
        DUET_CASE(EGL_BAD_ATTRIBUTE)
        DUET_CASE(EGL_BAD_CONFIG)
        DUET_CASE(EGL_BAD_CONTEXT)
        DUET_CASE(EGL_BAD_CURRENT_SURFACE)
        DUET_CASE(EGL_BAD_DISPLAY)
        DUET_CASE(EGL_BAD_MATCH)
        DUET_CASE(EGL_BAD_NATIVE_PIXMAP)
        DUET_CASE(EGL_BAD_NATIVE_WINDOW)
        DUET_CASE(EGL_BAD_PARAMETER)
        DUET_CASE(EGL_BAD_SURFACE)
        DUET_CASE(EGL_CONTEXT_LOST)
        DUET_CASE(EGL_BAD_DEVICE_EXT)
#undef DUET_CASE
    default: {
        char text[32];
        std::snprintf(text, sizeof text, "EGL error 0x%04x", unsigned(e));
        return text;
    }
    }
}

bool listed(const std::vector<std::string>& words, const char* word) {
    for (const std::string& w : words)
        if (w == word)
            return true;
    return false;
}

struct EglFunctions {
    PFNEGLQUERYDEVICESEXTPROC queryDevices = nullptr;
    PFNEGLQUERYDEVICESTRINGEXTPROC queryDeviceString = nullptr;
    PFNEGLGETPLATFORMDISPLAYEXTPROC getPlatformDisplay = nullptr;
};

// A GL context on the device's platform display: surfaceless where the display has
// EGL_KHR_surfaceless_context (Mesa, NVIDIA), else on a 1x1 pbuffer.
void probeEglDevice(const EglFunctions& fn, EGLDeviceEXT device, EglDevice& out,
                    const std::vector<cl_platform_id>& platforms) {
    if (!fn.getPlatformDisplay) {
        out.gl.error = "no EGL_EXT_platform_device: no display can be made on a device";
        return;
    }
    EGLDisplay dpy = fn.getPlatformDisplay(EGL_PLATFORM_DEVICE_EXT, device, nullptr);
    if (dpy == EGL_NO_DISPLAY) {
        out.gl.error = "eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT) failed: " +
                       eglErrorName(eglGetError());
        return;
    }
    // A display the caller already initialised is shared with it: leave it initialised.
    bool wasInitialised = eglQueryString(dpy, EGL_VERSION) != nullptr;
    eglGetError();
    EGLint major = 0, minor = 0;
    if (!eglInitialize(dpy, &major, &minor)) {
        out.gl.error = "eglInitialize failed: " + eglErrorName(eglGetError());
        return;
    }
    const char* vendor = eglQueryString(dpy, EGL_VENDOR);
    const char* version = eglQueryString(dpy, EGL_VERSION);
    out.eglVendor = vendor ? vendor : "";
    out.eglVersion = version ? version : "";
    std::vector<std::string> displayExtensions = splitWords(eglQueryString(dpy, EGL_EXTENSIONS));
    bool surfaceless = listed(displayExtensions, "EGL_KHR_surfaceless_context");

    EGLContext context = EGL_NO_CONTEXT;
    EGLSurface surface = EGL_NO_SURFACE;
    auto finish = [&](std::string error) {
        if (!error.empty())
            out.gl.error = error + ": " + eglErrorName(eglGetError());
        eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        if (surface != EGL_NO_SURFACE)
            eglDestroySurface(dpy, surface);
        if (context != EGL_NO_CONTEXT)
            eglDestroyContext(dpy, context);
        if (!wasInitialised)
            eglTerminate(dpy);
    };
    if (!eglBindAPI(EGL_OPENGL_API))
        return finish("eglBindAPI(EGL_OPENGL_API) failed (no desktop OpenGL on this device)");
    const EGLint pbufferAttrs[] = {EGL_SURFACE_TYPE,
                                   EGL_PBUFFER_BIT,
                                   EGL_RENDERABLE_TYPE,
                                   EGL_OPENGL_BIT,
                                   EGL_RED_SIZE,
                                   1,
                                   EGL_GREEN_SIZE,
                                   1,
                                   EGL_BLUE_SIZE,
                                   1,
                                   EGL_NONE};
    const EGLint anyAttrs[] = {EGL_SURFACE_TYPE, EGL_DONT_CARE, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                               EGL_NONE};
    EGLConfig config = nullptr;
    EGLint n = 0;
    bool pbuffer = eglChooseConfig(dpy, pbufferAttrs, &config, 1, &n) && n > 0;
    if (!pbuffer && !(surfaceless && eglChooseConfig(dpy, anyAttrs, &config, 1, &n) && n > 0))
        return finish("no OpenGL EGL config with a pbuffer on this device");
    context = eglCreateContext(dpy, config, EGL_NO_CONTEXT, nullptr);
    if (context == EGL_NO_CONTEXT)
        return finish("eglCreateContext failed");
    if (!surfaceless) {
        const EGLint size[] = {EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE};
        surface = eglCreatePbufferSurface(dpy, config, size);
        if (surface == EGL_NO_SURFACE)
            return finish("eglCreatePbufferSurface failed");
    }
    if (!eglMakeCurrent(dpy, surface, surface, context))
        return finish(surfaceless ? "eglMakeCurrent (surfaceless) failed"
                                  : "eglMakeCurrent failed");
    out.gl.made = true;
    readGLStrings(reinterpret_cast<GetStringFn>(eglGetProcAddress("glGetString")), out.gl);
    GLHandles gl{GLHandles::Api::Egl, dpy, context};
    out.gl.sharing = askPlatforms(gl, platforms);
    finish({});
}

EglDeviceReport listEgl(const GpuList& gpus, const std::vector<cl_platform_id>& platforms) {
    EglDeviceReport out;
    const char* client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    if (!client) {
        out.error = "EGL has no client extensions (EGL_EXT_client_extensions): no device list";
        return out;
    }
    std::vector<std::string> clientExtensions = splitWords(client);
    if (!listed(clientExtensions, "EGL_EXT_device_enumeration") &&
        !listed(clientExtensions, "EGL_EXT_device_base")) {
        out.error = "EGL lacks EGL_EXT_device_enumeration: no device list";
        return out;
    }
    EglFunctions fn;
    fn.queryDevices =
        reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    fn.queryDeviceString = reinterpret_cast<PFNEGLQUERYDEVICESTRINGEXTPROC>(
        eglGetProcAddress("eglQueryDeviceStringEXT"));
    if (listed(clientExtensions, "EGL_EXT_platform_device"))
        fn.getPlatformDisplay = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
            eglGetProcAddress("eglGetPlatformDisplayEXT"));
    if (!fn.queryDevices || !fn.queryDeviceString) {
        out.error = "eglQueryDevicesEXT or eglQueryDeviceStringEXT not found";
        return out;
    }
    EGLint count = 0;
    if (!fn.queryDevices(0, nullptr, &count)) {
        out.error = "eglQueryDevicesEXT failed: " + eglErrorName(eglGetError());
        return out;
    }
    std::vector<EGLDeviceEXT> devices(size_t(count > 0 ? count : 0));
    if (count > 0 && !fn.queryDevices(count, devices.data(), &count)) {
        out.error = "eglQueryDevicesEXT failed: " + eglErrorName(eglGetError());
        return out;
    }
    devices.resize(size_t(count > 0 ? count : 0));
    for (size_t i = 0; i < devices.size(); ++i) {
        EglDevice d;
        d.index = int(i);
        d.extensions = splitWords(fn.queryDeviceString(devices[i], EGL_EXTENSIONS));
        auto text = [&](EGLint name) {
            const char* s = fn.queryDeviceString(devices[i], name);
            eglGetError(); // a device without the string answers EGL_BAD_PARAMETER
            return s ? std::string(s) : std::string();
        };
        if (listed(d.extensions, "EGL_EXT_device_drm"))
            d.drmDeviceFile = text(EGL_DRM_DEVICE_FILE_EXT);
        if (listed(d.extensions, "EGL_EXT_device_drm_render_node"))
            d.drmRenderNode = text(EGL_DRM_RENDER_NODE_FILE_EXT);
        if (listed(d.extensions, "EGL_EXT_device_query_name"))
            d.deviceRenderer = text(EGL_RENDERER_EXT);
        for (size_t g = 0; g < gpus.gpus.size() && d.gpu < 0; ++g) {
            const Gpu& gpu = gpus.gpus[g];
            if ((!d.drmDeviceFile.empty() && d.drmDeviceFile == gpu.primaryNode) ||
                (!d.drmRenderNode.empty() && d.drmRenderNode == gpu.renderNode))
                d.gpu = int(g);
        }
        probeEglDevice(fn, devices[i], d, platforms);
        out.devices.push_back(std::move(d));
    }
    return out;
}

} // namespace

std::vector<ClPlatformInfo> listClPlatforms() {
    std::vector<ClPlatformInfo> out;
    for (cl_platform_id platform : platformIds()) {
        ClPlatformInfo p;
        p.name = platformString(platform, CL_PLATFORM_NAME);
        p.vendor = platformString(platform, CL_PLATFORM_VENDOR);
        p.version = platformString(platform, CL_PLATFORM_VERSION);
        p.glSharing =
            hasExtension(platformString(platform, CL_PLATFORM_EXTENSIONS), "cl_khr_gl_sharing");
        cl_uint n = 0;
        if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) == CL_SUCCESS && n) {
            std::vector<cl_device_id> devices(n);
            if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, devices.data(), nullptr) ==
                CL_SUCCESS)
                for (cl_device_id d : devices)
                    p.devices.push_back(nameOf(platform, d));
        }
        out.push_back(std::move(p));
    }
    return out;
}

XDisplayReport listXScreens(const std::string& name) {
    return listX(name, platformsOrNone());
}

EglDeviceReport listEglDevices(const GpuList& gpus) {
    return listEgl(gpus, platformsOrNone());
}

DisplayReport enumerateDisplays(const DisplayOptions& options) {
    DisplayReport out;
    try {
        out.platforms = listClPlatforms();
    } catch (const Error& e) {
        out.platformsError = e.what();
    }
    std::vector<cl_platform_id> platforms = platformsOrNone();
    out.gpus = listGpus();
    const char* env = std::getenv("DISPLAY");
    out.xAsked = options.listX && (!options.xDisplay.empty() || (env && *env));
    if (out.xAsked)
        out.x = listX(options.xDisplay, platforms);
    out.eglAsked = options.listEgl;
    if (out.eglAsked)
        out.egl = listEgl(out.gpus, platforms);
    return out;
}

} // namespace duet::interop
