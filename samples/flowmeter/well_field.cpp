// A field of wells: draws per SAMPLES.md, schedules, and cached clean samples.
#include "samples/flowmeter/well_field.h"

#include <algorithm>
#include <cmath>

#include "samples/flowmeter/seeded_random.h"

namespace flowmeter {
namespace {

constexpr double kInch = 0.0254;
constexpr double kPi = 3.14159265358979323846;
constexpr double kTicksPerMinute = 6.0;  // the cache grid: 10-second samples

// The static parameters of one well, drawn per SAMPLES.md.
WellParams draw_params(SeededRandom& rng) {
  WellParams p;
  p.depth_m = rng.uniform(1500.0, 4500.0);
  p.tubing_diameter_m = rng.uniform(3.0, 6.5) * kInch;
  p.friction_factor = rng.uniform(0.01, 0.08);
  p.reservoir_pressure_bar = std::min(440.0, rng.uniform(1.0, 1.15) * 1000.0 * kGravity * p.depth_m / kPaPerBar);
  p.reservoir_temperature_k = 333.0 + 0.03 * (p.depth_m - 1500.0);
  p.ambient_temperature_k = rng.uniform(286.0, 290.0);  // surface (air or seabed) temperature near 15 C
  p.separator_pressure_bar = rng.uniform(10.0, 120.0);
  p.flowline_drop_coeff = rng.uniform(2.0, 12.0) / 1600.0;
  p.oil_density = rng.uniform(825.0, 925.0);
  do {
    p.mass_fractions = rng.dirichlet({1.0, 1.0, 0.5});
  } while (p.mass_fractions[0] > 0.8 || p.mass_fractions[1] < 0.05);
  p.liquid_rate_max = rng.uniform(15.0, 90.0);
  const double bean = rng.uniform(0.35, 0.6) * p.tubing_diameter_m;
  p.choke_coeff = 0.85 * kPi * bean * bean / 4.0;
  p.valve = static_cast<ValveCharacteristic>(rng.integer(0, 2));
  p.two_phase_factor = rng.uniform(0.5, 1.5);
  p.gas_lift = p.mass_fractions[0] < 0.2 && rng.chance(0.7);
  return p;
}

// Choke moves every 30-240 min, and lift-gas moves every 120-480 min on lifted wells.
WellSchedule draw_schedule(SeededRandom& rng, bool gas_lift, double horizon_min) {
  WellSchedule s;
  s.choke.steps.emplace_back(0.0, rng.uniform(0.25, 1.0));
  for (double t = rng.uniform(30.0, 240.0); t < horizon_min; t += rng.uniform(30.0, 240.0))
    s.choke.steps.emplace_back(t, rng.chance(0.03) ? 0.0 : rng.uniform(0.05, 1.0));
  s.lift_gas.steps.emplace_back(0.0, gas_lift ? rng.uniform(3000.0, 20000.0) : 0.0);
  if (gas_lift)
    for (double t = rng.uniform(120.0, 480.0); t < horizon_min; t += rng.uniform(120.0, 480.0))
      s.lift_gas.steps.emplace_back(t, rng.chance(0.15) ? 0.0 : rng.uniform(3000.0, 20000.0));
  s.decline_per_day = rng.uniform(0.001, 0.005);
  if (rng.chance(0.25)) {
    s.slug_amplitude = rng.uniform(0.1, 0.3);
    s.slug_period_min = rng.uniform(5.0, 30.0);
    s.slug_phase = rng.uniform(0.0, 2.0 * kPi);
  }
  return s;
}

// True when a well with these parameters produces at a nominal setting.
bool flows_nominally(const WellParams& p) {
  const WellControls c{0.6, p.gas_lift ? 10000.0 : 0.0, p.reservoir_pressure_bar};
  const WellState s = solve_well(p, c);
  return s.flowing && s.oil_sm3h + s.water_sm3h > 5.0 && s.p_wh_bar < 200.0;
}

// The cache key of a (well, 10-second tick) pair.
std::uint64_t cache_key(int well, double t_min) {
  const auto tick = static_cast<std::int64_t>(std::llround(t_min * kTicksPerMinute)) + (std::int64_t{1} << 39);
  return (static_cast<std::uint64_t>(well) << 40) | static_cast<std::uint64_t>(tick);
}

}  // namespace

// Last step at or before t; the first step's value before it.
double StepSchedule::at(double t_min) const {
  if (steps.empty()) return 0.0;
  auto it = std::upper_bound(steps.begin(), steps.end(), t_min,
                             [](double t, const std::pair<double, double>& s) { return t < s.first; });
  return it == steps.begin() ? steps.front().second : std::prev(it)->second;
}

// Redraws a well until it flows nominally (at most 64 tries; the last one is kept).
Well draw_well(std::uint64_t seed, int index, double horizon_min) {
  Well w;
  for (std::uint64_t attempt = 0; attempt < 64; ++attempt) {
    SeededRandom rng = SeededRandom::keyed(seed, {static_cast<std::uint64_t>(index), attempt});
    w.params = draw_params(rng);
    if (flows_nominally(w.params)) break;
  }
  SeededRandom rng = SeededRandom::keyed(seed, {static_cast<std::uint64_t>(index), 1000});
  w.schedule = draw_schedule(rng, w.params.gas_lift, horizon_min);
  return w;
}

// Draws every well of the field.
WellField::WellField(std::uint64_t seed, int wells, double horizon_min) : seed_(seed) {
  wells_.reserve(static_cast<std::size_t>(wells));
  for (int i = 0; i < wells; ++i) wells_.push_back(draw_well(seed, i, horizon_min));
}

// Records a shut-in interval and drops cached samples of that well.
void WellField::add_shut_in(int well, double from_min, double to_min) {
  wells_.at(static_cast<std::size_t>(well)).schedule.shut_in.emplace_back(from_min, to_min);
  std::erase_if(cache_, [well](const auto& kv) { return static_cast<int>(kv.first >> 40) == well; });
}

// Sets when a new well starts reporting.
void WellField::set_online_from(int well, double t_min) {
  wells_.at(static_cast<std::size_t>(well)).schedule.online_from_min = t_min;
}

// True once the well has been brought online.
bool WellField::exists_at(int well, double t_min) const {
  return t_min >= this->well(well).schedule.online_from_min;
}

// Choke (closed while shut in or not yet online), lift gas, declining reservoir pressure.
WellControls WellField::controls(int well, double t_min) const {
  const Well& w = this->well(well);
  WellControls c;
  c.choke_opening = w.schedule.choke.at(t_min);
  if (!exists_at(well, t_min)) c.choke_opening = 0.0;
  for (const auto& [from, to] : w.schedule.shut_in)
    if (t_min >= from && t_min < to) c.choke_opening = 0.0;
  c.lift_gas_sm3h = w.params.gas_lift && c.choke_opening > 0.0 ? w.schedule.lift_gas.at(t_min) : 0.0;
  c.reservoir_pressure_bar = w.params.reservoir_pressure_bar * (1.0 - w.schedule.decline_per_day * t_min / 1440.0);
  return c;
}

// Solves the well at t, then superimposes slugging on the wellhead pressure and the rates.
const WellSample& WellField::sample(int well, double t_min) const {
  const std::uint64_t key = cache_key(well, t_min);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  const Well& w = this->well(well);
  const WellControls c = controls(well, t_min);
  const WellState s = solve_well(w.params, c);
  double slug = 1.0;
  if (s.flowing && w.schedule.slug_amplitude > 0.0)
    slug += w.schedule.slug_amplitude * std::sin(2.0 * kPi * t_min / w.schedule.slug_period_min + w.schedule.slug_phase);
  WellSample out;
  out.flowing = s.flowing;
  out.gauges = {c.choke_opening, s.p_bh_bar, s.p_wh_bar * slug, s.p_dc_bar, s.t_bh_k, s.t_wh_k, c.lift_gas_sm3h,
                s.p_wh_bar * slug + 8.0 + 5e-4 * c.lift_gas_sm3h};
  out.rates = {s.oil_sm3h * slug, s.gas_sm3h * slug, s.water_sm3h * slug};
  return cache_.emplace(key, out).first->second;
}

}  // namespace flowmeter
