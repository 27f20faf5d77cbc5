// libduet-fft: batched 1D and 2D complex FFTs (float2) with our own OpenCL kernels (fft.cl), on
// any OpenCL platform through the public API only.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <memory>
#include <string>

namespace duet::fft {

/// An OpenCL status and, when it is not CL_SUCCESS, why (one readable line).
struct [[nodiscard]] Status {
    cl_int code = CL_SUCCESS; ///< CL_SUCCESS, or the OpenCL error
    std::string message;      ///< why, when code is not CL_SUCCESS
    bool ok() const { return code == CL_SUCCESS; }
    explicit operator bool() const { return ok(); }
};

/// Forward: X[k] = sum_n x[n] e^(-2 pi i n k / N). Inverse: the + sign, unnormalised (pass
/// scale = 1 / points for the normalised inverse).
enum class Direction { Forward, Inverse };

/// What to transform. Data are complex floats (cl_float2), x fastest:
/// element (b, y, x) is at index (b * ny + y) * nx + x.
struct Desc {
    size_t nx = 0;    ///< points along x: a power of two, 2 and up
    size_t ny = 1;    ///< points along y; 1 for 1D transforms, else a power of two, 2 and up
    size_t batch = 1; ///< independent transforms (1D rows or 2D arrays), 1 and up
    /// Sequences per work-group along x and y; 0 chooses from the device's limits (benchmarks
    /// set these to measure). Must be a power of two when set.
    size_t groupX = 0, groupY = 0;
    /// How 2D transforms do the y pass: Strided, a kernel whose work-items walk adjacent columns
    /// (no extra memory); Transpose, transpose + row transforms + transpose back (a scratch
    /// buffer of bytes() in the plan). Auto picks Strided (see README.md for the measurements).
    enum class Columns { Auto, Strided, Transpose } columns = Columns::Auto;
};

/// The source of the FFT kernels (kernels/fft/fft.cl, embedded at build time).
const char* kernelSource();

/// A built FFT for one Desc on one device. Not thread-safe: enqueue from one thread at a time
/// (it sets kernel arguments); with Columns::Transpose, transforms enqueued on an out-of-order
/// queue must be ordered by events (they share the scratch buffer). The context must outlive the
/// plan.
class Plan {
public:
    /// Checks `desc` against the device's limits, builds the kernels and uploads the twiddle
    /// tables. Errors: CL_INVALID_VALUE for a size that is not a power of two in range, or one the
    /// device's work-group or local-memory limits cannot hold; CL_INVALID_CONTEXT /
    /// CL_INVALID_DEVICE for bad handles; CL_BUILD_PROGRAM_FAILURE with the build log.
    static Status create(cl_context context, cl_device_id device, const Desc& desc,
                         std::unique_ptr<Plan>& plan);
    ~Plan();
    Plan(const Plan&) = delete;
    Plan& operator=(const Plan&) = delete;

    /// Enqueues the transform of `in` into `out` (they may be the same buffer: in place), each
    /// holding at least bytes(); every output point is multiplied by `scale`. 2D runs the x pass
    /// (in -> out) then the y pass (in place on out); the kernels wait for each other, so an
    /// out-of-order queue is fine. `event` (optional) completes with the last kernel. Errors:
    /// CL_INVALID_COMMAND_QUEUE, CL_INVALID_MEM_OBJECT, CL_INVALID_CONTEXT (queue or buffer from
    /// another context), CL_INVALID_BUFFER_SIZE (a buffer smaller than bytes()), else what
    /// clEnqueueNDRangeKernel returned.
    Status enqueue(cl_command_queue queue, Direction direction, cl_mem in, cl_mem out,
                   float scale = 1.0f, cl_uint numWait = 0, const cl_event* wait = nullptr,
                   cl_event* event = nullptr);

    /// The Desc the plan was made for (groupX/groupY as given, not as chosen).
    const Desc& desc() const { return m_desc; }
    /// Complex points per buffer (nx * ny * batch) and their size in bytes.
    size_t points() const { return m_desc.nx * m_desc.ny * m_desc.batch; }
    size_t bytes() const { return points() * 2 * sizeof(cl_float); }
    /// Sequences per work-group chosen for x and y (y: 0 for 1D; with Columns::Transpose, the
    /// rows per group of the transposed pass).
    size_t groupX() const { return m_groupX; }
    size_t groupY() const { return m_groupY; }
    /// True when the y pass transposes (Columns::Transpose).
    bool transposes() const { return m_transpose; }
    /// The build options the kernels were built with (for logs and benchmarks).
    const std::string& buildOptions() const { return m_options; }

private:
    Plan() = default;
    // axis 0: x (rows), 1: y (strided columns), 2: the transposed array's rows.
    Status enqueueAxis(cl_command_queue queue, int axis, bool inverse, cl_mem in, cl_mem out,
                       float scale, cl_uint numWait, const cl_event* wait, cl_event* event);
    Status enqueueTranspose(cl_command_queue queue, cl_mem in, cl_mem out, size_t nx, size_t ny,
                            cl_uint numWait, const cl_event* wait, cl_event* event);

    Desc m_desc;
    cl_context m_context = nullptr;
    cl_program m_program = nullptr;
    cl_kernel m_kernels[3][2] = {}; // [axis x/y/transposed][forward/inverse]
    cl_kernel m_transposeKernel = nullptr;
    cl_mem m_twiddles[2] = {};  // e^(-2 pi i k / n) for x and y
    cl_mem m_scratch = nullptr; // the transposed array (Columns::Transpose)
    size_t m_groupX = 0, m_groupY = 0, m_tile = 0;
    bool m_transpose = false;
    std::string m_options;
};

/// Flop count by the usual convention: 5 N log2 N per complex transform of N points.
double flops(const Desc& desc);

} // namespace duet::fft
