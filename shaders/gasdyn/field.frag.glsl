#version 330 core
// The colour-mapped field the CL kernel wrote into the shared texture, filtered by GL.
in vec2 uv;
uniform sampler2D field;
out vec4 fragColor;
void main() {
    fragColor = vec4(texture(field, uv).rgb, 1.0);
}
