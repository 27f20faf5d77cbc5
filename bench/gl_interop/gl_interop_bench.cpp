// duet-gl-interop-bench: what sharing one GL vertex buffer with OpenCL costs per frame — an
// acquire + release pair, alone and around a one-work-item kernel — for each way the buffer
// can travel: Duet sharing it in place, in the device's memory (cl_duet_gl_device_memory, where
// the device has it), Duet's runtime copying it (DUET_GL_BUFFERS=copy), and
// libduet-interop's host-copy fallback on Duet and on PoCL. One process, one GL context.
#include "duet/engine/gfx/gl.hpp"
#include "duet/engine/platform/surface.hpp"
#include "duet/interop/interop.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using duet::interop::AcquireScope;

/// One way of sharing the buffer.
struct Path {
    std::string key;           ///< JSON key
    std::string label;         ///< table column
    std::string platform;      ///< platform name substring
    bool runtimeCopies;        ///< DUET_GL_BUFFERS=copy while the buffer is shared
    bool forceHostCopy;        ///< interop's fallback even where the platform can share
    bool deviceMemory = false; ///< the buffer's store moved into the device's memory first
};

struct Figures {
    std::optional<double> pairUs, kernelUs; ///< medians; empty when the path failed
    std::string mode;                       ///< interop's description of the context
    std::string failure;
};

const char* kTouch = R"(
__kernel void touch(__global float *v) { v[0] += 1.0f; }
)";

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? NAN : v[v.size() / 2];
}

/// The buffer's first float and a sample of the rest, as GL's draws see them: copied by GL into a
/// fresh buffer on the GPU and read back (on NVIDIA's GL, glGetBufferSubData of a buffer moved
/// into the device's memory returns its contents from before the move).
bool glBufferHolds(GLuint vbo, float first, const std::vector<float>& init) {
    std::vector<float> back(init.size());
    const GLsizeiptr bytes = GLsizeiptr(back.size() * sizeof(float));
    GLuint copy = 0;
    glGenBuffers(1, &copy);
    glBindBuffer(GL_COPY_WRITE_BUFFER, copy);
    glBufferData(GL_COPY_WRITE_BUFFER, bytes, nullptr, GL_STREAM_READ);
    glBindBuffer(GL_COPY_READ_BUFFER, vbo);
    glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, bytes);
    glGetBufferSubData(GL_COPY_WRITE_BUFFER, 0, bytes, back.data());
    glBindBuffer(GL_COPY_READ_BUFFER, 0);
    glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    glDeleteBuffers(1, &copy);
    if (back[0] != first)
        return false;
    for (size_t i = 1; i < back.size(); i += 997)
        if (back[i] != init[i])
            return false;
    return back.back() == init.back();
}

/// How the application makes its buffer: glBufferData with a usage hint, or immutable storage
/// (glBufferStorage, no client access). Drivers place buffers by these, and a copy's speed
/// depends on where the buffer lives.
struct Usage {
    std::string name;
    GLenum hint; ///< 0: glBufferStorage
};

/// glBufferStorage (GL 4.4, beyond the engine's 3.3 loader), through the EGL the surface loaded;
/// null where the context has none.
using BufferStorageFn = void (*)(GLenum, GLsizeiptr, const void*, GLbitfield);
BufferStorageFn bufferStorage() {
    static BufferStorageFn fn = [] {
        // The surface loaded libEGL (maybe privately): look in it, then everywhere.
        void* egl = dlopen("libEGL.so.1", RTLD_LAZY | RTLD_NOLOAD);
        void* sym = egl ? dlsym(egl, "eglGetProcAddress") : nullptr;
        if (!sym)
            sym = dlsym(RTLD_DEFAULT, "eglGetProcAddress");
        auto getProc = reinterpret_cast<void* (*)(const char*)>(sym);
        return getProc ? reinterpret_cast<BufferStorageFn>(getProc("glBufferStorage")) : nullptr;
    }();
    return fn;
}

void makeBuffer(GLuint vbo, const Usage& usage, size_t bytes, const void* data) {
    glBindBuffer(GL_ARRAY_BUFFER, vbo);
    if (usage.hint)
        glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(bytes), data, usage.hint);
    else
        bufferStorage()(GL_ARRAY_BUFFER, GLsizeiptr(bytes), data, 0);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
}

/// GL alone: the buffer copied into another of the same kind and back (what an acquire and a
/// release through copies must move at least), then glFinish; median us.
double glCopyFloor(const Usage& usage, size_t bytes, int pairs) {
    std::vector<float> init(bytes / sizeof(float), 1.0f);
    GLuint b[2] = {0, 0};
    glGenBuffers(2, b);
    makeBuffer(b[0], usage, bytes, init.data());
    makeBuffer(b[1], usage, bytes, nullptr);
    auto round = [&] {
        glBindBuffer(GL_COPY_READ_BUFFER, b[0]);
        glBindBuffer(GL_COPY_WRITE_BUFFER, b[1]);
        glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, GLsizeiptr(bytes));
        glBindBuffer(GL_COPY_READ_BUFFER, b[1]);
        glBindBuffer(GL_COPY_WRITE_BUFFER, b[0]);
        glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, GLsizeiptr(bytes));
        glFinish();
    };
    round();
    std::vector<double> us;
    for (int i = 0; i < pairs; ++i) {
        auto t0 = Clock::now();
        round();
        us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    glBindBuffer(GL_COPY_READ_BUFFER, 0);
    glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    glDeleteBuffers(2, b);
    return median(us);
}

Figures measure(const Path& path, const duet::interop::GLHandles& gl, size_t bytes, int pairs,
                const Usage& usage) {
    Figures out;
    std::vector<float> init(bytes / sizeof(float));
    for (size_t i = 0; i < init.size(); ++i)
        init[i] = float(i % 4096);
    init[0] = 0.0f;
    GLuint vbo = 0;
    glGenBuffers(1, &vbo);
    makeBuffer(vbo, usage, bytes, init.data());
    glFinish();
    try {
        duet::interop::Options options;
        options.platform = path.platform;
        options.forceHostCopy = path.forceHostCopy;
        options.profiling = false;
        auto ctx = duet::interop::Context::create(gl, options);
        out.mode = ctx->description();
        // Duet reads DUET_GL_BUFFERS when the context shares its first GL buffer.
        if (path.runtimeCopies)
            setenv("DUET_GL_BUFFERS", "copy", 1);
        // glWrites = false lets libduet-interop move the store into the device's memory
        // (cl_duet_gl_device_memory); GL still reads the buffer back below.
        auto shared = ctx->shareBuffer(vbo, CL_MEM_READ_WRITE, !path.deviceMemory);
        unsetenv("DUET_GL_BUFFERS");
        if (path.deviceMemory && !shared->inDeviceMemory())
            throw std::runtime_error("the device did not take the buffer's store (it lists no "
                                     "cl_duet_gl_device_memory, or GL refused its memory)");
        cl_int err = CL_SUCCESS;
        cl_program program = clCreateProgramWithSource(ctx->context(), 1, &kTouch, nullptr, &err);
        duet::interop::check(err, "clCreateProgramWithSource");
        cl_device_id device = ctx->device();
        duet::interop::check(clBuildProgram(program, 1, &device, "", nullptr, nullptr),
                             "clBuildProgram");
        cl_kernel kernel = clCreateKernel(program, "touch", &err);
        duet::interop::check(err, "clCreateKernel");
        cl_mem mem = shared->mem();
        duet::interop::check(clSetKernelArg(kernel, 0, sizeof mem, &mem), "clSetKernelArg");

        // A frame's interop: acquire, (kernel), release, and the queue drained, so each pair
        // is complete when timed, whatever a platform defers.
        auto frame = [&](bool withKernel) {
            {
                AcquireScope scope(*ctx, {shared.get()});
                if (withKernel) {
                    size_t one = 1;
                    duet::interop::check(clEnqueueNDRangeKernel(ctx->queue(), kernel, 1, nullptr,
                                                                &one, nullptr, 0, nullptr, nullptr),
                                         "clEnqueueNDRangeKernel");
                }
            }
            duet::interop::check(clFinish(ctx->queue()), "clFinish");
        };
        for (bool withKernel : {false, true}) {
            frame(withKernel); // warm-up: first-use costs (code generation, probes) not timed
            std::vector<double> us;
            for (int i = 0; i < pairs; ++i) {
                auto t0 = Clock::now();
                frame(withKernel);
                us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
            }
            // Valid only if GL holds what CL did: one increment per kernel frame, nothing else
            // changed.
            float expected = withKernel ? float(pairs + 1) : 0.0f;
            if (!glBufferHolds(vbo, expected, init)) {
                out.failure = std::string("GL's buffer is wrong after the ") +
                              (withKernel ? "kernel" : "acquire/release") + " frames";
                break;
            }
            (withKernel ? out.kernelUs : out.pairUs) = median(us);
        }
        clReleaseKernel(kernel);
        clReleaseProgram(program);
    } catch (const std::exception& e) {
        out.failure = e.what();
    }
    unsetenv("DUET_GL_BUFFERS");
    glDeleteBuffers(1, &vbo);
    return out;
}

std::string cell(const std::optional<double>& v) {
    char b[32];
    if (!v)
        return "FAIL";
    std::snprintf(b, sizeof b, "%.1f", *v);
    return b;
}

std::string ratio(const std::optional<double>& a, const std::optional<double>& b) {
    char s[32];
    if (!a || !b || *b <= 0)
        return "-";
    std::snprintf(s, sizeof s, "%.1fx", *a / *b);
    return s;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"duet-gl-interop-bench: acquire + release of a shared GL buffer, Duet in place vs "
                 "host copies"};
    bool quick = false;
    std::string jsonPath;
    double mib = 16;
    int pairs = 0;
    std::string usageName = "dynamic";
    app.add_flag("--quick", quick, "fewer pairs (50 instead of 300)");
    app.add_option("--usage", usageName,
                   "how the GL buffer is made: glBufferData with GL_DYNAMIC_DRAW (default), "
                   "GL_STATIC_DRAW or GL_STREAM_DRAW, or immutable glBufferStorage")
        ->check(CLI::IsMember({"dynamic", "static", "stream", "storage"}));
    app.add_option("--json", jsonPath, "also write the figures as JSON to this file");
    app.add_option("--size-mib", mib, "buffer size in MiB (default 16)");
    app.add_option("--pairs", pairs, "timed frames per figure (default 300, quick 50)");
    CLI11_PARSE(app, argc, argv);
    if (pairs <= 0)
        pairs = quick ? 50 : 300;
    const size_t bytes = size_t(mib * 1024 * 1024) / 4 * 4;
    const Usage usage{usageName, usageName == "dynamic"  ? GLenum(GL_DYNAMIC_DRAW)
                                 : usageName == "static" ? GLenum(GL_STATIC_DRAW)
                                 : usageName == "stream" ? GLenum(GL_STREAM_DRAW)
                                                         : GLenum(0)};

    std::unique_ptr<duet::engine::Surface> surface;
    try {
        duet::engine::SurfaceDesc desc;
        desc.width = 64;
        desc.height = 64;
        surface = duet::engine::createEglSurface(desc);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "duet-gl-interop-bench: no headless GL context: %s\n", e.what());
        return 1;
    }
    duet::engine::NativeGL native = surface->native();
    duet::interop::GLHandles gl;
    gl.api = native.api == duet::engine::NativeGL::Api::Egl ? duet::interop::GLHandles::Api::Egl
                                                            : duet::interop::GLHandles::Api::Glx;
    gl.display = native.display;
    gl.context = native.context;
    std::printf("GL: %s\nbuffer: %.1f MiB (%s), %d timed frames per figure (median)\n",
                surface->description().c_str(), double(bytes) / (1 << 20),
                usage.hint ? ("glBufferData, " + usageName).c_str() : "glBufferStorage", pairs);
    if (!usage.hint && !bufferStorage()) {
        std::fprintf(stderr, "duet-gl-interop-bench: --usage storage: this GL context has no "
                             "glBufferStorage\n");
        return 2;
    }
    const double floorUs = glCopyFloor(usage, bytes, pairs);
    std::printf("GL alone, the buffer copied into another and back + glFinish: %.1f us\n", floorUs);

    const std::vector<Path> paths = {
        {"duet_in_place", "Duet in place", "Duet", false, false},
        {"duet_device_memory", "Duet dev memory", "Duet", false, false, true},
        {"duet_runtime_copies", "Duet copies", "Duet", true, false},
        {"duet_host_copy", "Duet host copy", "Duet", false, true},
        {"pocl_host_copy", "PoCL host copy", "Portable Computing Language", false, true},
    };
    std::vector<Figures> figures;
    for (const Path& p : paths) {
        std::fprintf(stderr, "[%s] ...\n", p.label.c_str());
        figures.push_back(measure(p, gl, bytes, pairs, usage));
        const Figures& f = figures.back();
        std::fprintf(stderr, "[%s] %s%s%s\n", p.label.c_str(), f.mode.c_str(),
                     f.failure.empty() ? "" : ": ", f.failure.c_str());
    }

    std::printf("\n%-32s", "figure (us per frame)");
    for (const Path& p : paths)
        std::printf("%16s", p.label.c_str());
    std::printf("\n");
    auto row = [&](const char* name, auto member) {
        std::printf("%-32s", name);
        for (const Figures& f : figures)
            std::printf("%16s", cell(f.*member).c_str());
        std::printf("\n");
        std::printf("%-32s", "  ratio to Duet in place");
        for (const Figures& f : figures)
            std::printf("%16s", ratio(f.*member, figures[0].*member).c_str());
        std::printf("\n");
    };
    row("acquire + release", &Figures::pairUs);
    row("acquire + kernel + release", &Figures::kernelUs);
    std::printf("\nmodes:\n");
    for (size_t i = 0; i < paths.size(); ++i)
        std::printf("  %-16s %s\n", paths[i].label.c_str(),
                    figures[i].mode.empty() ? figures[i].failure.c_str() : figures[i].mode.c_str());

    if (!jsonPath.empty()) {
        nlohmann::json j;
        j["gl"] = surface->description();
        j["bytes"] = bytes;
        j["frames"] = pairs;
        j["usage"] = usageName;
        j["gl_copy_out_and_back_us"] = floorUs;
        for (size_t i = 0; i < paths.size(); ++i) {
            nlohmann::json p;
            p["mode"] = figures[i].mode;
            if (figures[i].pairUs)
                p["acquire_release_us"] = *figures[i].pairUs;
            if (figures[i].kernelUs)
                p["acquire_kernel_release_us"] = *figures[i].kernelUs;
            if (!figures[i].failure.empty())
                p["failure"] = figures[i].failure;
            j["paths"][paths[i].key] = p;
        }
        std::ofstream(jsonPath) << j.dump(2) << "\n";
    }
    bool ok = std::all_of(figures.begin(), figures.end(), [](const Figures& f) {
        return f.failure.empty() || f.failure.find("no OpenCL device") != std::string::npos;
    });
    return ok ? 0 : 1;
}
