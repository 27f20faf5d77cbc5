kernel void r(global int *a) { r(a); }
kernel void p(int *x) { }
