// What the GPU devices' collective functions (gpu/work_group.h, gpu/sub_group.h) share: the
// work-item's linear id and the group's size, and their scalar types. Included after the device
// file defines INLINE.
#pragma once

#include <limits.h>

// The types: X(type, its mangling letter, its lowest value, its highest value), the identities of
// max and min. Each header instantiates its functions with DUET_COLLECTIVE_TYPES(its ALL_OF).
#define DUET_COLLECTIVE_TYPES(X)                                                                   \
    X(int, i, INT_MIN, INT_MAX)                                                                    \
    X(uint, j, 0, UINT_MAX)                                                                        \
    X(long, l, LONG_MIN, LONG_MAX)                                                                 \
    X(ulong, m, 0, ULONG_MAX)                                                                      \
    X(float, f, -__builtin_inff(), __builtin_inff())                                               \
    X(double, d, -__builtin_inf(), __builtin_inf())

// From the device's workitem.cl.
ulong _Z12get_local_idj(uint dim);
ulong _Z14get_local_sizej(uint dim);

/// The work-item's local linear id: waves (warps) hold consecutive ones.
INLINE uint linearId(void) {
    return (uint)((_Z12get_local_idj(2) * _Z14get_local_sizej(1) + _Z12get_local_idj(1)) *
                      _Z14get_local_sizej(0) +
                  _Z12get_local_idj(0));
}

/// The work-items of this work-group.
INLINE uint groupItems(void) {
    return (uint)(_Z14get_local_sizej(0) * _Z14get_local_sizej(1) * _Z14get_local_sizej(2));
}
