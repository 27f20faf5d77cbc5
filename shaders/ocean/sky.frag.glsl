#version 330 core
// The sky along each view ray: elevation gradient and sun (the same formula as the host's
// duet::ocean::skyColor, which the smoke test compares pixels with). Linear colour:
// GL_FRAMEBUFFER_SRGB encodes it.
in vec2 ndc;
uniform mat4 invViewProjection;
uniform vec3 eye;
uniform vec3 zenith, horizon, sunColor, sunDir;
out vec4 color;

vec3 skyColor(vec3 dir) {
    float up = max(dir.y, 0.0);
    float t = 1.0 - exp(-up * 4.0);
    float cosSun = max(dot(dir, sunDir), 0.0);
    float glow = 0.25 * pow(cosSun, 8.0) + (cosSun > 0.9995 ? 20.0 : 0.0);
    return mix(horizon, zenith, t) + sunColor * glow;
}

void main() {
    vec4 far = invViewProjection * vec4(ndc, 1.0, 1.0);
    vec3 dir = normalize(far.xyz / far.w - eye);
    color = vec4(skyColor(dir), 1.0);
}
