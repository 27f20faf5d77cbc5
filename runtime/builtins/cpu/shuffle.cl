// shuffle and shuffle2 (OpenCL C 3.0 §6.15.12): element i of the result is element
// mask[i] (mod the number of inputs) of x (or of the concatenation x, y).
#include "builtins.h"

#define DUET_SHUFFLE(S, U, N, M)                                                               \
    DUET_CONST S##M shuffle(S##N x, U##M mask) {                                               \
        S##M r;                                                                                \
        for (int i = 0; i < M; ++i)                                                            \
            r[i] = x[mask[i] & (U)(N - 1)];                                                    \
        return r;                                                                              \
    }                                                                                          \
    DUET_CONST S##M shuffle2(S##N x, S##N y, U##M mask) {                                      \
        S##M r;                                                                                \
        for (int i = 0; i < M; ++i) {                                                          \
            U k = mask[i] & (U)(2 * N - 1);                                                    \
            r[i] = k < (U)N ? x[k] : y[k - (U)N];                                              \
        }                                                                                      \
        return r;                                                                              \
    }
#define DUET_SHUFFLE_M(S, U, N)                                                                \
    DUET_SHUFFLE(S, U, N, 2) DUET_SHUFFLE(S, U, N, 4) DUET_SHUFFLE(S, U, N, 8)                 \
    DUET_SHUFFLE(S, U, N, 16)
#define DUET_SHUFFLE_ALL(S, U)                                                                 \
    DUET_SHUFFLE_M(S, U, 2) DUET_SHUFFLE_M(S, U, 4) DUET_SHUFFLE_M(S, U, 8)                    \
    DUET_SHUFFLE_M(S, U, 16)
DUET_SHUFFLE_ALL(char, uchar)
DUET_SHUFFLE_ALL(uchar, uchar)
DUET_SHUFFLE_ALL(short, ushort)
DUET_SHUFFLE_ALL(ushort, ushort)
DUET_SHUFFLE_ALL(int, uint)
DUET_SHUFFLE_ALL(uint, uint)
DUET_SHUFFLE_ALL(long, ulong)
DUET_SHUFFLE_ALL(ulong, ulong)
DUET_SHUFFLE_ALL(float, uint)
DUET_SHUFFLE_ALL(double, ulong)
