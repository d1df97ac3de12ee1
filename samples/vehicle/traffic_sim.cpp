// Integrates the platoon: IDM accelerations from the current states, then a
// ballistic update (v' = max(0, v + a h), x' = x + (v + v') h / 2), h = 20 ms.
#include "samples/vehicle/traffic_sim.h"

#include <algorithm>
#include <cmath>

namespace vehicle {
namespace {

constexpr double kMaxDecel = 9.0, kMaxAccel = 4.0;
constexpr double kBrakeRampSeconds = 0.3, kBrakeFloorSpeed = 5.0;

// The event of `kind` active on `vehicle` at `tick`, if any.
const LabelledEvent* active_event(const Scenario& s, LabelKind kind, int vehicle, std::int64_t tick) {
  for (const LabelledEvent& e : s.events)
    if (e.kind == kind && e.vehicle == vehicle && e.start <= tick && tick <= e.end) return &e;
  return nullptr;
}

// The head: free-road IDM towards its scheduled speed, or a jerk-limited benign hard brake.
double head_accel(const Scenario& s, const VehicleState& head, std::int64_t tick) {
  if (const LabelledEvent* brake = active_event(s, LabelKind::BenignBraking, 0, tick)) {
    if (head.speed < kBrakeFloorSpeed) return 0.0;
    const double ramp = std::min(1.0, static_cast<double>(tick - brake->start) * kTickSeconds / kBrakeRampSeconds);
    return -brake->magnitude * ramp;
  }
  IdmParams p = s.drivers[0];
  p.desired_speed = head_desired_speed(s, tick);
  return idm_free_acceleration(p, head.speed);
}

// Gap and speed difference to the leader as the radar sees them.
void observe_leader(VehicleState& follower, const VehicleState& leader, double leader_length) {
  follower.gap = leader.position - follower.position - leader_length;
  follower.speed_difference = leader.speed - follower.speed;
}

// Accelerations for every vehicle at this tick (IDM command, scaled under a control attack).
void command_accelerations(const Scenario& s, std::vector<VehicleState>& now, std::int64_t tick) {
  now[0].accel = std::clamp(head_accel(s, now[0], tick), -kMaxDecel, kMaxAccel);
  for (std::size_t i = 1; i < now.size(); ++i) {
    const int vehicle = static_cast<int>(i);
    double a = idm_acceleration(s.drivers[i], now[i].speed, now[i].gap, now[i - 1].speed);
    if (const LabelledEvent* attack = active_event(s, LabelKind::ControlCommand, vehicle, tick)) a *= attack->magnitude;
    now[i].accel = std::clamp(a, -kMaxDecel, kMaxAccel);
  }
}

// One ballistic step of h; a vehicle never passes through its leader.
void advance(const Scenario& s, std::vector<VehicleState>& now) {
  for (VehicleState& v : now) {
    const double speed = std::max(0.0, v.speed + v.accel * kTickSeconds);
    v.position += 0.5 * (v.speed + speed) * kTickSeconds;
    v.speed = speed;
  }
  for (std::size_t i = 1; i < now.size(); ++i) {
    const double limit = now[i - 1].position - s.drivers[i - 1].length - 0.1;
    if (now[i].position > limit) {
      now[i].position = limit;
      now[i].speed = std::min(now[i].speed, now[i - 1].speed);
    }
    observe_leader(now[i], now[i - 1], s.drivers[i - 1].length);
  }
}

}  // namespace

// Head at 2000 m at its scheduled speed; followers at (a multiple of) their equilibrium gaps.
std::vector<VehicleState> initial_platoon(const Scenario& s) {
  std::vector<VehicleState> platoon(s.drivers.size());
  const double speed = s.head_speed.front().speed;
  platoon[0] = {2000.0, speed, 0.0, kRadarRange, 0.0};
  for (std::size_t i = 1; i < platoon.size(); ++i) {
    const double gap = s.config.initial_gap_scale * idm_equilibrium_gap(s.drivers[i], speed);
    platoon[i].position = platoon[i - 1].position - s.drivers[i - 1].length - gap;
    platoon[i].speed = speed;
    observe_leader(platoon[i], platoon[i - 1], s.drivers[i - 1].length);
  }
  return platoon;
}

// Records the state of every vehicle at every tick.
TruthTrack simulate_traffic(const Scenario& s) {
  TruthTrack track;
  track.vehicles = static_cast<int>(s.drivers.size());
  track.ticks = s.total_ticks;
  track.states.reserve(static_cast<std::size_t>((s.total_ticks + 1) * track.vehicles));
  std::vector<VehicleState> now = initial_platoon(s);
  for (std::int64_t tick = 0; tick <= s.total_ticks; ++tick) {
    command_accelerations(s, now, tick);
    track.states.insert(track.states.end(), now.begin(), now.end());
    advance(s, now);
  }
  return track;
}

}  // namespace vehicle
