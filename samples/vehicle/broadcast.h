// What the roadside unit receives from a vehicle at a sample: its broadcast
// position, speed and acceleration, its radar gap and speed difference to the
// leader (and, in format v2, a heading), with sensor noise, false data
// injection and message loss applied. Noise depends only on (seed, vehicle,
// tick, field), so any sample can be rebuilt in any order.
#pragma once

#include <array>
#include <cstdint>

#include "samples/vehicle/scenario.h"
#include "samples/vehicle/traffic_sim.h"

namespace vehicle {

inline constexpr int kFeatures = 5;        // x, v, a, gap, dv
inline constexpr int kWideFeatures = 6;    // format v2 adds heading

// One received message.
struct Message {
  std::array<double, kWideFeatures> fields{};  // x (m), v (m/s), a (m/s²), gap (m), dv (m/s), heading (rad)
  bool stale = false;                          // held from an earlier message (message loss)
};

// Standard normal noise from a counter: (seed, vehicle, tick, field) → N(0, 1).
double counter_normal(std::uint64_t seed, int vehicle, std::int64_t tick, int field);

// The message held for `vehicle` at `tick` on a feed sampling every `step` ticks.
Message receive(const Scenario& s, const TruthTrack& truth, int vehicle, std::int64_t tick, int step);

// The message as sent (noise and injected data, no loss) at `tick`.
Message broadcast(const Scenario& s, const TruthTrack& truth, int vehicle, std::int64_t tick);

}  // namespace vehicle
