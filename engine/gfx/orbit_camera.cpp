// Orbit camera maths and its mouse handling.
#include "duet/engine/gfx/orbit_camera.hpp"

#include "duet/engine/app/event.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <algorithm>
#include <cmath>

namespace duet::engine {

glm::vec3 OrbitCamera::eye() const {
    float c = std::cos(pitch);
    return target + distance * glm::vec3(c * std::sin(yaw), std::sin(pitch), c * std::cos(yaw));
}

glm::mat4 OrbitCamera::view() const {
    return glm::lookAt(eye(), target, glm::vec3(0, 1, 0));
}

glm::mat4 OrbitCamera::projection(float aspect) const {
    return glm::perspective(fovY, aspect > 0 ? aspect : 1.0f, nearPlane, farPlane);
}

void OrbitCamera::orbit(float dx, float dy) {
    yaw -= dx * 0.005f;
    // Stop short of the poles, where lookAt's up vector degenerates.
    pitch = std::clamp(pitch + dy * 0.005f, -1.55f, 1.55f);
}

void OrbitCamera::pan(float dx, float dy, float height) {
    glm::mat4 v = view();
    glm::vec3 right(v[0][0], v[1][0], v[2][0]), up(v[0][1], v[1][1], v[2][1]);
    float scale = 2.0f * distance * std::tan(fovY / 2) / std::max(height, 1.0f);
    target += (-dx * right + dy * up) * scale;
}

void OrbitCamera::zoom(float steps) {
    distance = std::clamp(distance * std::pow(0.9f, steps), nearPlane * 2, farPlane / 2);
}

bool OrbitCamera::handle(const Event& event) {
    switch (event.type) {
    case Event::Type::MouseButton:
        if (event.key == 0)
            m_orbiting = event.action != 0;
        else if (event.key == 1)
            m_panning = event.action != 0;
        return event.key <= 1;
    case Event::Type::MouseMove: {
        double dx = event.x - m_lastX, dy = event.y - m_lastY;
        bool used = m_havePosition && (m_orbiting || m_panning);
        if (used && m_orbiting)
            orbit(float(dx), float(dy));
        else if (used && m_panning)
            pan(float(dx), float(dy), m_viewportHeight);
        m_lastX = event.x;
        m_lastY = event.y;
        m_havePosition = true;
        return used;
    }
    case Event::Type::Scroll:
        zoom(float(event.y));
        return true;
    case Event::Type::Resize:
        m_viewportHeight = float(event.y);
        return false;
    default:
        return false;
    }
}

} // namespace duet::engine
