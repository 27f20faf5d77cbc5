// The exact solution of the 1D Riemann problem for an ideal gas (Toro, "Riemann Solvers and
// Numerical Methods for Fluid Dynamics", ch. 4), in double precision: the reference the
// gas-dynamics tests hold the OpenCL solver to.
#pragma once

namespace duet::gasdyn {

class ExactRiemann {
public:
    struct State {
        double rho = 1, u = 0, p = 1;
    };
    /// Solves for the star region (Newton iteration on Toro's pressure function, to a relative
    /// change below 1e-12). Throws std::invalid_argument for non-positive densities or
    /// pressures, gamma <= 1, or initial data that create a vacuum.
    ExactRiemann(State left, State right, double gamma);

    /// The state on the ray x / t = s from the initial discontinuity.
    State sample(double s) const;
    double pressureStar() const { return m_pStar; }
    double velocityStar() const { return m_uStar; }
    /// Newton iterations it took.
    int iterations() const { return m_iterations; }

private:
    State m_l, m_r;
    double m_gamma, m_cl, m_cr;
    double m_pStar = 0, m_uStar = 0;
    int m_iterations = 0;
};

} // namespace duet::gasdyn
