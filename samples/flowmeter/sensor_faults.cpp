// Gauge faults and noise: drawn as Poisson processes per well, applied by time.
#include "samples/flowmeter/sensor_faults.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "samples/flowmeter/seeded_random.h"

namespace flowmeter {
namespace {

constexpr double kMinutesPerDay = 1440.0;
constexpr double kNoiseFraction = 0.005;  // gauge noise, 0.5 % of the reading

// Draws faults of one kind as a Poisson process with `per_day` events per day.
template <typename Fill>
void draw_process(SeededRandom& rng, double per_day, double horizon_min, Fill fill) {
  for (double t = rng.exponential(kMinutesPerDay / per_day); t < horizon_min;
       t += rng.exponential(kMinutesPerDay / per_day))
    fill(t);
}

// One of the pressure gauges (PBH, PWH, PDC).
int pressure_channel(SeededRandom& rng) { return rng.integer(static_cast<int>(Channel::PBH), static_cast<int>(Channel::PDC)); }

// All faults of one well.
std::vector<SensorFault> draw_well_faults(std::uint64_t seed, int well, double horizon_min) {
  SeededRandom rng = SeededRandom::keyed(seed, {static_cast<std::uint64_t>(well), 77});
  std::vector<SensorFault> out;
  draw_process(rng, 1.0, horizon_min, [&](double t) {  // dropouts, median 10 min
    const double minutes = std::clamp(10.0 * std::exp(0.7 * rng.normal()), 2.0, 120.0);
    const int channel = rng.chance(0.3) ? -1 : rng.integer(0, kStandardChannels - 1);
    out.push_back({FaultKind::Dropout, well, channel, t, t + minutes, 0.0});
  });
  draw_process(rng, 0.15, horizon_min, [&](double t) {  // stuck gauges
    const int channels[] = {1, 2, 3, 5};
    out.push_back({FaultKind::Stuck, well, channels[rng.integer(0, 3)], t, t + rng.uniform(60.0, 600.0), 0.0});
  });
  draw_process(rng, 0.1, horizon_min, [&](double t) {  // calibration drift, 2-8 % per day
    const double rate = rng.uniform(0.02, 0.08) * (rng.chance(0.5) ? 1.0 : -1.0);
    out.push_back({FaultKind::Drift, well, pressure_channel(rng), t, t + rng.uniform(300.0, 2000.0), rate});
  });
  draw_process(rng, 4.0, horizon_min, [&](double t) {  // spikes, one minute long
    const double jump = rng.uniform(0.15, 0.5) * (rng.chance(0.5) ? 1.0 : -1.0);
    out.push_back({FaultKind::Spike, well, pressure_channel(rng), t, t + 1.0, jump});
  });
  return out;
}

}  // namespace

// "dropout", "stuck", ...
std::string_view fault_kind_name(FaultKind kind) {
  switch (kind) {
    case FaultKind::Dropout: return "dropout";
    case FaultKind::Stuck: return "stuck";
    case FaultKind::Drift: return "drift";
    case FaultKind::Spike: return "spike";
  }
  return "?";
}

// "well 3 PBH dropout 120.5-131.0 min".
std::string SensorFault::describe() const {
  char buf[160];
  const std::string_view ch = channel < 0 ? std::string_view("all") : kChannelNames[static_cast<std::size_t>(channel)];
  std::snprintf(buf, sizeof buf, "well %d %.*s %.*s %.1f-%.1f min", well, static_cast<int>(ch.size()), ch.data(),
                static_cast<int>(fault_kind_name(kind).size()), fault_kind_name(kind).data(), start_min, end_min);
  std::string s = buf;
  if (kind == FaultKind::Drift || kind == FaultKind::Spike) {
    std::snprintf(buf, sizeof buf, " (%+.1f %%%s)", magnitude * 100.0, kind == FaultKind::Drift ? "/day" : "");
    s += buf;
  }
  return s;
}

// Draws each well's faults from its own keyed stream.
SensorFaults::SensorFaults(std::uint64_t seed, int wells, double horizon_min) : seed_(seed) {
  by_well_.resize(static_cast<std::size_t>(wells));
  for (int w = 0; w < wells; ++w)
    for (const SensorFault& f : draw_well_faults(seed, w, horizon_min)) {
      by_well_[static_cast<std::size_t>(w)].push_back(all_.size());
      all_.push_back(f);
    }
}

// Pointers into all() for one well.
std::vector<const SensorFault*> SensorFaults::of_well(int well) const {
  std::vector<const SensorFault*> out;
  if (well < 0 || static_cast<std::size_t>(well) >= by_well_.size()) return out;
  for (std::size_t i : by_well_[static_cast<std::size_t>(well)]) out.push_back(&all_[i]);
  return out;
}

// Clean value, then faults in the order drawn, then noise (a stuck gauge shows no noise).
double SensorFaults::observe(const WellField& field, int well, Channel channel, double t_min) const {
  if (!field.exists_at(well, t_min)) return std::numeric_limits<double>::quiet_NaN();
  const int c = static_cast<int>(channel);
  double value = field.sample(well, t_min).gauges[static_cast<std::size_t>(c)];
  if (static_cast<std::size_t>(well) < by_well_.size()) {
    for (std::size_t i : by_well_[static_cast<std::size_t>(well)]) {
      const SensorFault& f = all_[i];
      if (t_min < f.start_min || t_min >= f.end_min || (f.channel >= 0 && f.channel != c)) continue;
      if (f.kind == FaultKind::Dropout) return std::numeric_limits<double>::quiet_NaN();
      if (f.kind == FaultKind::Stuck) return field.sample(well, f.start_min).gauges[static_cast<std::size_t>(c)];
      if (f.kind == FaultKind::Drift) value *= 1.0 + f.magnitude * (t_min - f.start_min) / kMinutesPerDay;
      if (f.kind == FaultKind::Spike) value *= 1.0 + f.magnitude;
    }
  }
  const auto tick = static_cast<std::uint64_t>(std::llround(t_min * 6.0) + (std::int64_t{1} << 39));
  SeededRandom noise = SeededRandom::keyed(seed_, {static_cast<std::uint64_t>(well), static_cast<std::uint64_t>(c), tick});
  // Temperature gauges read in degrees Celsius: their 0.5 % is of that reading.
  const bool temperature = channel == Channel::TBH || channel == Channel::TWH;
  const double reading = temperature ? value - 273.15 : value;
  return value + kNoiseFraction * std::abs(reading) * noise.normal();
}

}  // namespace flowmeter
