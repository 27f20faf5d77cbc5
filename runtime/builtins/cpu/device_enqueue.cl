// ndrange_1D/2D/3D for the CPU device's device-side enqueue (OpenCL C 2.0 §6.13.17.1): the rest
// of enqueue_kernel's support lives in the runtime (devices/cpu/device_enqueue.cpp, the front, and
// core/device_enqueue.cpp, the session).
#include "builtins.h"

// ndrange_t is clang's (opencl-c-base.h); core/device_enqueue.hpp's DeviceNDRange reads it.

static ndrange_t duet_make_ndrange(uint dims, const size_t* off, const size_t* gsz,
                                      const size_t* lsz) {
    ndrange_t r;
    r.workDimension = dims;
    for (uint d = 0; d < 3; ++d) {
        r.globalWorkOffset[d] = d < dims && off ? off[d] : 0;
        r.globalWorkSize[d] = d < dims ? gsz[d] : 1;
        r.localWorkSize[d] = d < dims && lsz ? lsz[d] : 0;
    }
    return r;
}

DUET_OVL ndrange_t ndrange_1D(size_t gsz) {
    return duet_make_ndrange(1, 0, &gsz, 0);
}
DUET_OVL ndrange_t ndrange_1D(size_t gsz, size_t lsz) {
    return duet_make_ndrange(1, 0, &gsz, &lsz);
}
DUET_OVL ndrange_t ndrange_1D(size_t off, size_t gsz, size_t lsz) {
    return duet_make_ndrange(1, &off, &gsz, &lsz);
}
DUET_OVL ndrange_t ndrange_2D(const size_t gsz[2]) {
    return duet_make_ndrange(2, 0, gsz, 0);
}
DUET_OVL ndrange_t ndrange_2D(const size_t gsz[2], const size_t lsz[2]) {
    return duet_make_ndrange(2, 0, gsz, lsz);
}
DUET_OVL ndrange_t ndrange_2D(const size_t off[2], const size_t gsz[2],
                                 const size_t lsz[2]) {
    return duet_make_ndrange(2, off, gsz, lsz);
}
DUET_OVL ndrange_t ndrange_3D(const size_t gsz[3]) {
    return duet_make_ndrange(3, 0, gsz, 0);
}
DUET_OVL ndrange_t ndrange_3D(const size_t gsz[3], const size_t lsz[3]) {
    return duet_make_ndrange(3, 0, gsz, lsz);
}
DUET_OVL ndrange_t ndrange_3D(const size_t off[3], const size_t gsz[3],
                                 const size_t lsz[3]) {
    return duet_make_ndrange(3, off, gsz, lsz);
}
