#version 330 core
// A triangle covering the viewport (no vertex buffer: positions from gl_VertexID); texture
// coordinates 0..1 over the viewport, v = 0 at the bottom (the field's row 0).
out vec2 uv;
void main() {
    vec2 p = vec2(float((gl_VertexID & 1) << 2) - 1.0, float((gl_VertexID & 2) << 1) - 1.0);
    uv = p * 0.5 + 0.5;
    gl_Position = vec4(p, 0.0, 1.0);
}
