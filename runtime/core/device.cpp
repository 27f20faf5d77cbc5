// The Duet platform singleton and its devices, chosen by DUET_DEVICES.
#include "core/device.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace duet::rt {

Device::Device(Platform* platform, std::unique_ptr<DeviceBackend> backend, DeviceInfo info)
    : _cl_device_id(kTag), m_platform(platform), m_backend(std::move(backend)),
      m_info(std::move(info)) {}

bool Device::hasExtension(std::string_view ext) const {
    std::istringstream in(m_info.extensions);
    std::string word;
    while (in >> word)
        if (word == ext)
            return true;
    return false;
}

std::string GlContextFacts::describe() const {
    std::string out = renderer.empty() ? "a GL context" : renderer;
    if (!vendor.empty())
        out += " (" + vendor + ")";
    if (cudaDevice >= 0)
        out += " on CUDA device " + std::to_string(cudaDevice);
    return out;
}

std::vector<cl_name_version> namesWithVersion(std::string_view spaceSeparated, cl_version version) {
    std::vector<cl_name_version> out;
    std::istringstream in{std::string(spaceSeparated)};
    std::string word;
    while (in >> word) {
        cl_name_version nv{};
        nv.version = version;
        std::snprintf(nv.name, sizeof nv.name, "%s", word.c_str());
        out.push_back(nv);
    }
    return out;
}

namespace {

/// Registered device kinds, in registration order (sorted by DeviceKind::order on use).
std::vector<DeviceKind>& deviceKinds() {
    static std::vector<DeviceKind> kinds;
    return kinds;
}

} // namespace

DeviceKindRegistrar::DeviceKindRegistrar(const DeviceKind& kind) {
    deviceKinds().push_back(kind);
}

Platform::Platform() : _cl_platform_id(kTag) {
    m_extensions = "cl_khr_icd cl_khr_extended_versioning cl_khr_gl_sharing cl_khr_gl_event "
                   "cl_khr_gl_depth_images";
    std::vector<DeviceKind> kinds = deviceKinds();
    std::stable_sort(kinds.begin(), kinds.end(),
                     [](const DeviceKind& a, const DeviceKind& b) { return a.order < b.order; });
    std::string known;
    for (const DeviceKind& k : kinds)
        known += std::string(known.empty() ? "" : ", ") + k.name;
    auto addKind = [&](const DeviceKind& k) {
        for (auto& [backend, info] : k.discover()) {
            if (!info.available)
                std::fprintf(stderr, "duet: %s is not available: %s\n", info.name.c_str(),
                             info.unavailableReason.c_str());
            m_devices.push_back(new Device(this, std::move(backend), std::move(info)));
        }
    };
    // DUET_DEVICES: comma-separated device kinds, or "all" (every kind in order: the CPU
    // device first, it is CL_DEVICE_TYPE_DEFAULT); unknown names are reported, not fatal.
    std::string wanted = "all";
    if (const char* env = std::getenv("DUET_DEVICES"); env && *env)
        wanted = env;
    std::istringstream in(wanted);
    std::string word;
    while (std::getline(in, word, ',')) {
        if (word == "all") {
            for (const DeviceKind& k : kinds)
                addKind(k);
            continue;
        }
        auto it = std::find_if(kinds.begin(), kinds.end(),
                               [&](const DeviceKind& k) { return word == k.name; });
        if (it != kinds.end())
            addKind(*it);
        else if (!word.empty())
            std::fprintf(stderr, "duet: DUET_DEVICES: unknown device kind '%s' (known: %s, all)\n",
                         word.c_str(), known.c_str());
    }
}

Platform& Platform::get() {
    static Platform* platform = new Platform; // lives for the process: handles may outlive exit
    return *platform;
}

bool Platform::owns(const Device* d) const {
    for (Device* dev : m_devices)
        if (dev == d)
            return true;
    return false;
}

std::vector<cl_name_version> Platform::extensionsWithVersion() const {
    return namesWithVersion(m_extensions);
}

} // namespace duet::rt
