// duet-nbody's depth fog: reads the GL colour and depth textures the bodies were drawn into
// (shared as CL_sRGBA and CL_DEPTH images) and writes the fogged frame into a shared sRGB texture.
// read_imagef on the sRGB image decodes to linear light and write_imagef to the sRGB image
// encodes, so the fog is mixed in linear light and no gamma code is needed here.

__constant sampler_t kNearest =
    CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;

// Eye-space distance from a GL window depth in [0, 1] (perspective projection, depth range
// [0, 1], clip-space z in [-1, 1] as glm::perspective makes it).
inline float eyeDistance(float depth, float zNear, float zFar) {
    float ndc = 2.0f * depth - 1.0f;
    return 2.0f * zNear * zFar / (zFar + zNear - ndc * (zFar - zNear));
}

// Exponential fog: the scene keeps exp(-density * (z - start)) of itself beyond `start` and the
// rest becomes `fog` (linear RGB). The background (depth 1, the far plane) becomes all fog.
__kernel void depth_fog(read_only image2d_t color, read_only image2d_depth_t depth,
                        write_only image2d_t out, float zNear, float zFar, float start,
                        float density, float4 fog) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    if (p.x >= get_image_width(out) || p.y >= get_image_height(out))
        return;
    float z = eyeDistance(read_imagef(depth, kNearest, p), zNear, zFar);
    float keep = exp(-density * fmax(z - start, 0.0f));
    // Most of the frame is background or far enough to be all fog: skip the sRGB decode there
    // (below 1e-4 the scene's share moves the 8-bit sRGB result by under half a step).
    float3 rgb = fog.xyz;
    if (keep >= 1e-4f)
        rgb = mix(fog.xyz, read_imagef(color, kNearest, p).xyz, keep);
    write_imagef(out, p, (float4)(rgb, 1.0f));
}
