// The gas-dynamics solver of duet-gasdyn (kernels/gasdyn) verified on Duet and PoCL: Sod's shock
// tube against the exact Riemann solution with the L1 error falling at the expected order,
// conservation to round-off with periodic boundaries, the CFL reduction against a host maximum,
// the Y sweep against the X sweep on transposed problems, the boundary kernels, and bad input.
#include "support/cl_test.hpp"
#include "support/icd_vendors.hpp"

#include "exact_riemann.hpp"
#include "gasdyn_sim.hpp"
#include "duet/interop/interop.hpp"

#include <catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace gasdyn = duet::gasdyn;
using gasdyn::Axis;
using gasdyn::ExactRiemann;
using gasdyn::Problem;

namespace {

using duet::test::ClOn;
using duet::test::platformsUnderTest;

// Steps until the device clock reaches tEnd (the last step is cut to land on it).
void runTo(gasdyn::Simulator& sim, float cfl, double tEnd) {
    for (int guard = 0; guard < 100000; guard += 16) {
        for (int s = 0; s < 16; ++s)
            sim.step(cfl, tEnd);
        if (float(sim.time()) >= float(tEnd)) // the device's clock is a float
            return;
    }
    FAIL("the clock never reached t = " << tEnd);
}

struct SodErrors {
    double l1 = 0;        ///< L1 density error against the exact solution, per unit length
    double rowSpread = 0; ///< largest density difference between rows (a 1D problem stays 1D)
    double time = 0;
};

SodErrors sodError(gasdyn::Simulator& sim, int n, float cfl) {
    gasdyn::Setup setup = gasdyn::makeProblem(Problem::SodX, n, 4);
    sim.load(setup);
    runTo(sim, cfl, setup.tEnd);
    SodErrors e;
    e.time = sim.time();
    std::vector<cl_float4> cells = sim.state();
    ExactRiemann exact({1.0, 0.0, 1.0}, {0.125, 0.0, 0.1}, 1.4);
    const gasdyn::Grid& g = setup.grid;
    for (int i = 0; i < n; ++i) {
        double rho = exact.sample((g.x(i) - 0.5) / e.time).rho;
        e.l1 += std::abs(cells[size_t(i)].s[0] - rho) * g.dx;
        for (int j = 1; j < g.ny; ++j)
            e.rowSpread =
                std::max(e.rowSpread,
                         double(std::abs(cells[size_t(j) * n + i].s[0] - cells[size_t(i)].s[0])));
    }
    return e;
}

// Totals of the conserved variables in double precision, and of their magnitudes (the scale
// round-off is measured against).
struct Totals {
    double q[4] = {0, 0, 0, 0};
    double magnitude[4] = {0, 0, 0, 0};
};

Totals totals(const std::vector<cl_float4>& cells) {
    Totals t;
    for (const cl_float4& c : cells)
        for (int k = 0; k < 4; ++k) {
            t.q[k] += c.s[k];
            t.magnitude[k] += std::abs(c.s[k]);
        }
    return t;
}

// The setup mirrored about the diagonal: cell (i, j) from (j, i), momenta swapped, boundaries
// swapped.
gasdyn::Setup transposed(const gasdyn::Setup& s) {
    gasdyn::Setup t = s;
    std::swap(t.grid.nx, t.grid.ny);
    std::swap(t.grid.dx, t.grid.dy);
    std::swap(t.grid.x0, t.grid.y0);
    std::swap(t.xLow, t.yLow);
    std::swap(t.xHigh, t.yHigh);
    for (int j = 0; j < t.grid.ny; ++j)
        for (int i = 0; i < t.grid.nx; ++i) {
            cl_float4 c = s.cells[size_t(i) * s.grid.nx + j];
            std::swap(c.s[1], c.s[2]);
            t.cells[size_t(j) * t.grid.nx + i] = c;
        }
    return t;
}

// Largest difference between a run and the transposed run, per component, relative to the
// largest magnitude of that component.
double transposeMismatch(const std::vector<cl_float4>& a, int nx, int ny,
                         const std::vector<cl_float4>& b) {
    double worst = 0;
    for (int k = 0; k < 4; ++k) {
        double scale = 1e-30, diff = 0;
        for (int j = 0; j < ny; ++j)
            for (int i = 0; i < nx; ++i) {
                const cl_float4& p = a[size_t(j) * nx + i];
                const cl_float4& q = b[size_t(i) * ny + j];
                int kq = k == 1 ? 2 : k == 2 ? 1 : k;
                scale = std::max(scale, double(std::abs(p.s[k])));
                diff = std::max(diff, double(std::abs(p.s[k] - q.s[kq])));
            }
        worst = std::max(worst, diff / scale);
    }
    return worst;
}

} // namespace

TEST_CASE("the host exact Riemann solver reproduces Toro's star states", "[gasdyn][exact]") {
    struct Case {
        ExactRiemann::State l, r;
        double pStar, uStar, rhoStarL, rhoStarR;
    };
    // Toro, "Riemann Solvers and Numerical Methods for Fluid Dynamics", table 4.3 (tests 1-5).
    const Case cases[] = {
        {{1.0, 0.0, 1.0}, {0.125, 0.0, 0.1}, 0.30313, 0.92745, 0.42632, 0.26557},
        {{1.0, -2.0, 0.4}, {1.0, 2.0, 0.4}, 0.00189, 0.0, 0.02185, 0.02185},
        {{1.0, 0.0, 1000.0}, {1.0, 0.0, 0.01}, 460.894, 19.5975, 0.57506, 5.99924},
        {{1.0, 0.0, 0.01}, {1.0, 0.0, 100.0}, 46.0950, -6.19633, 5.99242, 0.57511},
        {{5.99924, 19.5975, 460.894},
         {5.99242, -6.19633, 46.0950},
         1691.64,
         8.68975,
         14.2823,
         31.0426},
    };
    for (const Case& c : cases) {
        ExactRiemann e(c.l, c.r, 1.4);
        INFO("pL " << c.l.p << " pR " << c.r.p << ": p* " << e.pressureStar() << " u* "
                   << e.velocityStar());
        CHECK(e.pressureStar() == Approx(c.pStar).epsilon(2e-4).margin(2e-5));
        CHECK(e.velocityStar() == Approx(c.uStar).epsilon(2e-4).margin(2e-5));
        // Just either side of the contact: the star densities.
        double u = e.velocityStar();
        CHECK(e.sample(u - 1e-9).rho == Approx(c.rhoStarL).epsilon(2e-4));
        CHECK(e.sample(u + 1e-9).rho == Approx(c.rhoStarR).epsilon(2e-4));
        // Far out: the initial states.
        CHECK(e.sample(-1e3).rho == c.l.rho);
        CHECK(e.sample(1e3).p == c.r.p);
    }
    // Inside Sod's rarefaction fan the state varies continuously between its head and tail.
    ExactRiemann sod({1.0, 0.0, 1.0}, {0.125, 0.0, 0.1}, 1.4);
    double head = -std::sqrt(1.4), prev = 1.0;
    for (double s = head; s < -0.07; s += 0.05) {
        double rho = sod.sample(s).rho;
        CHECK(rho <= prev + 1e-12);
        prev = rho;
    }
    CHECK_THROWS_AS(ExactRiemann({1.0, 0.0, -1.0}, {1.0, 0.0, 1.0}, 1.4), std::invalid_argument);
    CHECK_THROWS_AS(ExactRiemann({1.0, 0.0, 1.0}, {1.0, 0.0, 1.0}, 1.0), std::invalid_argument);
    // Receding fast enough to open a vacuum.
    CHECK_THROWS_AS(ExactRiemann({1.0, -20.0, 0.4}, {1.0, 20.0, 0.4}, 1.4), std::invalid_argument);
}

TEST_CASE("Sod's shock tube converges to the exact solution at the expected order",
          "[gasdyn][sod]") {
    for (const std::string& platform : platformsUnderTest()) {
        INFO("platform " << platform);
        ClOn cl(platform);
        struct Variant {
            const char* name;
            gasdyn::Limiter limiter;
            gasdyn::RiemannSolver riemann;
            double boundAt100; ///< L1 density error allowed at N = 100
        };
        // Bounds about 1.5x what MUSCL-Hancock schemes reach (Toro ch. 14: ~5e-3 at N = 100).
        const Variant variants[] = {
            {"MC + HLLC", gasdyn::Limiter::MC, gasdyn::RiemannSolver::Hllc, 8e-3},
            {"van Leer + HLLC", gasdyn::Limiter::VanLeer, gasdyn::RiemannSolver::Hllc, 9e-3},
            {"minmod + HLLC", gasdyn::Limiter::Minmod, gasdyn::RiemannSolver::Hllc, 1.2e-2},
            {"MC + exact", gasdyn::Limiter::MC, gasdyn::RiemannSolver::Exact, 8e-3},
        };
        for (const Variant& v : variants) {
            INFO(v.name);
            gasdyn::SolverOptions o;
            o.limiter = v.limiter;
            o.riemann = v.riemann;
            gasdyn::Simulator sim(cl.context, cl.device, cl.queue, o);
            double errors[3];
            const int sizes[3] = {100, 200, 400};
            for (int k = 0; k < 3; ++k) {
                SodErrors e = sodError(sim, sizes[k], 0.8f);
                INFO("N = " << sizes[k] << ": L1 " << e.l1 << ", t " << e.time);
                CHECK(e.time == Approx(0.2).epsilon(1e-6));
                CHECK(e.rowSpread == 0.0); // the rows see identical arithmetic
                errors[k] = e.l1;
            }
            double order1 = std::log2(errors[0] / errors[1]);
            double order2 = std::log2(errors[1] / errors[2]);
            std::printf("gasdyn Sod [%s, %s]: L1(rho) %.3e %.3e %.3e, orders %.2f %.2f\n",
                        platform.c_str(), v.name, errors[0], errors[1], errors[2], order1, order2);
            INFO("L1 " << errors[0] << " " << errors[1] << " " << errors[2] << ", orders " << order1
                       << " " << order2);
            CHECK(errors[0] < v.boundAt100);
            CHECK(errors[2] < v.boundAt100 / 2.5);
            // Shocks and contacts cap the L1 order near 1 whatever the scheme's smooth order.
            CHECK(order1 > 0.6);
            CHECK(order2 > 0.6);
            CHECK(order1 < 1.5);
        }
    }
}

TEST_CASE("Sod along y equals Sod along x transposed, and the sweeps commute with transposition",
          "[gasdyn][symmetry]") {
    for (const std::string& platform : platformsUnderTest()) {
        INFO("platform " << platform);
        ClOn cl(platform);
        gasdyn::Simulator sim(cl.context, cl.device, cl.queue);
        SECTION("Sod") {
            const int n = 200, m = 5;
            gasdyn::Setup x = gasdyn::makeProblem(Problem::SodX, n, m);
            gasdyn::Setup y = gasdyn::makeProblem(Problem::SodY, m, n);
            // The problems themselves are transposes of each other.
            REQUIRE(transposeMismatch(x.cells, n, m, y.cells) == 0.0);
            sim.load(x);
            runTo(sim, 0.8f, 0.2);
            long stepsX = sim.steps();
            std::vector<cl_float4> ax = sim.state();
            sim.load(y);
            runTo(sim, 0.8f, 0.2);
            CHECK(sim.steps() == stepsX);
            std::vector<cl_float4> ay = sim.state();
            double mismatch = transposeMismatch(ax, n, m, ay);
            INFO("largest relative difference " << mismatch << " after " << stepsX << " steps");
            // The sweeps call the same functions on the same numbers; only contraction into
            // fused multiply-adds could differ between the two loops.
            CHECK(mismatch <= 1e-6);
        }
        SECTION("Kelvin-Helmholtz (2D, asymmetric): X-first run against Y-first transposed run") {
            gasdyn::Setup a = gasdyn::makeProblem(Problem::KelvinHelmholtz, 48, 40);
            gasdyn::Setup b = transposed(a);
            sim.load(a);
            for (int s = 0; s < 20; ++s)
                sim.step(0.8f);
            std::vector<cl_float4> ra = sim.state();
            sim.setFirstAxis(Axis::Y);
            sim.load(b);
            for (int s = 0; s < 20; ++s)
                sim.step(0.8f);
            std::vector<cl_float4> rb = sim.state();
            sim.setFirstAxis(Axis::X);
            double mismatch = transposeMismatch(ra, 48, 40, rb);
            // How far the flow moved, so a frozen state could not pass.
            double moved = 0;
            for (size_t c = 0; c < ra.size(); ++c)
                moved = std::max(moved, double(std::abs(ra[c].s[2] - a.cells[c].s[2])));
            INFO("largest relative difference " << mismatch << ", largest change of rho v "
                                                << moved);
            CHECK(moved > 1e-3);
            CHECK(mismatch <= 1e-5);
        }
    }
}

TEST_CASE("mass, momentum and energy are conserved to round-off with periodic boundaries",
          "[gasdyn][conservation]") {
    for (const std::string& platform : platformsUnderTest()) {
        INFO("platform " << platform);
        ClOn cl(platform);
        gasdyn::Simulator sim(cl.context, cl.device, cl.queue);
        // 128 x 128, and a grid that is no multiple of any work-group size.
        for (auto [nx, ny, steps] : {std::tuple{128, 128, 400}, std::tuple{77, 53, 300}}) {
            INFO(nx << " x " << ny << ", " << steps << " steps");
            gasdyn::Setup setup = gasdyn::makeProblem(Problem::KelvinHelmholtz, nx, ny);
            sim.load(setup);
            std::vector<cl_float4> start = sim.state();
            Totals before = totals(start);
            for (int s = 0; s < steps; ++s)
                sim.step(0.8f);
            std::vector<cl_float4> end = sim.state();
            Totals after = totals(end);
            // The flow did move: the shear layers have spread, changing densities by a lot.
            double change = 0;
            for (size_t c = 0; c < end.size(); ++c)
                change = std::max(change, double(std::abs(end[c].s[0] - start[c].s[0])));
            CHECK(change > 0.05);
            const char* names[4] = {"mass", "x momentum", "y momentum", "energy"};
            for (int k = 0; k < 4; ++k) {
                // Every face flux is added to one cell and subtracted from its neighbour, so the
                // totals change only by the rounding of each cell's float update: about
                // 2^-24 |q| per cell and step, in random directions, so the relative drift of
                // the total grows like 6e-8 sqrt(steps / cells). The bound 1e-6 of the summed
                // magnitudes leaves a wide margin yet catches any flux lost at a boundary, a
                // work-group seam (one lost face flux per step is ~1e-4 here).
                double drift = std::abs(after.q[k] - before.q[k]) / after.magnitude[k];
                std::printf("gasdyn conservation [%s, %dx%d, %d steps]: %s relative drift "
                            "%.2e\n",
                            platform.c_str(), nx, ny, steps, names[k], drift);
                INFO(names[k] << ": before " << before.q[k] << ", after " << after.q[k]
                              << ", relative drift " << drift);
                CHECK(drift < 1e-6);
            }
            // Time moved on by the sum of the device's steps.
            CHECK(sim.time() > 0.0);
        }
    }
}

TEST_CASE("the CFL reduction finds the host's maximum, and the clock lands on the end time",
          "[gasdyn][cfl]") {
    for (const std::string& platform : platformsUnderTest()) {
        INFO("platform " << platform);
        ClOn cl(platform);
        gasdyn::Simulator sim(cl.context, cl.device, cl.queue);
        for (auto [problem, nx, ny] :
             {std::tuple{Problem::LaxLiu3, 100, 90}, std::tuple{Problem::KelvinHelmholtz, 37, 300},
              std::tuple{Problem::RayleighTaylor, 64, 192}, std::tuple{Problem::SodY, 1, 50}}) {
            INFO("problem " << int(problem) << ", " << nx << " x " << ny);
            gasdyn::Setup setup = gasdyn::makeProblem(problem, nx, ny);
            sim.load(setup);
            for (int s = 0; s < 5; ++s)
                sim.step(0.5f);
            const float cfl = 0.7f;
            double t0 = sim.time();
            sim.reduce(cfl, std::numeric_limits<double>::infinity(), true);
            gasdyn::Figures f = sim.figures();
            double dt = sim.timeStep();
            // The host's maxima over the same float state, in double precision.
            std::vector<cl_float4> cells = sim.state();
            const gasdyn::Grid& g = setup.grid;
            double rate = 0, rhoMin = 1e300, rhoMax = -1e300, pMin = 1e300, pMax = -1e300;
            size_t argmax = 0;
            for (size_t c = 0; c < cells.size(); ++c) {
                gasdyn::Primitive w = gasdyn::toPrimitive(cells[c], setup.gamma);
                double sound = std::sqrt(setup.gamma * w.p / w.rho);
                double r = std::max((std::abs(w.u) + sound) / g.dx, (std::abs(w.v) + sound) / g.dy);
                if (r > rate) {
                    rate = r;
                    argmax = c;
                }
                rhoMin = std::min(rhoMin, w.rho);
                rhoMax = std::max(rhoMax, w.rho);
                pMin = std::min(pMin, w.p);
                pMax = std::max(pMax, w.p);
            }
            // Largest |grad rho| by central differences between interior cells.
            double grad = 0;
            for (int j = 0; j < g.ny; ++j)
                for (int i = 0; i < g.nx; ++i) {
                    auto rho = [&](int a, int b) {
                        return double(cells[size_t(b) * g.nx + a].s[0]);
                    };
                    double gx =
                        i > 0 && i < g.nx - 1 ? (rho(i + 1, j) - rho(i - 1, j)) / (2 * g.dx) : 0;
                    double gy =
                        j > 0 && j < g.ny - 1 ? (rho(i, j + 1) - rho(i, j - 1)) / (2 * g.dy) : 0;
                    grad = std::max(grad, std::sqrt(gx * gx + gy * gy));
                }
            INFO("device rate " << f.rate << ", host " << rate << " at cell " << argmax
                                << "; gradient " << f.gradRhoMax << ", host " << grad);
            CHECK(f.rate == Approx(rate).epsilon(1e-5));
            CHECK(f.rhoMin == rhoMin); // a maximum of floats is one of them: exact
            CHECK(f.rhoMax == rhoMax);
            CHECK(f.pMin == Approx(pMin).epsilon(1e-4));
            CHECK(f.pMax == Approx(pMax).epsilon(1e-5));
            if (nx > 2 || ny > 2)
                CHECK(f.gradRhoMax == Approx(grad).epsilon(1e-4).margin(1e-3));
            CHECK(dt == Approx(cfl / rate).epsilon(1e-5));
            CHECK(sim.time() == Approx(t0 + dt).epsilon(1e-6));
            // Without the gradient (what a step does unless asked): the same rate, no gradient.
            sim.reduce(cfl);
            gasdyn::Figures plain = sim.figures();
            CHECK(plain.rate == f.rate);
            CHECK(plain.gradRhoMax == 0.0);
        }
        // The end time: the step is cut to land on it exactly, then dt is 0 and nothing moves.
        gasdyn::Setup sod = gasdyn::makeProblem(Problem::SodX, 64, 2);
        sim.load(sod);
        const double tEnd = 0.0123;
        runTo(sim, 0.9f, tEnd);
        CHECK(float(sim.time()) == float(tEnd));
        std::vector<cl_float4> atEnd = sim.state();
        long steps = sim.steps();
        sim.step(0.9f, tEnd);
        CHECK(sim.timeStep() == 0.0);
        CHECK(float(sim.time()) == float(tEnd));
        std::vector<cl_float4> later = sim.state();
        bool same = true;
        for (size_t c = 0; c < later.size(); ++c)
            for (int k = 0; k < 4; ++k)
                same = same && later[c].s[k] == atEnd[c].s[k];
        CHECK(same);
        CHECK(sim.steps() == steps + 1);
    }
}

TEST_CASE("the boundary kernels fill ghost cells as reflective, outflow and periodic walls",
          "[gasdyn][boundary]") {
    using gasdyn::Boundary;
    for (const std::string& platform : platformsUnderTest()) {
        INFO("platform " << platform);
        ClOn cl(platform);
        gasdyn::Simulator sim(cl.context, cl.device, cl.queue);
        const int nx = 13, ny = 7;
        gasdyn::Setup s = gasdyn::makeProblem(Problem::KelvinHelmholtz, nx, ny);
        // Distinct numbers in every cell, so a wrong source cell shows.
        for (int j = 0; j < ny; ++j)
            for (int i = 0; i < nx; ++i)
                s.cells[size_t(j) * nx + i] = {
                    {1.0f + i + 100.0f * j, 0.5f + i, -0.25f - j, 1000.0f + i * j}};
        const Boundary kinds[3] = {Boundary::Reflective, Boundary::Outflow, Boundary::Periodic};
        for (Boundary lo : kinds)
            for (Boundary hi : kinds) {
                INFO("low " << int(lo) << ", high " << int(hi));
                s.xLow = s.yLow = lo;
                s.xHigh = s.yHigh = hi;
                sim.load(s); // fills the ghosts of both axes
                const gasdyn::Grid& g = s.grid;
                std::vector<cl_float4> all(g.cells());
                REQUIRE(clEnqueueReadBuffer(cl.queue, sim.current(), CL_TRUE, 0,
                                            all.size() * sizeof(cl_float4), all.data(), 0, nullptr,
                                            nullptr) == CL_SUCCESS);
                auto cell = [&](int i, int j) { return s.cells[size_t(j) * nx + i]; };
                // Expected ghost k (0 next to the edge) of a side along an axis of n cells.
                auto source = [](Boundary kind, bool high, int k, int n) {
                    if (kind == Boundary::Reflective)
                        return high ? n - 1 - k : k;
                    if (kind == Boundary::Outflow)
                        return high ? n - 1 : 0;
                    return high ? k : n - 1 - k;
                };
                int bad = 0;
                for (int k = 0; k < gasdyn::kGhost; ++k) {
                    for (int j = 0; j < ny; ++j)
                        for (bool high : {false, true}) {
                            Boundary kind = high ? hi : lo;
                            cl_float4 want = cell(source(kind, high, k, nx), j);
                            if (kind == Boundary::Reflective)
                                want.s[1] = -want.s[1];
                            cl_float4 got = all[g.index(high ? nx + k : -1 - k, j)];
                            for (int c = 0; c < 4; ++c)
                                bad += got.s[c] != want.s[c];
                        }
                    for (int i = 0; i < nx; ++i)
                        for (bool high : {false, true}) {
                            Boundary kind = high ? hi : lo;
                            cl_float4 want = cell(i, source(kind, high, k, ny));
                            if (kind == Boundary::Reflective)
                                want.s[2] = -want.s[2];
                            cl_float4 got = all[g.index(i, high ? ny + k : -1 - k)];
                            for (int c = 0; c < 4; ++c)
                                bad += got.s[c] != want.s[c];
                        }
                }
                CHECK(bad == 0);
            }
        // Closed box: reflective walls keep mass and energy in (Lax-Liu 3 drives shocks into
        // every wall), and the flow at the walls has no normal momentum flux of mass.
        gasdyn::Setup box = gasdyn::makeProblem(Problem::LaxLiu3, 60, 50);
        box.xLow = box.xHigh = box.yLow = box.yHigh = Boundary::Reflective;
        sim.load(box);
        Totals before = totals(sim.state());
        for (int step = 0; step < 150; ++step)
            sim.step(0.8f);
        Totals after = totals(sim.state());
        INFO("t " << sim.time());
        CHECK(sim.time() > 0.3);
        CHECK(std::abs(after.q[0] - before.q[0]) < 1e-6 * after.magnitude[0]);
        CHECK(std::abs(after.q[3] - before.q[3]) < 1e-6 * after.magnitude[3]);
        // Outflow lets the jet carry mass out of the same box.
        box.xLow = box.xHigh = box.yLow = box.yHigh = Boundary::Outflow;
        sim.load(box);
        for (int step = 0; step < 150; ++step)
            sim.step(0.8f);
        Totals open = totals(sim.state());
        CHECK(std::abs(open.q[0] - before.q[0]) > 1e-3 * before.q[0]);
    }
}

TEST_CASE("Rayleigh-Taylor: gravity pulls the heavy gas down and the interface grows",
          "[gasdyn][gravity]") {
    ClOn cl("Duet");
    gasdyn::Simulator sim(cl.context, cl.device, cl.queue);
    gasdyn::Setup s = gasdyn::makeProblem(Problem::RayleighTaylor, 32, 96);
    sim.load(s);
    auto heavyCentre = [&](const std::vector<cl_float4>& cells) {
        // Centre of mass height.
        double m = 0, my = 0;
        for (int j = 0; j < s.grid.ny; ++j)
            for (int i = 0; i < s.grid.nx; ++i) {
                double rho = cells[size_t(j) * s.grid.nx + i].s[0];
                m += rho;
                my += rho * s.grid.y(j);
            }
        return my / m;
    };
    auto maxSpeed = [&](const std::vector<cl_float4>& cells) {
        double v = 0;
        for (const cl_float4& c : cells)
            v = std::max(v, double(std::abs(c.s[2] / c.s[0])));
        return v;
    };
    double y0 = heavyCentre(s.cells), v0 = maxSpeed(s.cells);
    runTo(sim, 0.8f, 8.0);
    std::vector<cl_float4> cells = sim.state();
    double y1 = heavyCentre(cells), v1 = maxSpeed(cells);
    Totals t0 = totals(s.cells), t1 = totals(cells);
    INFO("centre of mass " << y0 << " -> " << y1 << ", largest |v| " << v0 << " -> " << v1);
    std::printf("gasdyn Rayleigh-Taylor 32x96 t=8: centre of mass %.5f -> %.5f, max |v| %.4f -> "
                "%.4f\n",
                y0, y1, v0, v1);
    CHECK(y1 < y0 - 1e-3);
    CHECK(v1 > 5.0 * v0); // the seeded mode grew
    // Reflective top and bottom, periodic sides: mass stays in the box.
    CHECK(std::abs(t1.q[0] - t0.q[0]) < 1e-6 * t0.q[0]);
}

TEST_CASE("bad input is reported, not crashed on", "[gasdyn][errors]") {
    CHECK_THROWS_AS(gasdyn::makeProblem(Problem::SodX, 0, 4), std::invalid_argument);
    CHECK_THROWS_AS(gasdyn::makeProblem(Problem::SodX, 10, 4, 1.0f), std::invalid_argument);
    CHECK_THROWS_AS(gasdyn::makeProblem(Problem::SodX, 10, 4, NAN), std::invalid_argument);
    ClOn cl("Duet");
    gasdyn::SolverOptions o;
    o.rowGroup = 0;
    CHECK_THROWS_AS(gasdyn::Simulator(cl.context, cl.device, cl.queue, o), std::invalid_argument);
    o.rowGroup = 64;
    o.extraBuildOptions = "-D LIMITER=\"not a number\"";
    try {
        gasdyn::Simulator sim(cl.context, cl.device, cl.queue, o);
        FAIL("a program that does not build was accepted");
    } catch (const duet::interop::Error& e) {
        CHECK(e.code() == CL_BUILD_PROGRAM_FAILURE);
        CHECK(std::string(e.what()).find("gasdyn.cl") != std::string::npos);
    }
    gasdyn::Simulator sim(cl.context, cl.device, cl.queue);
    gasdyn::Setup s = gasdyn::makeProblem(Problem::SodX, 10, 4);
    s.cells.pop_back();
    CHECK_THROWS_AS(sim.load(s), std::invalid_argument);
}
