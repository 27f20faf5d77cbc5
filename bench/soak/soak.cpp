// duet-soak: repeats the operations a long-running application repeats (enqueues with events and
// callbacks, program builds, GL acquire/release, context create/destroy) and prints each phase's
// resident memory curve, its growth after warm-up and a verdict; exit status 1 on growth.
#include "duet/engine/gfx/gl.hpp"
#include "duet/engine/platform/surface.hpp"
#include "duet/interop/interop.hpp"

#include <CL/cl.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

/// Resident set size of this process in KiB (/proc/self/statm's second field, in pages).
long residentKiB() {
    FILE* f = std::fopen("/proc/self/statm", "r");
    if (!f)
        return -1;
    long size = 0, resident = 0;
    int n = std::fscanf(f, "%ld %ld", &size, &resident);
    std::fclose(f);
    return n == 2 ? resident * (sysconf(_SC_PAGESIZE) / 1024) : -1;
}

/// Throws with the call's name and the error code unless it is CL_SUCCESS.
void check(cl_int err, const char* what) {
    if (err != CL_SUCCESS)
        throw std::runtime_error(std::string(what) + " returned " + std::to_string(err));
}

struct Sample {
    long op;    ///< operations done when sampled
    long kib;   ///< resident memory then
    double sec; ///< since the phase began
};

/// What a phase measured. Growth is the Theil-Sen slope of resident memory over the samples after
/// warm-up (the first 10% of operations): the median of the slopes between every two samples, so
/// a leak (every pair rising) shows at its rate while one step of the allocator (most pairs on
/// the same side of it) or one noisy sample does not.
struct PhaseResult {
    std::string phase, platform;
    long ops = 0;
    std::vector<Sample> samples;
    double slopeKiBPer1000 = 0; ///< growth after warm-up, KiB per 1000 operations
    long grownKiB = 0;          ///< last sample minus the one at the end of warm-up
    bool skipped = false;
    std::string note; ///< why skipped, or what the phase checked
    bool leak = false;
};

/// The thresholds (README "Verdict"): growth counts as a leak only when both the slope and the
/// absolute growth after warm-up exceed them.
struct Thresholds {
    double kibPer1000 = 8.0; ///< ~8 bytes per operation
    long floorKiB = 1024;    ///< allocator and page-granularity noise below this
};

/// Runs `op(i)` for i in [0, n), sampling resident memory at ~samples+1 evenly spaced points.
/// Bytes each operation leaks on purpose (--inject-leak): the check that the verdict can fail.
size_t g_injectLeak = 0;
std::vector<std::unique_ptr<char[]>> g_leaked; // reachable, so LeakSanitizer stays quiet

template <typename Op> void runSampled(PhaseResult& r, long n, int samples, Op&& op) {
    r.ops = n;
    const auto t0 = Clock::now();
    auto sample = [&](long i) {
        r.samples.push_back(
            {i, residentKiB(), std::chrono::duration<double>(Clock::now() - t0).count()});
    };
    long next = 0;
    int k = 0;
    for (long i = 0; i < n; ++i) {
        if (i == next) {
            sample(i);
            next = long(double(n) * ++k / samples);
        }
        op(i);
        if (g_injectLeak) {
            g_leaked.emplace_back(new char[g_injectLeak]);
            std::fill_n(g_leaked.back().get(), g_injectLeak, char(i)); // resident, not just mapped
        }
    }
    sample(n);
}

void evaluate(PhaseResult& r, const Thresholds& t) {
    if (r.skipped || r.samples.size() < 3)
        return;
    const long warm = r.ops / 10;
    std::vector<const Sample*> after;
    for (const Sample& s : r.samples)
        if (s.op >= warm)
            after.push_back(&s);
    std::vector<double> slopes;
    for (size_t i = 0; i < after.size(); ++i)
        for (size_t j = i + 1; j < after.size(); ++j)
            if (after[j]->op > after[i]->op)
                slopes.push_back(double(after[j]->kib - after[i]->kib) /
                                 double(after[j]->op - after[i]->op) * 1000.0);
    std::sort(slopes.begin(), slopes.end());
    const size_t m = slopes.size();
    r.slopeKiBPer1000 = m == 0  ? 0
                        : m % 2 ? slopes[m / 2]
                                : (slopes[m / 2 - 1] + slopes[m / 2]) / 2;
    r.grownKiB = after.back()->kib - after.front()->kib;
    r.leak = r.slopeKiBPer1000 > t.kibPer1000 && r.grownKiB > t.floorKiB;
}

void printCurve(const PhaseResult& r, const Thresholds& t) {
    std::printf("\n== %s on %s: %ld operations\n", r.phase.c_str(), r.platform.c_str(), r.ops);
    if (r.skipped) {
        std::printf("   skipped: %s\n", r.note.c_str());
        return;
    }
    long lo = r.samples.front().kib, hi = lo;
    for (const Sample& s : r.samples) {
        lo = std::min(lo, s.kib);
        hi = std::max(hi, s.kib);
    }
    hi = std::max(hi, lo + 1024); // the bar spans at least 1 MiB: a page or two is not a trend
    std::printf("   %10s %10s %9s   (bar: resident, %.1f..%.1f MiB)\n", "ops", "RSS MiB", "s",
                lo / 1024.0, hi / 1024.0);
    for (const Sample& s : r.samples) {
        int bar = hi > lo ? int(40.0 * double(s.kib - lo) / double(hi - lo) + 0.5) : 0;
        std::printf("   %10ld %10.1f %9.2f   |%s\n", s.op, s.kib / 1024.0, s.sec,
                    std::string(size_t(bar), '#').c_str());
    }
    const double secs = r.samples.back().sec;
    std::printf("   %.0f operations/s; %s\n", secs > 0 ? double(r.ops) / secs : 0.0,
                r.note.c_str());
    std::printf(
        "   growth after warm-up (first 10%%): %.2f KiB per 1000 operations (median slope), "
        "%+ld KiB in all -> %s\n",
        r.slopeKiBPer1000, r.grownKiB, r.leak ? "GROWS (leak?)" : "flat");
    (void)t;
}

// ---------------------------------------------------------------------------------------------
// The OpenCL side.

struct Target {
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    std::string platformName, deviceName;
};

std::string platformInfo(cl_platform_id p, cl_platform_info what) {
    size_t n = 0;
    clGetPlatformInfo(p, what, 0, nullptr, &n);
    std::string s(n, '\0');
    clGetPlatformInfo(p, what, n, s.data(), nullptr);
    while (!s.empty() && s.back() == '\0')
        s.pop_back();
    return s;
}

std::string deviceName(cl_device_id d) {
    size_t n = 0;
    clGetDeviceInfo(d, CL_DEVICE_NAME, 0, nullptr, &n);
    std::string s(n, '\0');
    clGetDeviceInfo(d, CL_DEVICE_NAME, n, s.data(), nullptr);
    while (!s.empty() && s.back() == '\0')
        s.pop_back();
    return s;
}

/// The first platform whose name contains `name`, and its first CPU device (else its first).
std::optional<Target> findTarget(const std::string& name, std::string& why) {
    cl_uint n = 0;
    if (clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS || n == 0) {
        why = "no OpenCL platform at all (is OCL_ICD_VENDORS set?)";
        return std::nullopt;
    }
    std::vector<cl_platform_id> ps(n);
    clGetPlatformIDs(n, ps.data(), nullptr);
    std::string seen;
    for (cl_platform_id p : ps) {
        std::string pn = platformInfo(p, CL_PLATFORM_NAME);
        seen += (seen.empty() ? "" : ", ") + pn;
        if (pn.find(name) == std::string::npos)
            continue;
        Target t;
        t.platform = p;
        t.platformName = pn;
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_CPU, 1, &t.device, nullptr) != CL_SUCCESS &&
            clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &t.device, nullptr) != CL_SUCCESS) {
            why = "platform \"" + pn + "\" has no device";
            return std::nullopt;
        }
        t.deviceName = deviceName(t.device);
        return t;
    }
    why = "no platform named like \"" + name + "\" (seen: " + seen + ")";
    return std::nullopt;
}

const char* kBumpSource = R"(
__kernel void bump(__global uint *counter) { atomic_inc(counter); }
)";

/// Two small kernels, as an application's per-frame build would have.
const char* kBuildSource = R"(
__kernel void saxpy(__global float *y, __global const float *x, float a) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
__kernel void reduce(__global const float *in, __global float *out, __local float *tmp) {
    size_t l = get_local_id(0);
    tmp[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = get_local_size(0) / 2; s > 0; s /= 2) {
        if (l < s)
            tmp[l] += tmp[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0)
        out[get_group_id(0)] = tmp[0];
}
)";

cl_program buildProgram(cl_context ctx, cl_device_id dev, const char* src) {
    cl_int err = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
    check(err, "clCreateProgramWithSource");
    err = clBuildProgram(p, 1, &dev, "", nullptr, nullptr);
    if (err != CL_SUCCESS) {
        size_t n = 0;
        clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
        std::string log(n, '\0');
        clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
        clReleaseProgram(p);
        throw std::runtime_error("clBuildProgram returned " + std::to_string(err) + ": " + log);
    }
    return p;
}

std::atomic<long> g_callbacks{0};

void CL_CALLBACK onComplete(cl_event, cl_int status, void*) {
    if (status == CL_COMPLETE)
        g_callbacks.fetch_add(1, std::memory_order_relaxed);
}

/// Phase 1: n kernel launches, each with an event that waits on the previous one, a completion
/// callback, and the event released at once (the callback still comes); half on an in-order
/// queue, half on an out-of-order one. Checked: every callback came and the kernel ran n times.
PhaseResult phaseEnqueue(const Target& t, long n, int samples) {
    PhaseResult r;
    r.phase = "enqueue";
    r.platform = t.platformName;
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(nullptr, 1, &t.device, nullptr, nullptr, &err);
    check(err, "clCreateContext");
    cl_command_queue_properties supported = 0;
    clGetDeviceInfo(t.device, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, sizeof supported, &supported,
                    nullptr);
    const bool ooo = (supported & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0;
    cl_command_queue inOrder = clCreateCommandQueueWithProperties(ctx, t.device, nullptr, &err);
    check(err, "clCreateCommandQueueWithProperties (in order)");
    cl_command_queue outOfOrder = inOrder;
    if (ooo) {
        cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
                                       0};
        outOfOrder = clCreateCommandQueueWithProperties(ctx, t.device, props, &err);
        check(err, "clCreateCommandQueueWithProperties (out of order)");
    }
    cl_program program = buildProgram(ctx, t.device, kBumpSource);
    cl_kernel kernel = clCreateKernel(program, "bump", &err);
    check(err, "clCreateKernel");
    cl_uint zero = 0;
    cl_mem counter =
        clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, &zero, &err);
    check(err, "clCreateBuffer");
    check(clSetKernelArg(kernel, 0, sizeof counter, &counter), "clSetKernelArg");

    g_callbacks = 0;
    const long batch = 256; // clFinish every batch: bounded work in flight
    cl_event prev = nullptr;
    runSampled(r, n, samples, [&](long i) {
        cl_command_queue q = i < n / 2 ? inOrder : outOfOrder;
        if (i == n / 2 || i % batch == 0) {
            if (prev) {
                clReleaseEvent(prev);
                prev = nullptr;
            }
            check(clFinish(inOrder), "clFinish");
            check(clFinish(outOfOrder), "clFinish");
        }
        const size_t one = 1;
        cl_event ev = nullptr;
        check(clEnqueueNDRangeKernel(q, kernel, 1, nullptr, &one, nullptr, prev ? 1 : 0,
                                     prev ? &prev : nullptr, &ev),
              "clEnqueueNDRangeKernel");
        check(clSetEventCallback(ev, CL_COMPLETE, onComplete, nullptr), "clSetEventCallback");
        if (prev)
            clReleaseEvent(prev);
        prev = ev;
    });
    if (prev)
        clReleaseEvent(prev);
    check(clFinish(inOrder), "clFinish");
    check(clFinish(outOfOrder), "clFinish");
    cl_uint count = 0;
    check(clEnqueueReadBuffer(inOrder, counter, CL_TRUE, 0, sizeof count, &count, 0, nullptr,
                              nullptr),
          "clEnqueueReadBuffer");
    // Callbacks may trail clFinish (the spec orders them only after the status change).
    for (int w = 0; w < 2000 && g_callbacks.load() < n; ++w)
        usleep(1000);
    std::ostringstream note;
    note << (ooo ? "in-order then out-of-order queue" : "in-order queue only (no out-of-order)")
         << "; " << count << " launches counted, " << g_callbacks.load() << " callbacks";
    r.note = note.str();
    clReleaseMemObject(counter);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    if (outOfOrder != inOrder)
        clReleaseCommandQueue(outOfOrder);
    clReleaseCommandQueue(inOrder);
    clReleaseContext(ctx);
    if (long(count) != n || g_callbacks.load() != n)
        throw std::runtime_error("enqueue phase: " + r.note + ", expected " + std::to_string(n));
    return r;
}

/// Phase 2: n cycles of create program, build, create every kernel, release all.
PhaseResult phaseBuild(const Target& t, long n, int samples) {
    PhaseResult r;
    r.phase = "build";
    r.platform = t.platformName;
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(nullptr, 1, &t.device, nullptr, nullptr, &err);
    check(err, "clCreateContext");
    runSampled(r, n, samples, [&](long) {
        cl_program p = buildProgram(ctx, t.device, kBuildSource);
        cl_kernel k[4] = {};
        cl_uint got = 0;
        check(clCreateKernelsInProgram(p, 4, k, &got), "clCreateKernelsInProgram");
        if (got != 2)
            throw std::runtime_error("build phase: " + std::to_string(got) + " kernels, not 2");
        for (cl_uint i = 0; i < got; ++i)
            clReleaseKernel(k[i]);
        clReleaseProgram(p);
    });
    r.note = "2 kernels per program";
    clReleaseContext(ctx);
    return r;
}

/// Phase 4: n cycles of context + queue + buffer (filled, then read back), released.
PhaseResult phaseContext(const Target& t, long n, int samples) {
    PhaseResult r;
    r.phase = "context";
    r.platform = t.platformName;
    runSampled(r, n, samples, [&](long i) {
        cl_int err = CL_SUCCESS;
        cl_context ctx = clCreateContext(nullptr, 1, &t.device, nullptr, nullptr, &err);
        check(err, "clCreateContext");
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, t.device, nullptr, &err);
        check(err, "clCreateCommandQueueWithProperties");
        cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64 * 1024, nullptr, &err);
        check(err, "clCreateBuffer");
        cl_uint v = cl_uint(i), back = 0;
        check(clEnqueueFillBuffer(q, b, &v, sizeof v, 0, 64 * 1024, 0, nullptr, nullptr),
              "clEnqueueFillBuffer");
        check(clEnqueueReadBuffer(q, b, CL_TRUE, 4096, sizeof back, &back, 0, nullptr, nullptr),
              "clEnqueueReadBuffer");
        if (back != v)
            throw std::runtime_error("context phase: buffer read back wrong");
        clReleaseMemObject(b);
        clReleaseCommandQueue(q);
        clReleaseContext(ctx);
    });
    r.note = "each with a queue and a 64 KiB buffer, filled and read back";
    return r;
}

/// Phase 3: n acquire/release cycles of a GL buffer shared through libduet-interop (cl_khr_gl_
/// sharing where the platform has it, host copies otherwise), each followed by clFinish.
PhaseResult phaseGL(const Target& t, duet::engine::Surface* surface, long n, int samples) {
    PhaseResult r;
    r.phase = "gl";
    r.platform = t.platformName;
    if (!surface) {
        r.skipped = true;
        r.note = "no headless EGL context";
        return r;
    }
    surface->makeCurrent();
    duet::engine::NativeGL native = surface->native();
    duet::interop::GLHandles gl;
    gl.api = native.api == duet::engine::NativeGL::Api::Egl ? duet::interop::GLHandles::Api::Egl
                                                            : duet::interop::GLHandles::Api::Glx;
    gl.display = native.display;
    gl.context = native.context;
    const size_t bytes = 64 * 1024;
    std::vector<float> init(bytes / sizeof(float), 1.0f);
    GLuint vbo = 0;
    glGenBuffers(1, &vbo);
    glBindBuffer(GL_ARRAY_BUFFER, vbo);
    glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(bytes), init.data(), GL_DYNAMIC_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    glFinish();
    {
        duet::interop::Options options;
        options.platform = t.platformName;
        options.profiling = false;
        auto ctx = duet::interop::Context::create(gl, options);
        auto shared = ctx->shareBuffer(vbo, CL_MEM_READ_WRITE);
        runSampled(r, n, samples, [&](long) {
            {
                duet::interop::AcquireScope scope(*ctx, {shared.get()});
            }
            duet::interop::check(clFinish(ctx->queue()), "clFinish");
        });
        r.note = "64 KiB buffer, " + ctx->description();
    }
    glDeleteBuffers(1, &vbo);
    return r;
}

std::vector<std::string> splitComma(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty())
            out.push_back(item);
    return out;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"duet-soak: resident memory over many repeated OpenCL operations, per phase"};
    std::string platformsArg = "Duet";
    std::string phasesArg = "enqueue,build,gl,context";
    bool quick = false;
    int samples = 20;
    double scale = 1.0;
    Thresholds thresholds;
    app.add_option("--platforms", platformsArg,
                   "comma-separated platform name substrings, run in turn (e.g. Duet,Portable)");
    app.add_option("--phases", phasesArg, "comma-separated phases: enqueue, build, gl, context");
    app.add_flag("--quick", quick,
                 "counts scaled down (enqueue 10^4, build 100, gl 10^3, context 200)");
    app.add_option("--scale", scale, "multiply every count by this (after --quick)")
        ->check(CLI::PositiveNumber);
    app.add_option("--samples", samples, "resident-memory samples per phase")
        ->check(CLI::Range(4, 1000));
    app.add_option("--threshold", thresholds.kibPer1000,
                   "growth after warm-up, KiB per 1000 operations, above which a phase fails");
    app.add_option("--floor-kib", thresholds.floorKiB,
                   "absolute growth after warm-up below which a phase never fails");
    app.add_option("--inject-leak", g_injectLeak,
                   "leak this many bytes per operation (checks that the verdict can fail)");
    CLI11_PARSE(app, argc, argv);

    const std::vector<std::string> platforms = splitComma(platformsArg);
    const std::vector<std::string> phases = splitComma(phasesArg);
    for (const std::string& ph : phases)
        if (ph != "enqueue" && ph != "build" && ph != "gl" && ph != "context") {
            std::fprintf(stderr, "duet-soak: unknown phase \"%s\"\n", ph.c_str());
            return 2;
        }
    auto count = [&](long full, long quickCount) {
        return std::max(1L, long(double(quick ? quickCount : full) * scale));
    };
    const long nEnqueue = count(1000000, 10000), nBuild = count(10000, 100),
               nGL = count(10000, 1000), nContext = count(10000, 200);

    // PoCL's and Duet's on-disk program caches would turn their builds into file reads.
    setenv("POCL_KERNEL_CACHE", "0", 1);
    setenv("DUET_CACHE", "0", 1);

    // The GL context comes first (the order GL sharing wants), if any phase needs it.
    std::unique_ptr<duet::engine::Surface> surface;
    if (std::find(phases.begin(), phases.end(), "gl") != phases.end()) {
        try {
            duet::engine::SurfaceDesc desc;
            desc.width = 64;
            desc.height = 64;
            surface = duet::engine::createEglSurface(desc);
            std::printf("GL: %s\n", surface->description().c_str());
        } catch (const std::exception& e) {
            std::printf("GL: none (%s); the gl phase is skipped\n", e.what());
        }
    }
    std::printf("RSS sampled %d times per phase; warm-up = first 10%% of operations; a phase "
                "fails when growth after warm-up exceeds %.1f KiB per 1000 operations and %ld "
                "KiB in all\n",
                samples, thresholds.kibPer1000, thresholds.floorKiB);

    std::vector<PhaseResult> results;
    bool failed = false;
    for (const std::string& name : platforms) {
        std::string why;
        std::optional<Target> t = findTarget(name, why);
        if (!t) {
            std::fprintf(stderr, "duet-soak: %s\n", why.c_str());
            failed = true;
            continue;
        }
        std::printf("\n[%s] device \"%s\"\n", t->platformName.c_str(), t->deviceName.c_str());
        for (const std::string& ph : phases) {
            PhaseResult r;
            try {
                if (ph == "enqueue")
                    r = phaseEnqueue(*t, nEnqueue, samples);
                else if (ph == "build")
                    r = phaseBuild(*t, nBuild, samples);
                else if (ph == "gl")
                    r = phaseGL(*t, surface.get(), nGL, samples);
                else
                    r = phaseContext(*t, nContext, samples);
            } catch (const std::exception& e) {
                std::printf("\n== %s on %s: FAILED: %s\n", ph.c_str(), t->platformName.c_str(),
                            e.what());
                failed = true;
                continue;
            }
            evaluate(r, thresholds);
            printCurve(r, thresholds);
            std::fflush(stdout);
            failed = failed || r.leak;
            results.push_back(r);
        }
    }

    std::printf("\n%-8s %-34s %10s %14s %12s  %s\n", "phase", "platform", "operations",
                "KiB/1000 ops", "grown KiB", "verdict");
    for (const PhaseResult& r : results) {
        if (r.skipped) {
            std::printf("%-8s %-34s %10s %14s %12s  skipped (%s)\n", r.phase.c_str(),
                        r.platform.substr(0, 34).c_str(), "-", "-", "-", r.note.c_str());
            continue;
        }
        std::printf("%-8s %-34s %10ld %14.2f %12ld  %s\n", r.phase.c_str(),
                    r.platform.substr(0, 34).c_str(), r.ops, r.slopeKiBPer1000, r.grownKiB,
                    r.leak ? "GROWS" : "flat");
    }
    return failed ? 1 : 0;
}
