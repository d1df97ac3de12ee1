// The schedule of one scene: drivers, the head's speed profile, labelled
// attacks, faults and benign braking, and the scheduled shape events
// (group membership, feed rate, window length, roadside-unit restart,
// message format). Everything is drawn from the seed.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "samples/vehicle/idm.h"
#include "samples/vehicle/labels.h"

namespace vehicle {

// The physics runs at 50 Hz; the feeds sample it at 10 Hz (every 5 ticks) or 25 Hz (every 2).
inline constexpr int kTicksPerSecond = 50;
inline constexpr double kTickSeconds = 1.0 / kTicksPerSecond;
inline constexpr int kBaseRateHz = 10;
inline constexpr int kFastRateHz = 25;
inline constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

struct ScenarioConfig {
  std::uint64_t seed = 1;
  int vehicles = 20;             // simulated (the platoon on the lane)
  int initial_members = 16;      // vehicles in the cooperative group at the start
  double seconds = 90.0;         // scene length
  double window_seconds = 2.0;   // nominal model window (W = 20 at 10 Hz)
  int attacks_per_kind = 3;      // per attack kind, scaled down for short scenes
  int benign_brakings = 3;
  bool attacks = true;
  bool shape_events = true;
  bool speed_changes = true;
  double initial_gap_scale = 1.0;  // followers start at this multiple of their equilibrium gap
};

// The head's desired speed from `tick` on.
struct SpeedChange {
  std::int64_t tick = 0;
  double speed = 0.0;
};

// Ticks [join, leave) during which the vehicle broadcasts to the group.
struct Membership {
  std::int64_t join = 0, leave = kNever;
};

// A span of ticks [start, end) with a value: a feed rate, a window in seconds, a feature count.
struct ScheduledSpan {
  std::int64_t start = 0, end = 0;
  double value = 0.0;
};

struct Scenario {
  ScenarioConfig config;
  std::int64_t total_ticks = 0;
  std::vector<IdmParams> drivers;         // index 0 is the platoon's head
  std::vector<SpeedChange> head_speed;    // sorted by tick, first at tick 0
  std::vector<LabelledEvent> events;      // attacks, faults and benign braking, sorted by start
  std::vector<Membership> members;        // per vehicle
  std::vector<ScheduledSpan> fast_feed;   // value: feed rate (Hz)
  std::vector<ScheduledSpan> long_window; // value: window seconds
  std::vector<ScheduledSpan> wide_format; // value: feature count
  std::int64_t restart = kNever;          // roadside unit restarts: history cleared
};

// Draws drivers, the speed profile and the shape-event plan. Attacks that
// need the clean physics (control commands) are placed by traffic_sim.
Scenario draw_scenario(const ScenarioConfig& config);

// The head's desired speed at a tick.
double head_desired_speed(const Scenario& s, std::int64_t tick);

// Ticks per second as an integer tick count for `seconds`.
std::int64_t seconds_to_ticks(double seconds);

}  // namespace vehicle
