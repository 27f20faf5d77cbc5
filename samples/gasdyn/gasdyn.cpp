// duet-gasdyn: 2D compressible gas dynamics by MUSCL-Hancock on OpenCL (kernels/gasdyn), the
// density, pressure or schlieren field written by a kernel into a GL texture shared through
// libduet-interop and drawn full-window (aspect kept) by shaders/gasdyn.
#include "gasdyn_sim.hpp"

#include "duet/engine/app/compute.hpp"
#include "duet/engine/app/registry.hpp"
#include "duet/engine/error.hpp"
#include "duet/engine/gfx/gl_objects.hpp"
#include "duet/engine/gfx/shader.hpp"
#include "duet/interop/interop.hpp"

#ifdef DUET_GASDYN_MPI
#include "gasdyn_mpi_app.hpp"
#include "duet/engine/app/options.hpp"
#endif

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace {

using namespace duet::engine;
namespace interop = duet::interop;
namespace gasdyn = duet::gasdyn;

class GasdynSample final : public Sample {
public:
#ifdef DUET_GASDYN_MPI
    /// Rank 0 of an MPI run: the field comes from every rank's block (gasdyn_mpi_app.hpp).
    void enableMpi(const gasdyn::mpi::RunOptions& options) { m_mpiOptions = options; }
#endif

    void initializeGL(Context& ctx) override {
        m_program = gl::loadProgram({"gasdyn/field.vert.glsl", "gasdyn/field.frag.glsl"});
        m_vao = gl::VertexArray::create();
        ctx.setInfo("renderer", reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
    }

    void initializeCompute(Context& ctx) override {
        m_cl = createInteropContext(ctx);
#ifdef DUET_GASDYN_MPI
        if (m_mpiOptions) {
            guarded([&] {
                m_runner = std::make_unique<gasdyn::mpi::FrameRunner>(
                    MPI_COMM_WORLD, m_cl->context(), m_cl->device(), m_cl->queue(), *m_mpiOptions);
                m_renderer = std::make_unique<gasdyn::Renderer>(m_cl->context(), m_cl->device(),
                                                                m_cl->queue());
            });
            int ranks = 1;
            MPI_Comm_size(MPI_COMM_WORLD, &ranks);
            ctx.setInfo("ranks", std::to_string(ranks));
            announceDevice(ctx, "duet-gasdyn", *m_cl);
            return;
        }
#endif
        guarded([&] {
            m_sim = std::make_unique<gasdyn::Simulator>(m_cl->context(), m_cl->device(),
                                                        m_cl->queue(), solverOptions());
            m_renderer =
                std::make_unique<gasdyn::Renderer>(m_cl->context(), m_cl->device(), m_cl->queue());
        });
        m_builtLimiter = m_limiter;
        m_builtRiemann = m_riemann;
        announceDevice(ctx, "duet-gasdyn", *m_cl);
    }

    void parameters(Parameters& p) override {
        p.addChoice("problem", &m_problem, gasdyn::problemNames());
        p.addInt("resolution", &m_resolution, 16, 4096);
        p.addFloat("cfl", &m_cfl, 0.05f, 0.95f);
        p.addChoice("limiter", &m_limiter, {"minmod", "van-leer", "mc"});
        p.addChoice("riemann", &m_riemann, {"hllc", "exact"});
        p.addChoice("field", &m_field, {"density", "pressure", "schlieren"});
        p.addFloat("gamma", &m_gamma, 1.05f, 3.0f);
        p.addInt("steps per frame", &m_stepsPerFrame, 1, 100);
        p.addFloat("schlieren contrast", &m_contrast, 1.0f, 50.0f);
        p.addBool("stop at end time", &m_stopAtEnd);
        p.addBool("paused", &m_paused);
        p.addBool("restart", &m_restart);
#ifdef DUET_GASDYN_MPI
        if (m_mpiOptions)
            p.addBool("checkpoint", &m_checkpoint); // write one after this frame (MPI runs)
#endif
    }

    void update(Context& ctx, double) override {
#ifdef DUET_GASDYN_MPI
        if (m_runner) {
            // The other ranks may be inside a collective this rank will not reach: a failure
            // ends the whole run (the engine's orderly exit would leave them waiting).
            try {
                updateDistributed(ctx);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "duet-gasdyn: %s\n", e.what());
                std::fflush(stderr);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            return;
        }
#endif
        guarded([&] {
            if (!m_texture || m_problem != m_builtProblem || m_resolution != m_builtResolution ||
                m_gamma != m_builtGamma || m_restart)
                rebuild(ctx);
            if (m_limiter != m_builtLimiter || m_riemann != m_builtRiemann) {
                clFinish(m_cl->queue());
                m_sim->setOptions(solverOptions());
                m_builtLimiter = m_limiter;
                m_builtRiemann = m_riemann;
            }
            advance(ctx);
        });
    }

    void render(Context& ctx) override {
        glClearColor(0.02f, 0.02f, 0.03f, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
        if (!m_texture)
            return;
        const gasdyn::Grid& g = m_sim ? m_sim->grid() : m_shownGrid;
        gasdyn::Rect r = gasdyn::letterbox(g.width() / g.height(), ctx.width(), ctx.height());
        glViewport(r.x, r.y, r.w, r.h);
        glDisable(GL_DEPTH_TEST);
        glDisable(GL_BLEND);
        glUseProgram(m_program.id());
        glActiveTexture(GL_TEXTURE0);
        glBindTexture(GL_TEXTURE_2D, m_texture.id());
        gl::setUniform(m_program.id(), "field", 0);
        glBindVertexArray(m_vao.id());
        glDrawArrays(GL_TRIANGLES, 0, 3);
        glBindVertexArray(0);
        glBindTexture(GL_TEXTURE_2D, 0);
        glUseProgram(0);
        glViewport(0, 0, ctx.width(), ctx.height());
    }

    void shutdown(Context&) override {
#ifdef DUET_GASDYN_MPI
        if (m_runner && m_runner->sim() && m_builtProblem >= 0) {
            try {
                gasdyn::mpi::DistributedSimulator& d = *m_runner->sim();
                std::printf("duet-gasdyn: %s %dx%d on %d ranks (%dx%d), t = %.6f after %ld "
                            "steps\n",
                            gasdyn::problemNames()[m_builtProblem].c_str(), d.grid().nx,
                            d.grid().ny, d.size(), d.block().px, d.block().py, d.time(), d.steps());
                std::fflush(stdout);
            } catch (const interop::Error&) {
            }
        }
        m_runner.reset();
        if (m_view)
            clReleaseMemObject(m_view);
        m_view = nullptr;
#endif
        // Only once a problem was set up (the first update): before that, m_builtProblem is -1
        // and indexing problemNames() with it read a std::string from before the vector's
        // storage (the crash, and the double free, at exit after a bad --set).
        if (m_sim && m_cl && m_builtProblem >= 0) {
            try {
                std::printf("duet-gasdyn: %s %dx%d, t = %.6f after %ld steps\n",
                            gasdyn::problemNames()[m_builtProblem].c_str(), m_sim->grid().nx,
                            m_sim->grid().ny, m_sim->time(), m_sim->steps());
                std::fflush(stdout);
            } catch (const interop::Error&) {
                // Nothing to report when the device failed; the loop already said why.
            }
        }
        m_image.reset();
        m_renderer.reset();
        m_sim.reset();
        m_cl.reset();
        m_texture.reset();
        m_vao.reset();
        m_program.reset();
    }

private:
    template <typename F> void guarded(F&& body) {
        try {
            body();
        } catch (const interop::Error& e) {
            throw Error(e.what()); // the engine prefixes the sample name
        } catch (const std::invalid_argument& e) {
            throw Error(e.what());
        }
    }

    gasdyn::SolverOptions solverOptions() const {
        gasdyn::SolverOptions o;
        o.limiter = gasdyn::Limiter(m_limiter);
        o.riemann = m_riemann ? gasdyn::RiemannSolver::Exact : gasdyn::RiemannSolver::Hllc;
        return o;
    }

    // (Re)creates the problem, the texture and its CL image; GL objects after the CL context,
    // their CL views after them.
    void rebuild(Context& ctx) {
        clFinish(m_cl->queue());
        m_image.reset();
        gasdyn::Setup setup =
            gasdyn::makeSampleProblem(gasdyn::Problem(m_problem), m_resolution, m_gamma);
        m_sim->load(setup);
        m_endTime = setup.tEnd;
        const gasdyn::Grid& g = setup.grid;
        m_texture = gl::Texture::create();
        glBindTexture(GL_TEXTURE_2D, m_texture.id());
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, g.nx, g.ny, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
        glBindTexture(GL_TEXTURE_2D, 0);
        m_image = m_cl->shareTexture(GL_TEXTURE_2D, 0, m_texture.id(), CL_MEM_WRITE_ONLY);
        m_builtProblem = m_problem;
        m_builtResolution = m_resolution;
        m_builtGamma = m_gamma;
        m_restart = false;
        // The first picture needs the figures (ranges) of the initial state.
        m_sim->reduce(m_cfl, m_endTime, true);
        ctx.setInfo("grid", std::to_string(g.nx) + " x " + std::to_string(g.ny) + " cells");
        m_drawn = false;
    }

    void advance(Context& ctx) {
        using clock = std::chrono::steady_clock;
        double tEnd = m_stopAtEnd ? m_endTime : std::numeric_limits<double>::infinity();
        int steps = m_paused ? 0 : m_stepsPerFrame;
        if (steps == 0 && m_drawn && m_field == m_drawnField && m_contrast == m_drawnContrast)
            return; // the texture already shows this state
        auto t0 = clock::now();
        bool schlieren = m_field == int(gasdyn::Field::Schlieren);
        if (steps == 0 && schlieren)
            m_sim->reduce(m_cfl, tEnd, true); // the gradient's scale for a field just switched to
        for (int s = 0; s < steps; ++s)
            m_sim->step(m_cfl, tEnd, schlieren);
        interop::check(clFinish(m_cl->queue()), "clFinish(steps)");
        auto t1 = clock::now();
        std::optional<interop::AcquireScope> scope;
        scope.emplace(*m_cl, std::initializer_list<interop::SharedObject*>{m_image.get()});
        auto t2 = clock::now();
        m_renderer->render(*m_sim, m_image->mem(), gasdyn::Field(m_field), m_contrast);
        interop::check(clFinish(m_cl->queue()), "clFinish(render_field)");
        auto t3 = clock::now();
        scope->release();
        auto t4 = clock::now();
        auto seconds = [](auto d) { return std::chrono::duration<double>(d).count(); };
        double compute = seconds((t1 - t0) + (t3 - t2));
        ctx.stats().add(phase::Compute, compute);
        ctx.stats().add(phase::AcquireRelease, seconds((t2 - t1) + (t4 - t3)));
        if (steps > 0) {
            ctx.stats().add("solver step", seconds(t1 - t0) / steps);
            const gasdyn::Grid& g = m_sim->grid();
            double rate = double(g.nx) * g.ny * steps / seconds(t1 - t0);
            ctx.setInfo("cell updates/s", std::to_string(rate / 1e6) + " M");
        }
        ctx.stats().add("render_field", seconds(t3 - t2));
        ctx.setInfo("t", std::to_string(m_sim->time()) + " (" + std::to_string(m_sim->steps()) +
                             " steps)");
        m_drawn = true;
        m_drawnField = m_field;
        m_drawnContrast = m_contrast;
    }

#ifdef DUET_GASDYN_MPI
    // Rank 0 of an MPI run: broadcasts the UI's state, steps its own block with the others,
    // and draws the field gathered from every rank (down-sampled to the window).
    void updateDistributed(Context& ctx) {
        using clock = std::chrono::steady_clock;
        gasdyn::mpi::FrameCommand c;
        c.problem = m_problem;
        c.resolution = m_resolution;
        c.limiter = m_limiter;
        c.riemann = m_riemann;
        c.field = m_field;
        c.steps = m_paused ? 0 : m_stepsPerFrame;
        c.rebuild = !m_texture || m_problem != m_builtProblem ||
                    m_resolution != m_builtResolution || m_gamma != m_builtGamma || m_restart;
        c.stopAtEnd = m_stopAtEnd;
        c.viewWidth = ctx.width();
        c.viewHeight = ctx.height();
        c.checkpoint = m_checkpoint;
        c.gamma = m_gamma;
        c.cfl = m_cfl;
        if (!c.rebuild && c.steps == 0 && !c.checkpoint && m_drawn && m_field == m_drawnField &&
            m_contrast == m_drawnContrast && m_limiter == m_builtLimiter &&
            m_riemann == m_builtRiemann && c.viewWidth == m_drawnWidth &&
            c.viewHeight == m_drawnHeight)
            return; // the texture already shows this state
        auto t0 = clock::now();
        gasdyn::mpi::FrameRunner::broadcast(c, MPI_COMM_WORLD);
        m_runner->execute(c);
        auto t1 = clock::now();
#ifdef DUET_GASDYN_HDF5
        if (const auto& info = m_runner->restarted(); info && !m_restartApplied) {
            // The run continues the checkpoint's problem: the UI shows it.
            m_restartApplied = true;
            m_problem = m_builtProblem = info->problem;
            m_resolution = m_builtResolution = info->resolution;
            m_gamma = m_builtGamma = info->gamma;
            m_limiter = info->limiter;
            m_riemann = info->riemann;
            m_restart = false;
            c.rebuild = 0;
        }
#endif
        m_builtLimiter = m_limiter;
        m_builtRiemann = m_riemann;
        m_checkpoint = false;
        if (c.rebuild) {
            m_builtProblem = m_problem;
            m_builtResolution = m_resolution;
            m_builtGamma = m_gamma;
            m_restart = false;
        }
        const gasdyn::Grid& v = m_runner->viewGrid();
        if (!m_texture || v.nx != m_shownGrid.nx || v.ny != m_shownGrid.ny)
            recreateView(v);
        m_shownGrid = v;
        // The shown cells into a buffer of the solver's layout, drawn by render_field with the
        // figures every rank agreed on (rank 0's clock and figures are the global ones).
        std::vector<cl_float4> host(v.cells(), cl_float4{{1, 0, 0, 1}});
        const std::vector<cl_float4>& cells = m_runner->view();
        for (int j = 0; j < v.ny; ++j)
            std::copy_n(&cells[size_t(j) * size_t(v.nx)], v.nx, &host[v.index(0, j)]);
        interop::check(clEnqueueWriteBuffer(m_cl->queue(), m_view, CL_TRUE, 0,
                                            host.size() * sizeof(cl_float4), host.data(), 0,
                                            nullptr, nullptr),
                       "clEnqueueWriteBuffer(view)");
        gasdyn::mpi::DistributedSimulator& d = *m_runner->sim();
        auto t2 = clock::now();
        {
            interop::AcquireScope scope(*m_cl, {m_image.get()});
            m_renderer->render(m_view, v, d.setup().gamma, d.local().figuresBuffer(),
                               m_image->mem(), gasdyn::Field(m_field), m_contrast);
            interop::check(clFinish(m_cl->queue()), "clFinish(render_field)");
            scope.release();
        }
        auto t3 = clock::now();
        auto seconds = [](auto dt) { return std::chrono::duration<double>(dt).count(); };
        ctx.stats().add(phase::Compute, seconds((t1 - t0) + (t3 - t2)));
        if (c.steps > 0) {
            ctx.stats().add("solver step", seconds(t1 - t0) / c.steps);
            ctx.stats().add("halo exchange", (d.haloSeconds() - m_haloSeen) / c.steps);
        }
        ctx.setInfo("grid", std::to_string(d.grid().nx) + " x " + std::to_string(d.grid().ny) +
                                " cells on " + std::to_string(d.block().px) + " x " +
                                std::to_string(d.block().py) + " ranks, shown " +
                                std::to_string(v.nx) + " x " + std::to_string(v.ny));
        ctx.setInfo("t", std::to_string(d.time()) + " (" + std::to_string(d.steps()) + " steps)");
        m_haloSeen = d.haloSeconds();
        m_drawn = true;
        m_drawnField = m_field;
        m_drawnContrast = m_contrast;
        m_drawnWidth = c.viewWidth;
        m_drawnHeight = c.viewHeight;
    }

    // The texture, its CL image and the view buffer for a shown grid of a new size.
    void recreateView(const gasdyn::Grid& v) {
        clFinish(m_cl->queue());
        m_image.reset();
        if (m_view)
            clReleaseMemObject(m_view);
        cl_int err;
        m_view = clCreateBuffer(m_cl->context(), CL_MEM_READ_ONLY, v.cells() * sizeof(cl_float4),
                                nullptr, &err);
        interop::check(err, "clCreateBuffer(view)");
        m_texture = gl::Texture::create();
        glBindTexture(GL_TEXTURE_2D, m_texture.id());
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, v.nx, v.ny, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
        glBindTexture(GL_TEXTURE_2D, 0);
        m_image = m_cl->shareTexture(GL_TEXTURE_2D, 0, m_texture.id(), CL_MEM_WRITE_ONLY);
    }

    std::optional<gasdyn::mpi::RunOptions> m_mpiOptions;
    std::unique_ptr<gasdyn::mpi::FrameRunner> m_runner;
    cl_mem m_view = nullptr;
    int m_drawnWidth = 0, m_drawnHeight = 0;
    double m_haloSeen = 0;
    bool m_restartApplied = false;
#endif
    gasdyn::Grid m_shownGrid; // the grid the texture shows (an MPI run's down-sampled field)
    bool m_checkpoint = false;

    std::unique_ptr<interop::Context> m_cl;
    std::unique_ptr<gasdyn::Simulator> m_sim;
    std::unique_ptr<gasdyn::Renderer> m_renderer;
    std::unique_ptr<interop::SharedObject> m_image;
    gl::Program m_program;
    gl::VertexArray m_vao;
    gl::Texture m_texture;
    double m_endTime = 0;
    bool m_drawn = false;
    int m_drawnField = -1;
    float m_drawnContrast = 0;
    int m_builtProblem = -1, m_builtResolution = 0, m_builtLimiter = -1, m_builtRiemann = -1;
    float m_builtGamma = 0;

    int m_problem = int(gasdyn::Problem::LaxLiu3);
    int m_resolution = 256;
    float m_cfl = 0.8f;
    int m_limiter = int(gasdyn::Limiter::MC);
    int m_riemann = 0;
    int m_field = int(gasdyn::Field::Density);
    float m_gamma = 1.4f;
    int m_stepsPerFrame = 2;
    float m_contrast = 8.0f;
    bool m_stopAtEnd = false;
    bool m_paused = false;
    bool m_restart = false;
};

} // namespace

DUET_REGISTER_SAMPLE(
    GasdynSample, "duet-gasdyn",
    "2D gas dynamics (MUSCL-Hancock, HLLC) in OpenCL, drawn from a shared texture");

#ifdef DUET_GASDYN_MPI
// main() of the MPI build (duet-engine-main's otherwise): started by mpirun, rank 0 runs the
// sample and broadcasts each frame's command, the other ranks follow in runWorker. Started
// without a launcher, the single-process program as before.
namespace {

namespace gmpi = duet::gasdyn::mpi;

int runMpi(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    // Duet's CPU device sizes its pool from the affinity mask: the host's cores shared out.
    gmpi::HostRanks host = gmpi::hostRanks(MPI_COMM_WORLD);
    gmpi::shareHostCores(host);
    std::vector<std::string> args(argv, argv + argc);
    gmpi::RunOptions run;
    std::string error = gmpi::takeRunOptions(args, run);
    int code = 0;
    if (rank != 0) {
        if (error.empty())
            code = gmpi::runWorker(MPI_COMM_WORLD, run, host);
        else
            gmpi::FrameRunner::broadcast({}, MPI_COMM_WORLD); // rank 0's Quit
    } else {
        Options options;
        std::vector<const char*> argvKept;
        for (const std::string& a : args)
            argvKept.push_back(a.c_str());
        ParseResult parsed = parseCommandLine(int(argvKept.size()), argvKept.data(), options);
        if (!error.empty()) {
            std::fprintf(stderr, "%s\nRun with --help for the options.\n", error.c_str());
            code = kUsageError;
        } else if (parsed.exit) {
            std::fprintf(parsed.exitCode ? stderr : stdout, "%s\n", parsed.message.c_str());
            if (parsed.exitCode == 0 && parsed.message.find("--help") != std::string::npos)
                std::printf("\n%s", gmpi::runOptionsHelp().c_str());
            code = parsed.exitCode;
        } else {
            GasdynSample sample;
            sample.enableMpi(run);
            code = runSample(sample, "duet-gasdyn", options);
        }
        gmpi::FrameCommand quit;
        quit.op = gmpi::FrameCommand::Quit;
        gmpi::FrameRunner::broadcast(quit, MPI_COMM_WORLD);
    }
    std::fflush(stdout);
    MPI_Finalize();
    return code;
}

} // namespace

int main(int argc, char** argv) {
    if (gmpi::launchedByMpi())
        return runMpi(argc, argv);
    int code = duet::engine::runMain(argc, argv);
    for (int k = 1; k < argc; ++k)
        if (std::string(argv[k]) == "--help" || std::string(argv[k]) == "-h")
            std::printf("\n%s", gmpi::runOptionsHelp().c_str());
    return code;
}
#endif
