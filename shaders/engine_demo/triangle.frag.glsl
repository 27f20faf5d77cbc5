// Engine demo: the interpolated vertex colour, scaled by a brightness parameter.
#version 330 core
in vec3 vColor;
uniform float brightness;
out vec4 fragColor;
void main() {
    fragColor = vec4(vColor * brightness, 1.0);
}
