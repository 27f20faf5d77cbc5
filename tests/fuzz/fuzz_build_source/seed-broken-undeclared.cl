__kernel void t(__global float *a) { a[0] = undeclared_thing + 1; }
