// The Dear ImGui overlay (Debian's libimgui with its stock GLFW and OpenGL3 backends).
#pragma once

#include <functional>
#include <string>

namespace duet::engine {

class Context;
class Parameters;
class Surface;

/// One ImGui context drawn over the sample. With a window it takes input through the GLFW
/// backend (which chains to the surface's own callbacks); headless it only draws. GL thread only;
/// the GL context must be current for every call, including destruction.
class Overlay {
public:
    /// Creates the ImGui context and its backends on `surface`'s (current) GL context; throws
    /// Error when ImGui's GL loader cannot start (the engine then runs without the overlay).
    explicit Overlay(Surface& surface);
    ~Overlay();
    Overlay(const Overlay&) = delete;
    Overlay& operator=(const Overlay&) = delete;

    /// What the standard panel shows.
    struct Panel {
        std::string title;          ///< the sample's name
        std::string surface;        ///< Surface::description()
        double fps = 0;             ///< frames per second to show
        Context* context = nullptr; ///< info lines and phase timings
        Parameters* parameters = nullptr;
        std::function<void()> sampleUi; ///< the sample's own widgets
    };

    /// Starts an ImGui frame of the given framebuffer size, draws the panel and renders it into
    /// the currently bound framebuffer.
    void draw(double dt, int width, int height, const Panel& panel);

    /// True while ImGui wants the mouse (cursor over the panel) or keyboard (text field).
    bool wantsMouse() const;
    bool wantsKeyboard() const; ///< see wantsMouse

private:
    bool m_window;
};

} // namespace duet::engine
