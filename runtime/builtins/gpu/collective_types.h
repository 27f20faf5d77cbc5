// The scalar types of the GPU devices' collective functions (gpu/work_group.h, gpu/sub_group.h):
// X(type, its mangling letter, its lowest value, its highest value), the identities of max and
// min. Each header instantiates its functions with DUET_COLLECTIVE_TYPES(its ALL_OF).
#pragma once

#include <limits.h>

#define DUET_COLLECTIVE_TYPES(X)                                                                   \
    X(int, i, INT_MIN, INT_MAX)                                                                    \
    X(uint, j, 0, UINT_MAX)                                                                        \
    X(long, l, LONG_MIN, LONG_MAX)                                                                 \
    X(ulong, m, 0, ULONG_MAX)                                                                      \
    X(float, f, -__builtin_inff(), __builtin_inff())                                               \
    X(double, d, -__builtin_inf(), __builtin_inf())
