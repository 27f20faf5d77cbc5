// The table and JSON forms of a DisplayReport (duet-displays' output).
#include "report_format.hpp"

#include <algorithm>
#include <cstdio>

namespace duet::displays {

using interop::ClDeviceName;
using interop::DisplayReport;
using interop::GLContextReport;
using interop::PlatformSharing;
using json = nlohmann::ordered_json;

std::string deviceTypeName(cl_device_type type) {
    std::string out;
    auto add = [&](cl_device_type bit, const char* name) {
        if (type & bit)
            out += (out.empty() ? "" : "|") + std::string(name);
    };
    add(CL_DEVICE_TYPE_CPU, "CPU");
    add(CL_DEVICE_TYPE_GPU, "GPU");
    add(CL_DEVICE_TYPE_ACCELERATOR, "ACCELERATOR");
    add(CL_DEVICE_TYPE_CUSTOM, "CUSTOM");
    return out.empty() ? "DEFAULT" : out;
}

namespace {

json orNull(const std::string& s) {
    return s.empty() ? json(nullptr) : json(s);
}

std::string hex4(unsigned v) {
    char text[8];
    std::snprintf(text, sizeof text, "%04x", v & 0xffff);
    return text;
}

json devicesJson(const std::vector<ClDeviceName>& devices) {
    json out = json::array();
    for (const ClDeviceName& d : devices)
        out.push_back(
            {{"platform", d.platform}, {"name", d.device}, {"type", deviceTypeName(d.type)}});
    return out;
}

json glJson(const GLContextReport& gl) {
    json sharing = json::array();
    for (const PlatformSharing& p : gl.sharing)
        sharing.push_back(
            {{"platform", p.platform},
             {"unsupported", orNull(p.unsupported)},
             {"current", {{"devices", devicesJson(p.current)}, {"error", orNull(p.currentError)}}},
             {"devices",
              {{"devices", devicesJson(p.devices)}, {"error", orNull(p.devicesError)}}}});
    return {{"made", gl.made},
            {"error", orNull(gl.error)},
            {"renderer", orNull(gl.renderer)},
            {"vendor", orNull(gl.vendor)},
            {"version", orNull(gl.version)},
            {"can_share", gl.canShare()},
            {"sharing", sharing}};
}

// Every GL context the report made, with its label ("X screen :1.0", "EGL device 0").
std::vector<std::pair<std::string, const GLContextReport*>> glContexts(const DisplayReport& r) {
    std::vector<std::pair<std::string, const GLContextReport*>> out;
    for (const auto& s : r.x.screens)
        out.emplace_back("X screen " + s.name, &s.gl);
    for (const auto& d : r.egl.devices)
        out.emplace_back("EGL device " + std::to_string(d.index), &d.gl);
    return out;
}

std::string pad(const std::string& s, size_t width) {
    return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string deviceList(const std::vector<ClDeviceName>& devices) {
    std::string out;
    for (const ClDeviceName& d : devices)
        out += (out.empty() ? "" : ", ") + d.device + " [" + deviceTypeName(d.type) + "]";
    return out;
}

// One query's answer: the devices, "none", or the error.
std::string answer(const std::vector<ClDeviceName>& devices, const std::string& error) {
    if (!error.empty())
        return "error (" + error + ")";
    return devices.empty() ? "none" : deviceList(devices);
}

// The GL lines and one "CL <platform>" line per platform for a context, indented by four.
void glBlock(std::string& out, const GLContextReport& gl) {
    if (!gl.made) {
        out += "    no GL context: " + gl.error + "\n";
        return;
    }
    out += "    GL renderer  " + gl.renderer + "\n";
    out += "    GL vendor    " + gl.vendor + "\n";
    out += "    GL version   " + gl.version + "\n";
    if (gl.sharing.empty()) {
        out += "    CL           no OpenCL platform to ask\n";
        return;
    }
    size_t width = 0;
    for (const PlatformSharing& p : gl.sharing)
        width = std::max(width, p.platform.size());
    for (const PlatformSharing& p : gl.sharing) {
        out += "    CL " + pad(p.platform, width) + "  ";
        if (!p.unsupported.empty())
            out += p.unsupported + "\n";
        else
            out += "current: " + answer(p.current, p.currentError) +
                   "; devices: " + answer(p.devices, p.devicesError) + "\n";
    }
}

} // namespace

json toJson(const DisplayReport& r) {
    json platforms = json::array();
    for (const auto& p : r.platforms)
        platforms.push_back({{"name", p.name},
                             {"vendor", p.vendor},
                             {"version", p.version},
                             {"gl_sharing", p.glSharing},
                             {"devices", devicesJson(p.devices)}});
    json gpus = json::array();
    for (const auto& g : r.gpus.gpus)
        gpus.push_back(
            {{"bus", g.bus},
             {"bus_id", orNull(g.busId)},
             {"vendor_id", g.bus == "pci" ? json(hex4(g.vendorId)) : json(nullptr)},
             {"device_id", g.bus == "pci" ? json(hex4(g.deviceId)) : json(nullptr)},
             {"subvendor_id", g.bus == "pci" ? json(hex4(g.subVendorId)) : json(nullptr)},
             {"subdevice_id", g.bus == "pci" ? json(hex4(g.subDeviceId)) : json(nullptr)},
             {"primary_node", orNull(g.primaryNode)},
             {"render_node", orNull(g.renderNode)},
             {"driver", orNull(g.driver)},
             {"driver_error", orNull(g.driverError)}});
    json x = nullptr;
    if (r.xAsked) {
        json screens = json::array();
        for (const auto& s : r.x.screens)
            screens.push_back({{"name", s.name},
                               {"number", s.number},
                               {"width", s.width},
                               {"height", s.height},
                               {"depth", s.depth},
                               {"direct", s.direct},
                               {"gl", glJson(s.gl)}});
        x = {{"display", r.x.name},
             {"opened", r.x.opened},
             {"error", orNull(r.x.error)},
             {"glx_version", orNull(r.x.glxVersion)},
             {"screens", screens}};
    }
    json egl = nullptr;
    if (r.eglAsked) {
        json devices = json::array();
        for (const auto& d : r.egl.devices)
            devices.push_back({{"index", d.index},
                               {"drm_device_file", orNull(d.drmDeviceFile)},
                               {"drm_render_node", orNull(d.drmRenderNode)},
                               {"renderer", orNull(d.deviceRenderer)},
                               {"extensions", d.extensions},
                               {"gpu", d.gpu >= 0 ? json(d.gpu) : json(nullptr)},
                               {"egl_vendor", orNull(d.eglVendor)},
                               {"egl_version", orNull(d.eglVersion)},
                               {"gl", glJson(d.gl)}});
        egl = {{"error", orNull(r.egl.error)}, {"devices", devices}};
    }
    auto contexts = glContexts(r);
    size_t made = 0, sharing = 0;
    for (const auto& c : contexts) {
        made += c.second->made;
        sharing += c.second->canShare();
    }
    return {{"platforms", platforms},
            {"platforms_error", orNull(r.platformsError)},
            {"gpus", {{"note", orNull(r.gpus.note)}, {"list", gpus}}},
            {"x", x},
            {"egl", egl},
            {"gl_contexts", made},
            {"gl_contexts_sharing", sharing},
            {"any_sharing", r.anythingShares()}};
}

std::string toTable(const DisplayReport& r) {
    std::string out = "OpenCL platforms\n";
    if (!r.platformsError.empty())
        out += "  error: " + r.platformsError + "\n";
    else if (r.platforms.empty())
        out += "  none (the ICD loader found no platform)\n";
    size_t width = 0;
    for (const auto& p : r.platforms)
        width = std::max(width, p.name.size());
    for (const auto& p : r.platforms)
        out += "  " + pad(p.name, width) + "  " +
               pad(p.glSharing ? "cl_khr_gl_sharing" : "no cl_khr_gl_sharing", 20) + "  " +
               (p.devices.empty() ? std::string("no devices") : deviceList(p.devices)) + "\n";

    out += "\nGPUs (libdrm)\n";
    if (r.gpus.gpus.empty())
        out += "  none" + (r.gpus.note.empty() ? std::string() : ": " + r.gpus.note) + "\n";
    else {
        out += "  #  bus           vendor:device  driver          nodes\n";
        for (size_t i = 0; i < r.gpus.gpus.size(); ++i) {
            const auto& g = r.gpus.gpus[i];
            std::string id = g.bus == "pci" ? hex4(g.vendorId) + ":" + hex4(g.deviceId) : "-";
            std::string bus = g.busId.empty() ? g.bus : g.busId;
            std::string driver = g.driver.empty() ? "?" : g.driver;
            out += "  " + pad(std::to_string(i), 2) + " " + pad(bus, 13) + " " + pad(id, 14) + " " +
                   pad(driver, 15) + " " + g.primaryNode +
                   (g.renderNode.empty() ? "" : " " + g.renderNode) +
                   (g.driverError.empty() ? "" : "  (" + g.driverError + ")") + "\n";
        }
        if (!r.gpus.note.empty())
            out += "  note: " + r.gpus.note + "\n";
    }

    if (r.xAsked) {
        out += "\nX display " + r.x.name;
        if (!r.x.glxVersion.empty())
            out += " (GLX " + r.x.glxVersion + ", " + std::to_string(r.x.screens.size()) +
                   (r.x.screens.size() == 1 ? " screen)" : " screens)");
        out += "\n";
        if (!r.x.opened)
            out += "  error: " + r.x.error + "\n";
        for (const auto& s : r.x.screens) {
            out += "  screen " + s.name + "  " + std::to_string(s.width) + "x" +
                   std::to_string(s.height) + "x" + std::to_string(s.depth) +
                   (s.gl.made ? (s.direct ? "  direct rendering" : "  indirect rendering") : "") +
                   "\n";
            glBlock(out, s.gl);
        }
    } else {
        out += "\nX display: not listed (DISPLAY is not set; --display NAME lists one)\n";
    }

    if (r.eglAsked) {
        out += "\nEGL devices (EGL_EXT_device_enumeration)\n";
        if (!r.egl.error.empty())
            out += "  error: " + r.egl.error + "\n";
        else if (r.egl.devices.empty())
            out += "  none\n";
        for (const auto& d : r.egl.devices) {
            std::string node = !d.drmDeviceFile.empty()   ? d.drmDeviceFile
                               : !d.drmRenderNode.empty() ? d.drmRenderNode
                                                          : "no DRM node";
            out += "  device " + std::to_string(d.index) + "  " + node;
            if (d.gpu >= 0)
                out += " (GPU " + std::to_string(d.gpu) + ")";
            if (!d.deviceRenderer.empty())
                out += "  " + d.deviceRenderer;
            out += "\n    extensions   ";
            for (size_t i = 0; i < d.extensions.size(); ++i)
                out += (i ? " " : "") + d.extensions[i];
            out += "\n";
            if (!d.eglVendor.empty())
                out += "    EGL          " + d.eglVendor + " " + d.eglVersion + "\n";
            glBlock(out, d.gl);
        }
    }

    auto contexts = glContexts(r);
    size_t made = 0, sharing = 0;
    for (const auto& c : contexts) {
        made += c.second->made;
        sharing += c.second->canShare();
    }
    out +=
        "\nSummary: " + std::to_string(made) + " GL context" + (made == 1 ? "" : "s") + " made; ";
    if (made == 0)
        out += "no GL context to share with.\n";
    else if (sharing == 0)
        out += "no OpenCL device can share with any of them (see the CL lines above).\n";
    else
        out += std::to_string(sharing) + " can share with an OpenCL device.\n";
    return out;
}

} // namespace duet::displays
