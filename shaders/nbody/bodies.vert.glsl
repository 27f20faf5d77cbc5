#version 330 core
// Bodies as point sprites: position from the shared VBO (xyz, mass in w), size shrinking with depth.
layout(location = 0) in vec4 posMass;
uniform mat4 view;
uniform mat4 projection;
uniform float pointSize;   // pixels at unit distance
uniform float massScale;   // 1 / mean mass: heavier bodies look bigger
out float brightness;
void main() {
    vec4 eye = view * vec4(posMass.xyz, 1.0);
    gl_Position = projection * eye;
    float m = clamp(posMass.w * massScale, 0.5, 4.0);
    gl_PointSize = clamp(pointSize * sqrt(m) / max(-eye.z, 0.05), 1.0, 64.0);
    brightness = m;
}
