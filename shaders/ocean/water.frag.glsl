#version 330 core
// Water: Schlick's Fresnel between the water body's colour and the reflected sky, the sun's
// specular highlight, foam where the surface folds (Jacobian < 1), haze with distance. Linear
// colour; GL_FRAMEBUFFER_SRGB encodes it.
in vec3 worldPos;
in vec3 normal;
in float jacobian;
uniform vec3 eye;
uniform vec3 zenith, horizon, sunColor, sunDir;
uniform vec3 deepColor;
uniform float haze; // 1 / metres
out vec4 color;

void main() {
    vec3 v = normalize(eye - worldPos);
    vec3 nrm = normalize(normal);
    if (dot(nrm, v) < 0.0) // a back-facing slope seen over a crest: shade it as seen
        nrm = normalize(nrm - 2.0 * dot(nrm, v) * v);
    float cosTheta = clamp(dot(nrm, v), 0.0, 1.0);
    float fresnel = 0.02 + 0.98 * pow(1.0 - cosTheta, 5.0);
    vec3 r = reflect(-v, nrm);
    r.y = abs(r.y);
    vec3 sky = mix(horizon, zenith, 1.0 - exp(-r.y * 4.0));
    // Light scattered up from inside the water, stronger on wave crests.
    vec3 body = deepColor * (0.6 + 0.4 * clamp(worldPos.y * 0.3 + 0.5, 0.0, 1.0));
    vec3 c = mix(body, sky, fresnel);
    float spec = pow(max(dot(r, sunDir), 0.0), 400.0);
    c += sunColor * spec * 6.0;
    float foam = clamp((0.8 - jacobian) * 1.5, 0.0, 0.8);
    c = mix(c, vec3(0.85, 0.88, 0.9), foam);
    float d = length(eye - worldPos);
    c = mix(c, horizon, 1.0 - exp(-d * haze));
    color = vec4(c, 1.0);
}
