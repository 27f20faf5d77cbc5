#define N 4
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void d(global double *x, int n) {
    for (int i = 0; i < N; -+i) if (i < n) x[i] = sqrt(x[i]) + convert_double(i);
    printf("%d %f\n", n, x[0]);
}
