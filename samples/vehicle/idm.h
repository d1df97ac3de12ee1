// The Intelligent Driver Model: one vehicle's acceleration from its speed,
// its gap to the leader and the leader's speed, and the equilibrium gap.
#pragma once

#include <cstdint>
#include <random>

namespace vehicle {

// One driver/vehicle. Gaps are bumper to bumper (m), speeds m/s, accelerations m/s².
struct IdmParams {
  double desired_speed = 30.0;   // v0
  double time_headway = 1.4;     // T (s)
  double max_accel = 1.2;        // a
  double comfort_decel = 1.8;    // b
  double jam_gap = 2.0;          // s0 (m)
  double exponent = 4.0;         // delta
  double length = 4.5;           // vehicle length (m)
};

// Draws a driver from the ranges of SAMPLES.md (v0 25-33, T 1.0-1.8, a 1.0-1.5, b 1.5-2.0).
IdmParams draw_idm_params(std::mt19937_64& rng);

// The desired dynamic gap s*(v, dv) = s0 + max(0, v T + v dv / (2 sqrt(a b))), dv = v - v_leader.
double idm_desired_gap(const IdmParams& p, double speed, double approach_rate);

// IDM acceleration behind a leader: a [1 - (v/v0)^delta - (s*/s)^2].
double idm_acceleration(const IdmParams& p, double speed, double gap, double leader_speed);

// IDM acceleration on a free road: a [1 - (v/v0)^delta].
double idm_free_acceleration(const IdmParams& p, double speed);

// The gap at which a follower at constant speed v (leader at v too) has zero
// acceleration: (s0 + v T) / sqrt(1 - (v/v0)^delta). Needs v < v0.
double idm_equilibrium_gap(const IdmParams& p, double speed);

}  // namespace vehicle
