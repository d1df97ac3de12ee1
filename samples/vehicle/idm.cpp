// The Intelligent Driver Model (Treiber, Hennecke, Helbing 2000) in fp64.
#include "samples/vehicle/idm.h"

#include <algorithm>
#include <cmath>

namespace vehicle {

// Draws a driver from the ranges of SAMPLES.md.
IdmParams draw_idm_params(std::mt19937_64& rng) {
  auto uniform = [&rng](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  IdmParams p;
  p.desired_speed = uniform(25.0, 33.0);
  p.time_headway = uniform(1.0, 1.8);
  p.max_accel = uniform(1.0, 1.5);
  p.comfort_decel = uniform(1.5, 2.0);
  return p;
}

// s* = s0 + max(0, v T + v dv / (2 sqrt(a b))).
double idm_desired_gap(const IdmParams& p, double speed, double approach_rate) {
  const double dynamic = speed * p.time_headway +
                         speed * approach_rate / (2.0 * std::sqrt(p.max_accel * p.comfort_decel));
  return p.jam_gap + std::max(0.0, dynamic);
}

// a [1 - (v/v0)^delta - (s*/s)^2]; the gap is floored at 0.1 m so a collision stays finite.
double idm_acceleration(const IdmParams& p, double speed, double gap, double leader_speed) {
  const double s_star = idm_desired_gap(p, speed, speed - leader_speed);
  const double s = std::max(gap, 0.1);
  return p.max_accel * (1.0 - std::pow(speed / p.desired_speed, p.exponent) - (s_star / s) * (s_star / s));
}

// a [1 - (v/v0)^delta].
double idm_free_acceleration(const IdmParams& p, double speed) {
  return p.max_accel * (1.0 - std::pow(speed / p.desired_speed, p.exponent));
}

// (s0 + v T) / sqrt(1 - (v/v0)^delta).
double idm_equilibrium_gap(const IdmParams& p, double speed) {
  return (p.jam_gap + speed * p.time_headway) / std::sqrt(1.0 - std::pow(speed / p.desired_speed, p.exponent));
}

}  // namespace vehicle
