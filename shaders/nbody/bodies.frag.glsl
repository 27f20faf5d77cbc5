#version 330 core
// A round soft sprite: Gaussian falloff from the centre, summed with additive blending.
in float brightness;
uniform vec3 color;
uniform float intensity;
out vec4 fragColor;
void main() {
    vec2 d = gl_PointCoord * 2.0 - 1.0;
    float r2 = dot(d, d);
    if (r2 > 1.0)
        discard;
    float a = exp(-r2 * 3.0) * intensity * brightness;
    fragColor = vec4(color * a, a);
}
