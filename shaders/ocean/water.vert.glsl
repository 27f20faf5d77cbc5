#version 330 core
// The ocean surface: vertices of an (n+1) x (n+1) grid per tile fetch the displaced positions and
// normals OpenCL wrote into the shared buffers (as texture buffers), index n wrapping to 0 one patch
// further on, so tiles join without seams. One instance per tile.
uniform samplerBuffer positions; // xyz, w = Jacobian (foam where < 1)
uniform samplerBuffer normals;
uniform int n;
uniform int tiles;
uniform float patchSize;
uniform mat4 viewProjection;
out vec3 worldPos;
out vec3 normal;
out float jacobian;
void main() {
    int ix = gl_VertexID % (n + 1), iy = gl_VertexID / (n + 1);
    int index = (iy % n) * n + (ix % n);
    vec4 p = texelFetch(positions, index);
    vec3 wrap = vec3(float(ix / n), 0.0, float(iy / n)) * patchSize;
    vec3 tile = vec3(float(gl_InstanceID % tiles), 0.0, float(gl_InstanceID / tiles)) * patchSize;
    worldPos = p.xyz + wrap + tile;
    normal = texelFetch(normals, index).xyz;
    jacobian = p.w;
    gl_Position = viewProjection * vec4(worldPos, 1.0);
}
