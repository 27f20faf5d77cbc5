// SimpleGL's kernel: one work-item per vertex of a width x height grid writes its position on a
// travelling sine-wave surface and a colour from its height straight into the shared GL VBOs.

// Height in [-amplitude, amplitude] at grid coordinates (u, v) in [-1, 1], time t. The host
// reference in samples/simplegl/sine_mesh.cpp is the same formula.
inline float waveHeight(float u, float v, float t, float frequency, float amplitude) {
    return amplitude * sin(u * frequency + t) * cos(v * frequency + t);
}

__kernel void sine_wave(__global float4 *positions, __global uchar4 *colors, int width,
                        int height, float t, float frequency, float amplitude) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    // Grid spans [-1, 1] on both axes; a 1-wide axis sits at 0.
    float u = width > 1 ? (float)x / (float)(width - 1) * 2.0f - 1.0f : 0.0f;
    float v = height > 1 ? (float)y / (float)(height - 1) * 2.0f - 1.0f : 0.0f;
    float h = waveHeight(u, v, t, frequency, amplitude);
    int i = y * width + x;
    positions[i] = (float4)(u, h, v, 1.0f);
    // Crests warm, troughs cool: s = 0 at -amplitude, 1 at +amplitude.
    float s = amplitude > 0.0f ? clamp(0.5f + 0.5f * h / amplitude, 0.0f, 1.0f) : 0.5f;
    float3 c = (float3)(0.15f + 0.85f * s, 0.35f + 0.4f * (1.0f - fabs(2.0f * s - 1.0f)),
                        1.0f - 0.8f * s);
    colors[i] = convert_uchar4_sat_rte((float4)(c * 255.0f, 255.0f));
}
