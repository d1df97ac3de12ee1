// Received messages: truth + sensor noise, then false data injection on the
// broadcast fields; message loss holds the last message received before the loss.
#include "samples/vehicle/broadcast.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace vehicle {
namespace {

// Noise standard deviations: x, v, a, gap, dv, heading.
constexpr double kNoise[kWideFeatures] = {0.10, 0.05, 0.05, 0.10, 0.05, 0.002};
// Combined perturbation standard deviations for x, v, a.
constexpr double kCombined[3] = {2.0, 1.0, 1.0};

// SplitMix64 finaliser.
std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A uniform double in (0, 1) from 53 bits.
double unit(std::uint64_t bits) { return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53; }

// Applies one injected event to the message fields at `tick`.
void inject(const Scenario& s, const LabelledEvent& e, std::int64_t tick, Message& m) {
  const double elapsed = static_cast<double>(tick - e.start) * kTickSeconds;
  switch (e.kind) {
    case LabelKind::SpikeSpeed:
    case LabelKind::BiasSpeed: m.fields[1] += e.magnitude; break;
    case LabelKind::SpikePosition:
    case LabelKind::BiasPosition: m.fields[0] += e.magnitude; break;
    case LabelKind::DriftSpeed: m.fields[1] += e.magnitude * elapsed; break;
    case LabelKind::DriftPosition: m.fields[0] += e.magnitude * elapsed; break;
    case LabelKind::Combined:
      for (int f = 0; f < 3; ++f) m.fields[static_cast<std::size_t>(f)] +=
          kCombined[f] * counter_normal(s.config.seed ^ 0xc0ffeeULL, e.vehicle, tick, f);
      break;
    default: break;
  }
}

}  // namespace

// Box-Muller on two counter-hashed uniforms.
double counter_normal(std::uint64_t seed, int vehicle, std::int64_t tick, int field) {
  const std::uint64_t key = mix(seed ^ mix(static_cast<std::uint64_t>(vehicle) * 0x100000001b3ULL ^
                                          mix(static_cast<std::uint64_t>(tick) * 8 + static_cast<std::uint64_t>(field))));
  const double u1 = unit(key), u2 = unit(mix(key));
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// Truth, radar range, sensor noise, then injected data.
Message broadcast(const Scenario& s, const TruthTrack& truth, int vehicle, std::int64_t tick) {
  const VehicleState& st = truth.at(tick, vehicle);
  const bool seen = vehicle > 0 && st.gap <= kRadarRange;
  Message m;
  m.fields = {st.position, st.speed, st.accel, seen ? st.gap : kRadarRange, seen ? st.speed_difference : 0.0, 0.0};
  for (int f = 0; f < kWideFeatures; ++f)
    m.fields[static_cast<std::size_t>(f)] += kNoise[f] * counter_normal(s.config.seed, vehicle, tick, f);
  m.fields[3] = std::clamp(m.fields[3], 0.0, kRadarRange);
  for (const LabelledEvent& e : s.events)
    if (e.vehicle == vehicle && e.start <= tick && tick <= e.end) inject(s, e, tick, m);
  return m;
}

// During message loss the unit holds the last message received before the loss began.
Message receive(const Scenario& s, const TruthTrack& truth, int vehicle, std::int64_t tick, int step) {
  for (const LabelledEvent& e : s.events) {
    if (e.kind != LabelKind::MessageLoss || e.vehicle != vehicle || tick < e.start || tick > e.end) continue;
    const std::int64_t held = std::max<std::int64_t>(0, (e.start - 1) / step * step);
    Message m = broadcast(s, truth, vehicle, held);
    m.stale = true;
    return m;
  }
  return broadcast(s, truth, vehicle, tick);
}

}  // namespace vehicle
