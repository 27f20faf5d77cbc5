// Input and window events the engine hands to samples.
#pragma once

namespace duet::engine {

/// One window event. Key codes, actions and modifier bits are GLFW's values (GLFW_KEY_*,
/// GLFW_PRESS/RELEASE/REPEAT, GLFW_MOD_*), so samples need not include GLFW to compare against
/// the few they use: see the constants below.
struct Event {
    /// What happened; the fields below say which key, where or how far.
    enum class Type { Key, MouseButton, MouseMove, Scroll, Resize };
    Type type = Type::Key;
    int key = 0;    ///< Key: GLFW key code; MouseButton: button index (0 left, 1 right, 2 middle)
    int action = 0; ///< 0 release, 1 press, 2 repeat
    int mods = 0;   ///< Key, MouseButton: GLFW_MOD_* bits (shift 1, control 2, alt 4)
    double x = 0;   ///< MouseMove: cursor x in window pixels; Scroll: x offset; Resize: width
    double y = 0;   ///< MouseMove: cursor y; Scroll: y offset; Resize: height
};

/// The GLFW key codes and actions the engine and samples compare against.
namespace keys {
inline constexpr int Space = 32;
inline constexpr int Escape = 256;
inline constexpr int F12 = 301;
inline constexpr int Release = 0;
inline constexpr int Press = 1;
} // namespace keys

} // namespace duet::engine
