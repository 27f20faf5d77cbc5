__kernel void broken(__global float *a {
    a[0] = 1.0f
}
