// Math builtins for the CPU device: scalar forms onto LLVM intrinsics and libm.
#include "builtins.h"

DUET_CONST float sqrt(float x) { return __builtin_sqrtf(x); }
DUET_CONST double sqrt(double x) { return __builtin_sqrt(x); }
