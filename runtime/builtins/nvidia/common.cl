// Common builtins libclc's nvptx library lacks: smoothstep with scalar double edges and a
// vector x (OpenCL C 3.0 §6.15.4; libclc has the float forms only). Found by the completeness
// check (ctest builtins-completeness-nvidia).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define DUET_OVL __attribute__((overloadable))
#define DUET_SMOOTHSTEP(T)                                                                     \
    DUET_OVL T smoothstep(double e0, double e1, T x) {                                        \
        T t = clamp((x - (T)(e0)) / ((T)(e1) - (T)(e0)), (T)(0.0), (T)(1.0));                  \
        return t * t * ((T)(3.0) - (T)(2.0) * t);                                              \
    }
DUET_SMOOTHSTEP(double2)
DUET_SMOOTHSTEP(double3)
DUET_SMOOTHSTEP(double4)
DUET_SMOOTHSTEP(double8)
DUET_SMOOTHSTEP(double16)
