// Geometry of data movement (boxes of bytes in strided memory) and its host-memory forms.
#pragma once

#include <cstddef>

namespace duet::rt {

/// Where a box of bytes lies in strided memory: the offset of its first byte and the steps
/// between its rows and between its slices. A buffer rect, an image region (rows along y, or
/// layers of a 1D array; slices along z) and a host layout are all one of these.
struct Strided {
    size_t offset = 0, rowPitch = 0, slicePitch = 0;
};

/// The size of a box of bytes: `slices` slices of `rows` rows of `width` bytes.
struct BoxSize {
    size_t width = 0, rows = 1, slices = 1;
    size_t bytes() const { return width * rows * slices; }
};

/// Copies a box from `src` (laid out as `srcAt`) to `dst` (laid out as `dstAt`), both host
/// memory. Rows may overlap (memmove).
void copyBox(char* dst, const Strided& dstAt, const char* src, const Strided& srcAt,
             const BoxSize& box);

/// Repeats `pattern` (`patternSize` bytes, a divisor of box.width) along every row of the box
/// at `at` in `dst`, host memory.
void fillBox(char* dst, const Strided& at, const BoxSize& box, const void* pattern,
             size_t patternSize);

} // namespace duet::rt
