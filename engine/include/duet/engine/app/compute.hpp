// Start-up shared by samples that compute through libduet-interop: the interop context on the
// sample's GL context with --platform/--device, and the device line every sample prints.
// Header-only on purpose: duet-engine itself links no OpenCL; samples that include this link
// duet-interop already.
#pragma once

#include "duet/engine/app/sample.hpp"
#include "duet/engine/error.hpp"
#include "duet/interop/interop.hpp"

#include <cstdio>
#include <memory>

namespace duet::engine {

/// Creates the interop context that shares with `ctx`'s GL context, on the platform and device
/// the command line asked for. Throws engine::Error (the engine prefixes the sample name) with
/// interop's reason. Call from Sample::initializeCompute, on the GL thread. With
/// `spanSharingDevices`, the context spans every device that can share with GL
/// (interop::Options::spanSharingDevices).
inline std::unique_ptr<interop::Context> createInteropContext(Context& ctx,
                                                              bool spanSharingDevices = false) {
    NativeGL native = ctx.nativeGL();
    interop::GLHandles handles;
    handles.api = native.api == NativeGL::Api::Egl ? interop::GLHandles::Api::Egl
                                                   : interop::GLHandles::Api::Glx;
    handles.display = native.display;
    handles.context = native.context;
    interop::Options options;
    options.platform = ctx.options().platform;
    options.device = ctx.options().device;
    options.spanSharingDevices = spanSharingDevices;
    try {
        return interop::Context::create(handles, options);
    } catch (const interop::Error& e) {
        throw Error(e.what());
    }
}

/// Shows the CL device in the overlay and prints `<program>: OpenCL <device>` (tests and
/// bench/samples_fps.sh read that line).
inline void announceDevice(Context& ctx, const char* program, const interop::Context& cl) {
    ctx.setInfo("device", cl.description());
    std::printf("%s: OpenCL %s\n", program, cl.description().c_str());
    std::fflush(stdout);
}

} // namespace duet::engine
