// Host references for the collective-function tests (work_group_test, sub_group_test): the
// NDRange shape, a group's work-items in local linear id order, and reductions and scans.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <vector>

namespace duet::test {

/// A 1D-3D NDRange (unused dimensions 1).
struct Shape {
    unsigned dims;
    std::array<size_t, 3> global, local;
    std::array<size_t, 3> groups() const {
        return {(global[0] + local[0] - 1) / local[0], (global[1] + local[1] - 1) / local[1],
                (global[2] + local[2] - 1) / local[2]};
    }
    size_t groupCount() const {
        const auto g = groups();
        return g[0] * g[1] * g[2];
    }
};

/// Work-group `g` (linear, dimension 0 fastest) of `shape`: where it starts, its size (the last
/// groups may be partial) and its work-items' global linear indices in local linear id order.
struct Group {
    std::array<size_t, 3> origin, size;
    std::vector<size_t> items;
    Group(const Shape& shape, size_t g) {
        const auto n = shape.groups();
        const size_t at[3] = {g % n[0], g / n[0] % n[1], g / (n[0] * n[1])};
        for (int d = 0; d < 3; ++d) {
            origin[d] = at[d] * shape.local[d];
            size[d] = std::min(shape.local[d], shape.global[d] - origin[d]);
        }
        for (size_t z = 0; z < size[2]; ++z)
            for (size_t y = 0; y < size[1]; ++y)
                for (size_t x = 0; x < size[0]; ++x)
                    items.push_back(index(x, y, z, shape));
    }
    /// The global linear index of the group's work-item at local (x, y, z).
    size_t index(size_t x, size_t y, size_t z, const Shape& shape) const {
        return origin[0] + x +
               shape.global[0] * (origin[1] + y + shape.global[1] * (origin[2] + z));
    }
};

/// Sum, min, max, all and any of the values added so far: after all of a group's values the
/// reductions; read before and after each value, the exclusive and inclusive scans.
template <class T> struct Totals {
    static constexpr T kHigh = std::numeric_limits<T>::has_infinity
                                   ? std::numeric_limits<T>::infinity()
                                   : std::numeric_limits<T>::max();
    static constexpr T kLow = std::numeric_limits<T>::has_infinity
                                  ? -std::numeric_limits<T>::infinity()
                                  : std::numeric_limits<T>::lowest();
    T sum = 0, min = kHigh, max = kLow;
    bool all = true, any = false;
    void add(T v) {
        sum += v;
        min = std::min(min, v);
        max = std::max(max, v);
        all = all && v != T(0);
        any = any || v != T(0);
    }
};

} // namespace duet::test
