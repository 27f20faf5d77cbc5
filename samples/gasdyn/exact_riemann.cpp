// Toro's exact Riemann solver: star pressure by Newton's method, then the wave pattern sampled.
#include "exact_riemann.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace duet::gasdyn {

namespace {

// f_K(p) and f_K'(p): the velocity change across the left or right wave for star pressure p
// (a shock when p > p_K, a rarefaction otherwise).
void pressureFunction(double p, const ExactRiemann::State& k, double c, double gamma, double& f,
                      double& df) {
    if (p > k.p) {
        double a = 2.0 / ((gamma + 1.0) * k.rho);
        double b = (gamma - 1.0) / (gamma + 1.0) * k.p;
        double q = std::sqrt(a / (p + b));
        f = (p - k.p) * q;
        df = q * (1.0 - 0.5 * (p - k.p) / (p + b));
    } else {
        double ratio = p / k.p;
        f = 2.0 * c / (gamma - 1.0) * (std::pow(ratio, 0.5 * (gamma - 1.0) / gamma) - 1.0);
        df = std::pow(ratio, -0.5 * (gamma + 1.0) / gamma) / (k.rho * c);
    }
}

} // namespace

ExactRiemann::ExactRiemann(State left, State right, double gamma)
    : m_l(left), m_r(right), m_gamma(gamma) {
    if (!(gamma > 1.0))
        throw std::invalid_argument("ExactRiemann: gamma must exceed 1, got " +
                                    std::to_string(gamma));
    for (const State* s : {&left, &right})
        if (!(s->rho > 0.0) || !(s->p > 0.0))
            throw std::invalid_argument("ExactRiemann: densities and pressures must be positive");
    m_cl = std::sqrt(gamma * left.p / left.rho);
    m_cr = std::sqrt(gamma * right.p / right.rho);
    double du = right.u - left.u;
    // Pressure positivity condition (Toro 4.40): otherwise the waves leave a vacuum.
    if (2.0 * (m_cl + m_cr) / (gamma - 1.0) <= du)
        throw std::invalid_argument("ExactRiemann: the initial data generate a vacuum");
    // Start from the two-rarefaction approximation, which is exact when both waves are fans.
    double z = 0.5 * (gamma - 1.0) / gamma;
    double p = std::pow((m_cl + m_cr - 0.5 * (gamma - 1.0) * du) /
                            (m_cl / std::pow(left.p, z) + m_cr / std::pow(right.p, z)),
                        1.0 / z);
    p = std::max(p, 1e-14);
    for (m_iterations = 1; m_iterations <= 100; ++m_iterations) {
        double fl, dfl, fr, dfr;
        pressureFunction(p, left, m_cl, gamma, fl, dfl);
        pressureFunction(p, right, m_cr, gamma, fr, dfr);
        double next = std::max(p - (fl + fr + du) / (dfl + dfr), 1e-14);
        double change = 2.0 * std::abs(next - p) / (next + p);
        p = next;
        if (change < 1e-12)
            break;
    }
    m_pStar = p;
    double fl, dfl, fr, dfr;
    pressureFunction(p, left, m_cl, gamma, fl, dfl);
    pressureFunction(p, right, m_cr, gamma, fr, dfr);
    m_uStar = 0.5 * (left.u + right.u) + 0.5 * (fr - fl);
}

ExactRiemann::State ExactRiemann::sample(double s) const {
    const double g = m_gamma;
    // Mirror the right side so that one routine samples both: K is on the left of the contact.
    bool leftSide = s <= m_uStar;
    State k = leftSide ? m_l : State{m_r.rho, -m_r.u, m_r.p};
    double c = leftSide ? m_cl : m_cr;
    double us = leftSide ? m_uStar : -m_uStar;
    double x = leftSide ? s : -s;
    State out;
    double ratio = m_pStar / k.p;
    if (m_pStar > k.p) {
        double speed = k.u - c * std::sqrt(0.5 * (g + 1.0) / g * ratio + 0.5 * (g - 1.0) / g);
        if (x <= speed) {
            out = k;
        } else {
            double g6 = (g - 1.0) / (g + 1.0);
            out = {k.rho * (ratio + g6) / (g6 * ratio + 1.0), us, m_pStar};
        }
    } else {
        double head = k.u - c;
        double cs = c * std::pow(ratio, 0.5 * (g - 1.0) / g);
        double tail = us - cs;
        if (x <= head) {
            out = k;
        } else if (x >= tail) {
            out = {k.rho * std::pow(ratio, 1.0 / g), us, m_pStar};
        } else {
            double cf = 2.0 / (g + 1.0) * (c + 0.5 * (g - 1.0) * (k.u - x));
            double uf = 2.0 / (g + 1.0) * (c + 0.5 * (g - 1.0) * k.u + x);
            out = {k.rho * std::pow(cf / c, 2.0 / (g - 1.0)), uf,
                   k.p * std::pow(cf / c, 2.0 * g / (g - 1.0))};
        }
    }
    if (!leftSide)
        out.u = -out.u;
    return out;
}

} // namespace duet::gasdyn
