#version 330 core
// Depth pre-pass of the fog path: each sprite's disc (where bodies.frag draws anything) writes
// the body's depth, so the fog kernel knows how far away every lit pixel is.
in float brightness;
void main() {
    vec2 d = gl_PointCoord * 2.0 - 1.0;
    if (dot(d, d) > 1.0)
        discard;
}
