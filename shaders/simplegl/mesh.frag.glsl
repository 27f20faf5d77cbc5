#version 330 core
// SimpleGL: the kernel's colour, shaded by the surface normal from screen-space derivatives
// (no normals in the VBO) when lighting is on; points and lines are drawn unlit.
in vec3 vColor;
in vec3 vEye;
uniform int lit;
out vec4 fragColor;
void main() {
    vec3 c = vColor;
    if (lit != 0) {
        vec3 n = normalize(cross(dFdx(vEye), dFdy(vEye)));
        float diffuse = abs(dot(n, normalize(vec3(0.3, 0.8, 0.5))));
        c *= 0.35 + 0.65 * diffuse;
    }
    fragColor = vec4(c, 1.0);
}
