// What a sample implements (hooks in the order the loop calls them) and what the engine offers it.
#pragma once

#include "duet/engine/app/event.hpp"
#include "duet/engine/app/options.hpp"
#include "duet/engine/app/parameters.hpp"
#include "duet/engine/app/stats.hpp"
#include "duet/engine/gfx/orbit_camera.hpp"
#include "duet/engine/platform/surface.hpp"

#include <string>
#include <utility>
#include <vector>

namespace duet::engine {

/// Engine services during a run. Owned by the loop; valid from initializeGL to shutdown.
/// Main (GL) thread only.
class Context {
public:
    /// The parsed command line (--platform, --device, --frames, ...).
    const Options& options() const { return m_options; }
    /// The native GL handles for clGetGLContextInfoKHR / clCreateContext properties.
    NativeGL nativeGL() const { return m_surface.native(); }
    /// True when rendering with EGL and no window.
    bool headless() const { return m_surface.headless(); }
    /// Framebuffer to draw the frame into (0 unless headless without a pbuffer).
    unsigned framebuffer() const { return m_surface.framebuffer(); }
    /// Framebuffer size in pixels (follows window resizes) and its width / height ratio.
    int width() const { return m_width; }
    int height() const { return m_height; }
    float aspect() const { return m_height > 0 ? float(m_width) / float(m_height) : 1.0f; }
    /// The frame being produced, from 0.
    long frameIndex() const { return m_frame; }
    /// Simulated seconds since start (sum of the dt values update was given).
    double time() const { return m_time; }

    /// The camera the engine drives with the mouse (samples may set its initial pose).
    OrbitCamera& camera() { return m_camera; }
    /// Per-phase timings: samples add phase::Compute and phase::AcquireRelease (--stats, overlay).
    Stats& stats() { return m_stats; }

    /// Sets an overlay line such as ("device", "Duet CPU") or ("kernel nbody", "1.2 ms");
    /// a key set again replaces its value.
    void setInfo(const std::string& key, std::string value);
    /// The overlay lines set so far, in first-set order.
    const std::vector<std::pair<std::string, std::string>>& info() const { return m_info; }

    /// Ends the loop after the current frame.
    void requestExit() { m_exitRequested = true; }

private:
    friend class Loop;
    Context(const Options& options, Surface& surface) : m_options(options), m_surface(surface) {}

    const Options& m_options;
    Surface& m_surface;
    int m_width = 0, m_height = 0;
    long m_frame = 0;
    double m_time = 0;
    bool m_exitRequested = false;
    OrbitCamera m_camera;
    Stats m_stats;
    std::vector<std::pair<std::string, std::string>> m_info;
};

/// A demo. Hooks run on the GL thread with the GL context current, in this order:
/// initializeGL, initializeCompute, parameters, then per frame event* / update / render / ui,
/// then shutdown. A hook throws Error to stop the run: the message becomes the one line printed
/// and the process exits non-zero.
class Sample {
public:
    virtual ~Sample() = default;
    /// GL resources that do not depend on compute (shaders, vertex arrays).
    virtual void initializeGL(Context&) {}
    /// OpenCL set-up: the sample picks a platform/device (options().platform/device), pairs with
    /// nativeGL() and creates shared objects. The engine itself uses no OpenCL.
    virtual void initializeCompute(Context&) {}
    /// Registers tunable parameters (overlay widgets and --set).
    virtual void parameters(Parameters&) {}
    /// An input event; return true to keep it from the default camera control.
    virtual bool event(Context&, const Event&) { return false; }
    /// Advances the simulation by dt seconds (a fixed 1/60 s when --frames is given).
    virtual void update(Context&, double /*dt*/) {}
    /// Draws into ctx.framebuffer() (already bound, viewport set).
    virtual void render(Context&) = 0;
    /// Extra ImGui widgets inside the overlay window (ImGui is current).
    virtual void ui(Context&) {}
    /// Releases compute and GL resources while the context is still current.
    virtual void shutdown(Context&) {}
};

} // namespace duet::engine
