// A GLM orbit camera: yaw/pitch/distance around a target, driven by mouse drag and scroll.
#pragma once

#include <glm/mat4x4.hpp>
#include <glm/vec3.hpp>

namespace duet::engine {

struct Event;

/// Looks at `target` from `distance` away, at `yaw` around +Y and `pitch` above the XZ plane
/// (radians). Left drag orbits, right drag pans, scroll zooms.
class OrbitCamera {
public:
    glm::vec3 target{0.0f};  ///< the point looked at and orbited
    float distance = 3.0f;   ///< from target to the eye
    float yaw = 0.0f;        ///< radians around +Y
    float pitch = 0.3f;      ///< radians above the XZ plane
    float fovY = 0.7853982f; ///< vertical field of view, radians (45 degrees)
    float nearPlane = 0.01f; ///< clip planes of projection()
    float farPlane = 1000.0f;

    /// The eye position in world space.
    glm::vec3 eye() const;
    /// The world-to-view matrix (glm::lookAt from eye() to target, +Y up).
    glm::mat4 view() const;
    /// The perspective projection for a viewport of this width / height ratio.
    glm::mat4 projection(float aspect) const;

    /// Orbits by a cursor movement of (dx, dy) pixels.
    void orbit(float dx, float dy);
    /// Moves the target in the view plane by (dx, dy) pixels of a viewport `height` tall.
    void pan(float dx, float dy, float height);
    /// Zooms by scroll wheel steps (positive: closer).
    void zoom(float steps);

    /// Applies mouse events (buttons held, drags, scroll); returns true when it used the event.
    bool handle(const Event& event);

private:
    double m_lastX = 0, m_lastY = 0;
    bool m_orbiting = false, m_panning = false, m_havePosition = false;
    float m_viewportHeight = 720.0f;
};

} // namespace duet::engine
