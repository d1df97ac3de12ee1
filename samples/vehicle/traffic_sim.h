// The physics of a scene: a single-lane platoon under IDM car-following,
// integrated at 50 Hz in fp64. The head follows its speed profile and its
// benign braking; control-command attacks scale a follower's IDM command.
#pragma once

#include <cstdint>
#include <vector>

#include "samples/vehicle/scenario.h"

namespace vehicle {

// Radar range: a leader farther away than this is not seen (gap reads the range, speed difference 0).
inline constexpr double kRadarRange = 150.0;

// One vehicle's true state at a tick. `accel` is the acceleration applied from
// this tick to the next; the head reads kRadarRange and 0 for gap and dv.
struct VehicleState {
  double position = 0.0, speed = 0.0, accel = 0.0, gap = 0.0, speed_difference = 0.0;
};

// True states for ticks 0..ticks, every vehicle.
struct TruthTrack {
  int vehicles = 0;
  std::int64_t ticks = 0;
  std::vector<VehicleState> states;  // [ticks + 1][vehicles]
  const VehicleState& at(std::int64_t tick, int vehicle) const {
    return states[static_cast<std::size_t>(tick * vehicles + vehicle)];
  }
};

// Simulates the scene (including control-command attacks in s.events).
TruthTrack simulate_traffic(const Scenario& s);

// Initial positions: the head at 2000 m, each follower at its equilibrium gap behind.
std::vector<VehicleState> initial_platoon(const Scenario& s);

}  // namespace vehicle
