// A field of wells over time: per-well draws, the operator's schedule (choke
// and lift-gas moves, shut-ins), reservoir decline and slugging, and the clean
// gauge readings and true rates at any time (minutes since the stream began).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "samples/flowmeter/gauge_channels.h"
#include "samples/flowmeter/well_model.h"

namespace flowmeter {

// Piecewise-constant setting: value of the last step at or before t.
struct StepSchedule {
  std::vector<std::pair<double, double>> steps;  // (start minute, value), sorted by start
  double at(double t_min) const;
};

// How one well's drivers change with time.
struct WellSchedule {
  StepSchedule choke;
  StepSchedule lift_gas;
  double decline_per_day = 0.002;  // fractional reservoir pressure decline
  double slug_amplitude = 0.0;     // 0: no slugging
  double slug_period_min = 10.0;
  double slug_phase = 0.0;
  double online_from_min = -std::numeric_limits<double>::infinity();  // no history before
  std::vector<std::pair<double, double>> shut_in;  // [from, to) minutes with the choke closed
};

struct Well {
  WellParams params;
  WellSchedule schedule;
};

// Clean readings of every channel and the true rates at one instant.
struct WellSample {
  std::array<double, kAllChannels> gauges{};
  std::array<double, kPhases> rates{};  // oil, gas, water in Sm3/h
  bool flowing = false;
};

class WellField {
 public:
  // Draws `wells` wells and their schedules up to `horizon_min` minutes.
  WellField(std::uint64_t seed, int wells, double horizon_min);

  int size() const { return static_cast<int>(wells_.size()); }
  const Well& well(int i) const { return wells_.at(static_cast<std::size_t>(i)); }
  std::uint64_t seed() const { return seed_; }

  // Closes the well's choke for [from, to) minutes (a shut-in).
  void add_shut_in(int well, double from_min, double to_min);
  // Marks a new well: it has no history before t (gauges read nothing).
  void set_online_from(int well, double t_min);
  // True when the well had been brought online by t.
  bool exists_at(int well, double t_min) const;

  // The operator's settings and the reservoir pressure at t.
  WellControls controls(int well, double t_min) const;
  // Clean readings and true rates at t (cached on a 10-second grid).
  const WellSample& sample(int well, double t_min) const;

 private:
  std::uint64_t seed_;
  std::vector<Well> wells_;
  mutable std::unordered_map<std::uint64_t, WellSample> cache_;
};

// Draws one well that flows at a nominal setting (redrawn until it does).
Well draw_well(std::uint64_t seed, int index, double horizon_min);

}  // namespace flowmeter
