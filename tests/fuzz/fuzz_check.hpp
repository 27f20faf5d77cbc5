// The fuzz targets' one assertion: a property that fails prints why and aborts (libFuzzer keeps
// the input), in every build type.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond, what)                                                                     \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "%s:%d: property failed: %s (%s)\n", __FILE__, __LINE__, #cond,   \
                         what);                                                                    \
            std::abort();                                                                          \
        }                                                                                          \
    } while (0)
