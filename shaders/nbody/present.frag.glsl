#version 330 core
// Shows the fog kernel's sRGB texture. texelFetch decodes sRGB to linear; an sRGB-capable
// framebuffer (GL_FRAMEBUFFER_SRGB on) encodes again, otherwise this shader encodes, so either
// way the screen receives the sRGB values the kernel's write_imagef produced.
uniform sampler2D frame;
uniform int encode;
out vec4 fragColor;
vec3 toSrgb(vec3 c) {
    return mix(c * 12.92, 1.055 * pow(c, vec3(1.0 / 2.4)) - 0.055, step(0.0031308, c));
}
void main() {
    vec4 c = texelFetch(frame, ivec2(gl_FragCoord.xy), 0);
    fragColor = vec4(encode != 0 ? toSrgb(c.rgb) : c.rgb, 1.0);
}
