kernel void big(global float *a) { local float t[1<<30]; t[0] = a[0]; a[1] = t[0]; }
