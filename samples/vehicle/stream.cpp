// Lays out the calls of a stream (which samples, which vehicles, which window)
// and builds each call's tensors from the received messages and the truth.
#include "samples/vehicle/stream.h"

#include <algorithm>
#include <cmath>

#include "samples/vehicle/stream_script.h"

namespace vehicle {
namespace {

constexpr double kBenignAftermathSeconds = 5.0;

// True (and the span's value) when a span covers the tick.
bool inside(const std::vector<ScheduledSpan>& spans, std::int64_t tick, double* value = nullptr) {
  for (const ScheduledSpan& s : spans)
    if (s.start <= tick && tick < s.end) {
      if (value) *value = s.value;
      return true;
    }
  return false;
}

// The layout of the call whose newest sample is at `tick`, or window 0 when there is none.
CallSpec plan_call(const Scenario& s, std::int64_t tick) {
  CallSpec spec;
  spec.tick = tick;
  spec.step = inside(s.fast_feed, tick) ? kTicksPerSecond / kFastRateHz : kTicksPerSecond / kBaseRateHz;
  if (tick % spec.step != 0) return spec;
  double seconds = s.config.window_seconds;
  inside(s.long_window, tick, &seconds);
  const std::int64_t nominal = std::llround(seconds * spec.rate_hz());
  const std::int64_t history_start = tick >= s.restart ? s.restart : 0;
  const std::int64_t first_grid = (history_start + spec.step - 1) / spec.step * spec.step;
  const std::int64_t available = (tick - first_grid) / spec.step;
  spec.window = static_cast<int>(std::min(nominal, available));
  if (spec.window < kMinWindow) {
    spec.window = 0;
    return spec;
  }
  const std::int64_t first = tick - static_cast<std::int64_t>(spec.window) * spec.step;
  for (int v = 0; v < s.config.vehicles; ++v) {
    const Membership& m = s.members[static_cast<std::size_t>(v)];
    if (m.join <= first && tick < m.leave) spec.vehicles.push_back(v);
  }
  double features = kFeatures;
  inside(s.wide_format, tick, &features);
  spec.features = static_cast<int>(features);
  if (spec.vehicles.empty()) spec.window = 0;
  return spec;
}

// Writes one row: its window, newest message, truth and stale flags.
void fill_row(const Scene& scene, const CallSpec& spec, int row, StreamCall& out) {
  const int vehicle = spec.vehicles[static_cast<std::size_t>(row)];
  const std::int64_t first = spec.tick - static_cast<std::int64_t>(spec.window) * spec.step;
  const Message last = receive(scene.scenario, scene.truth, vehicle, spec.tick - spec.step, spec.step);
  const double origin = last.fields[0];
  const std::size_t base = static_cast<std::size_t>(row) * static_cast<std::size_t>(spec.window * spec.features);
  const std::size_t stale_base = static_cast<std::size_t>(row) * static_cast<std::size_t>(spec.window + 1);
  for (int k = 0; k < spec.window; ++k) {
    const Message m = receive(scene.scenario, scene.truth, vehicle, first + k * spec.step, spec.step);
    for (int f = 0; f < spec.features; ++f)
      out.inputs[base + static_cast<std::size_t>(k * spec.features + f)] =
          static_cast<float>(f == 0 ? m.fields[0] - origin : m.fields[static_cast<std::size_t>(f)]);
    out.stale[stale_base + static_cast<std::size_t>(k)] = m.stale ? 1 : 0;
  }
  const Message now = receive(scene.scenario, scene.truth, vehicle, spec.tick, spec.step);
  out.stale[stale_base + static_cast<std::size_t>(spec.window)] = now.stale ? 1 : 0;
  const VehicleState& t = scene.truth.at(spec.tick, vehicle);
  const double observed[kTargets] = {now.fields[0] - origin, now.fields[1], now.fields[2]};
  const double truth[kTargets] = {t.position - scene.truth.at(spec.tick - spec.step, vehicle).position, t.speed, t.accel};
  for (int j = 0; j < kTargets; ++j) {
    out.observed[static_cast<std::size_t>(row * kTargets + j)] = static_cast<float>(observed[j]);
    out.truth[static_cast<std::size_t>(row * kTargets + j)] = truth[j];
  }
  out.labels[static_cast<std::size_t>(row)] = label_row(scene.scenario, vehicle, spec.tick, first);
}

}  // namespace

// Builds the scene, lays out every call and derives the shape-event script.
VehicleStream::VehicleStream(const ScenarioConfig& config) : scene_(build_scene(config)) {
  for (std::int64_t tick = 0; tick <= scene_.scenario.total_ticks; ++tick) {
    CallSpec spec = plan_call(scene_.scenario, tick);
    if (spec.window > 0) specs_.push_back(std::move(spec));
  }
  script_ = build_shape_script(scene_.scenario, specs_);
}

// Allocates and fills every row of call `index`.
StreamCall VehicleStream::call(int index) const {
  StreamCall out;
  out.index = index;
  out.spec = spec(index);
  const std::size_t rows = out.spec.vehicles.size();
  out.inputs.assign(rows * static_cast<std::size_t>(out.spec.window * out.spec.features), 0.0f);
  out.observed.assign(rows * kTargets, 0.0f);
  out.truth.assign(rows * kTargets, 0.0);
  out.stale.assign(rows * static_cast<std::size_t>(out.spec.window + 1), 0);
  out.labels.assign(rows, RowLabel{});
  for (std::size_t r = 0; r < rows; ++r) fill_row(scene_, out.spec, static_cast<int>(r), out);
  return out;
}

// Attacks on the vehicle win over benign braking (which covers every vehicle and its aftermath).
RowLabel label_row(const Scenario& s, int vehicle, std::int64_t tick, std::int64_t window_start) {
  RowLabel label;
  const std::int64_t benign_tail = std::llround(kBenignAftermathSeconds * kTicksPerSecond);
  for (std::size_t i = 0; i < s.events.size(); ++i) {
    const LabelledEvent& e = s.events[i];
    if (e.kind == LabelKind::BenignBraking) {
      if (label.event < 0 && e.start <= tick && tick <= e.end + benign_tail)
        label = {LabelKind::BenignBraking, static_cast<int>(i), label.aftermath};
      continue;
    }
    if (e.vehicle != vehicle) continue;
    if (e.start <= tick && tick <= e.end) return {e.kind, static_cast<int>(i), false};
    if (e.end < tick && e.end >= window_start) label.aftermath = true;
  }
  return label;
}

}  // namespace vehicle
