#version 330 core
// SimpleGL: vertices straight from the VBOs the kernel wrote (position xyz, colour RGBA8).
layout(location = 0) in vec4 position;
layout(location = 1) in vec4 color;
uniform mat4 view;
uniform mat4 projection;
uniform float pointSize;
out vec3 vColor;
out vec3 vEye;
void main() {
    vec4 eye = view * vec4(position.xyz, 1.0);
    vEye = eye.xyz;
    gl_Position = projection * eye;
    gl_PointSize = pointSize;
    vColor = color.rgb;
}
