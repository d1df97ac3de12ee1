// Draws a scene's schedule: drivers, the head's speed profile, benign braking
// and the shape-event plan (times are fractions of the scene, so short test
// scenes keep every kind of event).
#include "samples/vehicle/scenario.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace vehicle {
namespace {

// A uniform draw in [lo, hi).
double uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

// The head cruises below every follower's desired speed so the platoon stays closed.
void draw_speed_profile(Scenario& s, std::mt19937_64& rng) {
  s.head_speed.push_back({0, uniform(rng, 20.0, 24.0)});
  if (!s.config.speed_changes) return;
  for (double t = uniform(rng, 8.0, 14.0); t < s.config.seconds - 4.0; t += uniform(rng, 10.0, 20.0))
    s.head_speed.push_back({seconds_to_ticks(t), uniform(rng, 18.0, 24.0)});
}

// Benign hard braking of the head, at least 12 s apart.
void draw_benign_braking(Scenario& s, std::mt19937_64& rng) {
  const double scale = s.config.seconds / 90.0;
  const int count = s.config.benign_brakings == 0 ? 0
                    : std::max(1, static_cast<int>(std::lround(s.config.benign_brakings * scale)));
  for (int tries = 0, placed = 0; placed < count && tries < 200; ++tries) {
    const double start = uniform(rng, 3.0, std::max(3.5, s.config.seconds - 6.0));
    const double length = uniform(rng, 1.5, 3.0);
    const bool clash = std::any_of(s.events.begin(), s.events.end(), [&](const LabelledEvent& e) {
      return std::abs(static_cast<double>(e.start) / kTicksPerSecond - start) < 12.0 * std::min(1.0, scale);
    });
    if (clash) continue;
    s.events.push_back({LabelKind::BenignBraking, 0, seconds_to_ticks(start), seconds_to_ticks(start + length),
                        uniform(rng, 4.0, 6.0)});
    ++placed;
  }
}

// Group membership, window, feed-rate, format and restart events at fixed fractions of the scene.
void plan_shape_events(Scenario& s, std::mt19937_64& rng) {
  const int n = s.config.vehicles;
  s.members.assign(static_cast<std::size_t>(n), Membership{});
  if (!s.config.shape_events) return;
  std::vector<int> order(static_cast<std::size_t>(n - 1));
  std::iota(order.begin(), order.end(), 1);  // the head never leaves
  std::shuffle(order.begin(), order.end(), rng);
  const auto at = [&](double fraction) { return seconds_to_ticks(fraction * s.config.seconds); };
  const int outsiders = std::clamp(n - s.config.initial_members, 0, n - 1);
  const double join_at[] = {0.15, 0.15, 0.72, 0.82};
  for (int k = 0; k < outsiders; ++k) s.members[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])].join =
      at(join_at[std::min(k, 3)]);
  const double leave_at[] = {0.42, 0.42, 0.42, 0.82};
  for (int k = 0; k < 4 && outsiders + k < n - 1; ++k)
    s.members[static_cast<std::size_t>(order[static_cast<std::size_t>(outsiders + k)])].leave = at(leave_at[k]);
  s.long_window.push_back({at(0.25), at(0.31), 3.5});
  s.wide_format.push_back({at(0.36), at(0.36) + seconds_to_ticks(0.3), 6.0});
  s.fast_feed.push_back({at(0.50), at(0.57), static_cast<double>(kFastRateHz)});
  s.restart = at(0.64);
}

}  // namespace

// Rounds to the nearest 20 ms tick.
std::int64_t seconds_to_ticks(double seconds) { return std::llround(seconds * kTicksPerSecond); }

// Draws drivers, the speed profile, benign braking and the shape-event plan.
Scenario draw_scenario(const ScenarioConfig& config) {
  Scenario s;
  s.config = config;
  s.total_ticks = seconds_to_ticks(config.seconds);
  std::mt19937_64 rng(config.seed);
  for (int i = 0; i < config.vehicles; ++i) s.drivers.push_back(draw_idm_params(rng));
  draw_speed_profile(s, rng);
  draw_benign_braking(s, rng);
  plan_shape_events(s, rng);
  std::sort(s.events.begin(), s.events.end(),
            [](const LabelledEvent& a, const LabelledEvent& b) { return a.start < b.start; });
  return s;
}

// The last scheduled desired speed at or before the tick.
double head_desired_speed(const Scenario& s, std::int64_t tick) {
  double v = s.head_speed.front().speed;
  for (const SpeedChange& c : s.head_speed)
    if (c.tick <= tick) v = c.speed;
  return v;
}

}  // namespace vehicle
