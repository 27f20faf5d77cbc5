// An OpenCL C 2.0 kernel with a sub-group function (cl_khr_subgroups), compiled to SPIR-V at test
// build time like kernels.cl: it builds where the device has sub-groups and fails, naming the
// function, where it has not (the NVIDIA device).
#pragma OPENCL EXTENSION cl_khr_subgroups : enable

kernel void sums(global const int* in, global int* out) {
    size_t i = get_global_id(0);
    out[i] = sub_group_reduce_add(in[i]);
}
