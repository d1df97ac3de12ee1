// Attack placement: random starts aligned to 0.2 s, rejected when they clash
// with another event on the vehicle, benign braking, the restart or the
// format change, or when the target is not a group member around the span.
#include "samples/vehicle/attack_plan.h"

#include <algorithm>
#include <cmath>

namespace vehicle {
namespace {

struct AttackShape {
  LabelKind kind;
  double min_seconds, max_seconds;
  double min_magnitude, max_magnitude;
  bool random_sign;
};

constexpr AttackShape kShapes[] = {
    {LabelKind::SpikeSpeed, 0.0, 0.0, 3.0, 6.0, true},     {LabelKind::SpikePosition, 0.0, 0.0, 4.0, 10.0, true},
    {LabelKind::BiasSpeed, 2.0, 5.0, 1.5, 3.0, true},      {LabelKind::BiasPosition, 2.0, 5.0, 4.0, 10.0, true},
    {LabelKind::DriftSpeed, 3.0, 6.0, 0.5, 1.0, true},     {LabelKind::DriftPosition, 3.0, 6.0, 1.5, 3.0, true},
    {LabelKind::Combined, 1.0, 1.0, 1.0, 1.0, false},      {LabelKind::ControlCommand, 3.0, 5.0, 2.0, 3.0, false},
    {LabelKind::MessageLoss, 1.0, 4.0, 0.0, 0.0, false},
};

constexpr std::int64_t kAlign = 10;  // ticks: a 10 Hz and a 25 Hz sample both fall on a multiple of 10

// True when the closed tick ranges share a tick.
bool overlaps(std::int64_t a0, std::int64_t a1, std::int64_t b0, std::int64_t b1) { return a0 <= b1 && b0 <= a1; }

// True when [start, end] on `vehicle` keeps clear of every other event and scheduled disruption.
bool fits(const Scenario& s, int vehicle, std::int64_t start, std::int64_t end) {
  const std::int64_t margin = seconds_to_ticks(s.config.window_seconds + 1.0), second = kTicksPerSecond;
  const Membership& m = s.members[static_cast<std::size_t>(vehicle)];
  if (m.join > start - margin || m.leave <= end + margin) return false;
  for (const LabelledEvent& e : s.events) {
    if (e.kind == LabelKind::BenignBraking && overlaps(start, end, e.start - second, e.end + 6 * second)) return false;
    if (e.vehicle == vehicle && overlaps(start - margin, end + margin, e.start, e.end)) return false;
  }
  if (s.restart != kNever && overlaps(start, end, s.restart - second, s.restart + margin + 2 * second)) return false;
  for (const ScheduledSpan& w : s.wide_format)
    if (overlaps(start, end, w.start - second, w.end + second)) return false;
  return true;
}

// Mean |acceleration| of the vehicle over [start, end] in the clean track.
double activity(const TruthTrack& clean, int vehicle, std::int64_t start, std::int64_t end) {
  double sum = 0.0;
  for (std::int64_t t = start; t <= end; ++t) sum += std::abs(clean.at(t, vehicle).accel);
  return sum / static_cast<double>(end - start + 1);
}

// One attack of the given shape, or nothing when no valid placement was found.
void place_one(Scenario& s, const TruthTrack& clean, const AttackShape& shape, std::mt19937_64& rng) {
  auto uniform = [&rng](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  const double seconds = uniform(shape.min_seconds, shape.max_seconds);
  const std::int64_t length = shape.max_seconds == 0.0 ? 4 : seconds_to_ticks(seconds);
  const std::int64_t lo = seconds_to_ticks(s.config.window_seconds + 1.5), hi = s.total_ticks - length - 2 * kTicksPerSecond;
  if (hi <= lo) return;
  const bool control = shape.kind == LabelKind::ControlCommand;
  LabelledEvent best;
  double best_activity = -1.0;
  for (int tries = 0; tries < (control ? 40 : 100); ++tries) {
    const std::int64_t start = std::uniform_int_distribution<std::int64_t>(lo, hi)(rng) / kAlign * kAlign;
    const int vehicle = std::uniform_int_distribution<int>(control ? 1 : 0, s.config.vehicles - 1)(rng);
    if (!fits(s, vehicle, start, start + length)) continue;
    const double score = control ? activity(clean, vehicle, start, start + length) : 0.0;
    if (score <= best_activity) continue;
    double magnitude = uniform(shape.min_magnitude, shape.max_magnitude);
    if (shape.random_sign && uniform(0.0, 1.0) < 0.5) magnitude = -magnitude;
    best = {shape.kind, vehicle, start, start + length, magnitude};
    best_activity = score;
    if (!control) break;
  }
  if (best_activity >= 0.0) s.events.push_back(best);
}

}  // namespace

// Places every kind in turn, round-robin, so that a crowded scene shares its room fairly.
void place_attacks(Scenario& s, const TruthTrack& clean) {
  if (!s.config.attacks || s.config.attacks_per_kind <= 0) return;
  std::mt19937_64 rng(s.config.seed ^ 0x9e3779b97f4a7c15ULL);
  const int count = std::max(1, static_cast<int>(std::lround(s.config.attacks_per_kind * s.config.seconds / 90.0)));
  for (int round = 0; round < count; ++round)
    for (const AttackShape& shape : kShapes) place_one(s, clean, shape, rng);
  std::sort(s.events.begin(), s.events.end(),
            [](const LabelledEvent& a, const LabelledEvent& b) { return a.start < b.start; });
}

}  // namespace vehicle
