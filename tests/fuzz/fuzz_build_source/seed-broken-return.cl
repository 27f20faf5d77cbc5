__kernel int notvoid(__global int *a) { return a[0]; }
