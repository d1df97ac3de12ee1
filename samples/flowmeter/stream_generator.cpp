// Cuts the field's gauge readings into model calls, shaped by the script.
#include "samples/flowmeter/stream_generator.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace flowmeter {
namespace {

constexpr double kNewWellHistoryMin = 25.0;  // a new well comes online this long before its event's call
constexpr double kShutInLeadMin = 5.0;       // a shut-in closes the choke this long before its call
constexpr double kReopenLeadMin = 30.0;      // a reopened well flows this long before its event's call

// Minutes the stream spans, with room for the last window.
double horizon_of(const StreamConfig& c) { return c.first_call_min + c.interval_min * (c.calls + 1) + 60.0; }

// Rejects configurations the generator cannot honour.
const StreamConfig& checked(const StreamConfig& c) {
  if (c.wells < 2 || c.wells > 4096) throw std::invalid_argument("stream: wells must be in [2, 4096]");
  if (c.calls < 1) throw std::invalid_argument("stream: calls must be at least 1");
  if (c.window < 2 || c.interval_min <= 0.0) throw std::invalid_argument("stream: bad window or interval");
  return c;
}

}  // namespace

// A tenth of the field, at least one well.
int new_well_count(int wells) { return std::max(1, wells / 10); }

// Draws everything from the seed.
StreamGenerator::StreamGenerator(const StreamConfig& config)
    : StreamGenerator(config, draw_shape_script(config.seed, checked(config).calls,
                                                config.wells - new_well_count(config.wells), config.wells)) {}

// Same field and faults as the seed gives, with the script supplied.
StreamGenerator::StreamGenerator(const StreamConfig& config, ShapeScript script)
    : config_(checked(config)),
      field_(config.seed, config.wells, horizon_of(config)),
      faults_(config.seed ^ 0xfa017ULL, config.wells, horizon_of(config)),
      script_(std::move(script)) {
  apply_script_to_field();
}

// Wells that report from the start.
int StreamGenerator::regular_wells() const { return config_.wells - new_well_count(config_.wells); }

// Turns shut-in and online events into choke closures and first-report times.
void StreamGenerator::apply_script_to_field() {
  constexpr double kNever = std::numeric_limits<double>::infinity();
  for (int w = regular_wells(); w < config_.wells; ++w) field_.set_online_from(w, kNever);
  for (const ShapeEvent& e : script_.events) {
    if (e.kind == ShapeEventKind::WellsOnline) {
      for (int w : e.wells)
        if (w >= regular_wells() && w < config_.wells) field_.set_online_from(w, call_time(e.call) - kNewWellHistoryMin);
    }
    if (e.kind != ShapeEventKind::WellsShutIn) continue;
    for (int w : e.wells) {
      if (w < 0 || w >= config_.wells) continue;
      const double from = call_time(e.call) - kShutInLeadMin;
      double to = kNever;
      for (const ShapeEvent& later : script_.events)
        if (later.kind == ShapeEventKind::WellsOnline && later.call > e.call &&
            std::count(later.wells.begin(), later.wells.end(), w) > 0) {
          to = std::max(from, call_time(later.call) - kReopenLeadMin);
          break;
        }
      field_.add_shut_in(w, from, to);
    }
  }
}

// Regular wells, minus those shut in, plus those brought online, as of call `index`.
std::vector<int> StreamGenerator::reporting_wells(int index) const {
  std::vector<int> wells;
  for (int w = 0; w < regular_wells(); ++w) wells.push_back(w);
  for (const ShapeEvent& e : script_.events) {
    if (e.call > index) continue;
    if (e.kind == ShapeEventKind::WellsShutIn)
      for (int w : e.wells) std::erase(wells, w);
    if (e.kind == ShapeEventKind::WellsOnline)
      for (int w : e.wells)
        if (w >= 0 && w < config_.wells && std::count(wells.begin(), wells.end(), w) == 0) wells.push_back(w);
  }
  std::sort(wells.begin(), wells.end());
  return wells;
}

// The nominal call, reshaped by the events covering it, then filled from the gauges and the truth.
FlowCall StreamGenerator::call(int index) const {
  FlowCall c;
  c.index = index;
  c.end_min = call_time(index);
  c.window = config_.window;
  c.wells = reporting_wells(index);
  for (int ch = 0; ch < kStandardChannels; ++ch) c.channels.push_back(static_cast<Channel>(ch));
  c.events = script_.at_call(index);
  for (const ShapeEvent& e : c.events) {
    switch (e.kind) {
      case ShapeEventKind::ShortWindow: c.window = e.value; break;
      case ShapeEventKind::BurstSampling:
        c.step_min = static_cast<double>(config_.window) / e.value;
        c.window = e.value;
        break;
      case ShapeEventKind::ChannelRemoved: std::erase(c.channels, static_cast<Channel>(e.value)); break;
      case ShapeEventKind::ChannelAdded: c.channels.push_back(static_cast<Channel>(e.value)); break;
      case ShapeEventKind::PartialBatch:
        std::erase_if(c.wells, [&](int w) { return std::count(e.wells.begin(), e.wells.end(), w) == 0; });
        break;
      case ShapeEventKind::WellsShutIn:
      case ShapeEventKind::WellsOnline: break;  // already in reporting_wells
    }
  }
  fill_call(field_, faults_, c);
  return c;
}

// Reads every gauge of every row at the window's sample times, and averages the true rates while online.
void fill_call(const WellField& field, const SensorFaults& faults, FlowCall& c) {
  const std::size_t n = c.wells.size(), f = c.channels.size(), w = static_cast<std::size_t>(c.window);
  c.x.resize(n * f * w);
  c.truth.assign(n * kPhases, 0.0);
  for (std::size_t r = 0; r < n; ++r) {
    int online_samples = 0;
    for (std::size_t j = 0; j < w; ++j) {
      const double t = c.end_min - static_cast<double>(w - 1 - j) * c.step_min;
      for (std::size_t ch = 0; ch < f; ++ch)
        c.x[(r * f + ch) * w + j] = static_cast<float>(faults.observe(field, c.wells[r], c.channels[ch], t));
      if (!field.exists_at(c.wells[r], t)) continue;
      ++online_samples;
      const WellSample& s = field.sample(c.wells[r], t);
      for (int p = 0; p < kPhases; ++p) c.truth[r * kPhases + static_cast<std::size_t>(p)] += s.rates[static_cast<std::size_t>(p)];
    }
    for (int p = 0; p < kPhases; ++p)
      if (online_samples > 0) c.truth[r * kPhases + static_cast<std::size_t>(p)] /= online_samples;
  }
}

}  // namespace flowmeter
