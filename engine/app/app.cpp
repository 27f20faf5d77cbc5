// The sample loop: surface, GL, overlay, the sample's hooks per frame, capture and --stats.
#include "duet/engine/app/registry.hpp"
#include "duet/engine/error.hpp"
#include "duet/engine/gfx/capture.hpp"
#include "duet/engine/gfx/gl.hpp"
#include "duet/engine/ui/overlay.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace duet::engine {

void Context::setInfo(const std::string& key, std::string value) {
    for (auto& [k, v] : m_info)
        if (k == key) {
            v = std::move(value);
            return;
        }
    m_info.emplace_back(key, std::move(value));
}

/// Runs one sample; a class so it may reach Context's private state.
class Loop {
public:
    Loop(Sample& sample, const std::string& name, const Options& options)
        : m_sample(sample), m_name(name), m_options(options) {}

    int run();

private:
    void frames(Surface& surface, Context& ctx, Parameters& parameters, Overlay* overlay);
    void capture(Surface& surface, const std::string& path, int width, int height);
    void fail(const std::string& message) {
        std::fprintf(stderr, "%s: %s\n", m_name.c_str(), message.c_str());
    }

    Sample& m_sample;
    std::string m_name;
    const Options& m_options;
    bool m_captureRequested = false;
};

int runSample(Sample& sample, const std::string& name, const Options& options) {
    return Loop(sample, name, options).run();
}

int Loop::run() {
    const char* display = std::getenv("DISPLAY");
    bool headless = m_options.mode == Options::Mode::Headless ||
                    (m_options.mode == Options::Mode::Auto && (!display || !*display));
    SurfaceDesc desc;
    desc.width = m_options.width;
    desc.height = m_options.height;
    desc.title = "Duet: " + m_name;
    desc.vsync = m_options.vsync && m_options.frames == 0;
    std::unique_ptr<Surface> surface;
    try {
        surface = headless ? createEglSurface(desc) : createGlfwSurface(desc);
    } catch (const Error& e) {
        fail(e.what());
        return 1;
    }
    std::printf("%s: %s, %dx%d\n", m_name.c_str(), surface->description().c_str(), m_options.width,
                m_options.height);

    Context ctx(m_options, *surface);
    Parameters parameters;
    std::unique_ptr<Overlay> overlay;
    int status = 0;
    bool initialized = false;
    try {
        // The overlay is a convenience: without it (e.g. ImGui's GL loader finds no libGL.so.1)
        // the sample still runs, and says so.
        if (m_options.overlay) {
            try {
                overlay = std::make_unique<Overlay>(*surface);
            } catch (const Error& e) {
                std::fprintf(stderr, "%s: warning: overlay disabled: %s\n", m_name.c_str(),
                             e.what());
            }
        }
        surface->setEventHandler([&](const Event& e) {
            if (e.type == Event::Type::Resize) {
                ctx.m_width = int(e.x);
                ctx.m_height = int(e.y);
            }
            bool mouse = e.type != Event::Type::Key && e.type != Event::Type::Resize;
            if (overlay && ((mouse && overlay->wantsMouse()) ||
                            (!mouse && e.type == Event::Type::Key && overlay->wantsKeyboard())))
                return;
            if (e.type == Event::Type::Key && e.action == keys::Press && e.key == keys::F12)
                m_captureRequested = true;
            if (e.type == Event::Type::Key && e.action == keys::Press && e.key == keys::Escape)
                ctx.requestExit();
            if (!m_sample.event(ctx, e))
                ctx.camera().handle(e);
        });
        surface->framebufferSize(ctx.m_width, ctx.m_height);
        initialized = true;
        m_sample.initializeGL(ctx);
        m_sample.initializeCompute(ctx);
        m_sample.parameters(parameters);
        for (const std::string& assignment : m_options.set) {
            std::string error;
            if (!parameters.set(assignment, error)) {
                fail(error);
                status = kUsageError;
                break;
            }
        }
        if (status == 0)
            frames(*surface, ctx, parameters, overlay.get());
    } catch (const Error& e) {
        fail(e.what());
        status = 1;
    } catch (const std::exception& e) {
        fail(std::string("unexpected error: ") + e.what());
        status = 1;
    }
    if (initialized) {
        try {
            m_sample.shutdown(ctx);
        } catch (const std::exception& e) {
            fail(std::string("shutdown: ") + e.what());
            status = status ? status : 1;
        }
    }
    overlay.reset();
    if (m_options.stats) {
        std::printf("%s: %ld frames, %dx%d, %s\n%s", m_name.c_str(), ctx.m_frame, ctx.m_width,
                    ctx.m_height, surface->description().c_str(), ctx.stats().table().c_str());
        std::fflush(stdout);
    }
    return status;
}

void Loop::frames(Surface& surface, Context& ctx, Parameters& parameters, Overlay* overlay) {
    using Clock = std::chrono::steady_clock;
    long count = m_options.frames ? m_options.frames
                                  : (surface.headless() ? Options::kDefaultHeadlessFrames : 0);
    // A frame count means a reproducible run: every update gets the same step.
    bool fixedStep = count > 0;
    const Clock::time_point loopStart = Clock::now();
    Clock::time_point previous = loopStart, fpsStart = loopStart;
    long fpsFrames = 0;
    double fps = 0;
    for (long i = 0; count == 0 || i < count; ++i) {
        Clock::time_point frameStart = Clock::now();
        surface.pollEvents();
        bool closing = surface.shouldClose() || ctx.m_exitRequested;
        bool last = closing || (count && i + 1 == count);
        ctx.m_frame = i;
        surface.framebufferSize(ctx.m_width, ctx.m_height);
        double realDt = std::chrono::duration<double>(frameStart - previous).count();
        previous = frameStart;
        double dt = fixedStep ? 1.0 / 60.0 : realDt;

        {
            auto timed = ctx.stats().scope(phase::Update);
            m_sample.update(ctx, dt);
        }
        ctx.m_time += dt;
        glBindFramebuffer(GL_FRAMEBUFFER, surface.framebuffer());
        glViewport(0, 0, ctx.m_width, ctx.m_height);
        {
            auto timed = ctx.stats().scope(phase::Render);
            m_sample.render(ctx);
            // With --stats every phase is synchronous, so each time is that phase's own work.
            if (m_options.stats)
                glFinish();
        }
        if (overlay) {
            auto timed = ctx.stats().scope(phase::Ui);
            glBindFramebuffer(GL_FRAMEBUFFER, surface.framebuffer());
            glViewport(0, 0, ctx.m_width, ctx.m_height);
            Overlay::Panel panel{m_name, surface.description(), fps,
                                 &ctx,   &parameters,           [&] { m_sample.ui(ctx); }};
            overlay->draw(i ? realDt : 1.0 / 60.0, ctx.m_width, ctx.m_height, panel);
            if (m_options.stats)
                glFinish();
        }
        if (last && !m_options.screenshot.empty())
            capture(surface, m_options.screenshot, ctx.m_width, ctx.m_height);
        if (m_captureRequested) {
            m_captureRequested = false;
            capture(surface,
                    m_options.screenshot.empty()
                        ? "duet-" + m_name + "-" + std::to_string(i) + ".png"
                        : m_options.screenshot,
                    ctx.m_width, ctx.m_height);
        }
        surface.swapBuffers();
        if (m_options.stats)
            glFinish();
        Clock::time_point frameEnd = Clock::now();
        ctx.stats().add(phase::Frame, std::chrono::duration<double>(frameEnd - frameStart).count());

        ++fpsFrames;
        double window = std::chrono::duration<double>(frameEnd - fpsStart).count();
        // Until the first half second is complete, show the average so far.
        if (fpsStart == loopStart)
            fps = fpsFrames / std::max(window, 1e-9);
        if (window >= 0.5) {
            fps = fpsFrames / std::max(window, 1e-9);
            fpsFrames = 0;
            fpsStart = frameEnd;
        }
        if (closing) {
            ctx.m_frame = i + 1;
            return;
        }
    }
    ctx.m_frame = count;
}

void Loop::capture(Surface& surface, const std::string& path, int width, int height) {
    Image image = readFramebuffer(surface.framebuffer(), surface.readBuffer(), width, height);
    writePng(path, image);
    std::printf("%s: wrote %s (%dx%d)\n", m_name.c_str(), path.c_str(), width, height);
}

} // namespace duet::engine
