// The stream a roadside unit hands the detector: one call per new sample,
// each with the input windows [vehicles, window, features] (fp32), the newest
// message per vehicle (what the prediction is checked against), the fp64
// truth, stale flags and labels; and the shape-event script that says which
// call changed which dim, and why.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "samples/vehicle/broadcast.h"
#include "samples/vehicle/scene.h"

namespace vehicle {

inline constexpr int kMinWindow = 8;   // fewer buffered samples than this: no call
inline constexpr int kTargets = 3;     // the model predicts the next (dx, v, a)

// Ground truth for one row of one call.
struct RowLabel {
  LabelKind kind = LabelKind::Clean;  // the attack on this vehicle at the newest sample, else benign braking, else clean
  int event = -1;                     // index into Scenario::events
  bool aftermath = false;             // an attack on this vehicle ended inside the window
};

// The layout of one call.
struct CallSpec {
  std::int64_t tick = 0;     // tick of the newest sample
  int step = 5;              // ticks per sample (5: 10 Hz, 2: 25 Hz)
  int window = 0;            // W: samples before the newest one
  int features = kFeatures;  // F
  std::vector<int> vehicles; // rows, in platoon order
  int rate_hz() const { return kTicksPerSecond / step; }
};

// One call's data. Position features are relative to the last sample of the
// window (x_k - x_{W-1}); the newest message is (x_new - x_{W-1}, v, a).
struct StreamCall {
  int index = 0;
  CallSpec spec;
  std::vector<float> inputs;        // [rows, window, features]
  std::vector<float> observed;      // [rows, 3] the newest message
  std::vector<double> truth;        // [rows, 3] the newest true state, same frame
  std::vector<std::uint8_t> stale;  // [rows, window + 1] held messages (window samples, then the newest)
  std::vector<RowLabel> labels;     // [rows]
  std::int64_t rows() const { return static_cast<std::int64_t>(spec.vehicles.size()); }
};

// One shape change: the dim ('N' vehicles, 'W' window, 'F' features), from
// which call (and until which, for a run of steps such as a refilling history).
struct ShapeEvent {
  int first_call = 0, last_call = 0;
  double seconds = 0.0;  // scene time of the first call
  char dim = 'N';
  std::int64_t before = 0, after = 0;
  std::int64_t final_value = 0;  // the value at last_call (a refilling window grows one sample per call)
  std::string reason;
  std::string to_string() const;  // "call 141 (14.1 s): N 16 -> 18: vehicles 5, 11 joined the group"
};

class VehicleStream {
 public:
  explicit VehicleStream(const ScenarioConfig& config);
  const Scene& scene() const { return scene_; }
  int calls() const { return static_cast<int>(specs_.size()); }
  const CallSpec& spec(int index) const { return specs_.at(static_cast<std::size_t>(index)); }
  // Builds call `index` (deterministic: the same config gives the same bytes).
  StreamCall call(int index) const;
  const std::vector<ShapeEvent>& script() const { return script_; }

 private:
  Scene scene_;
  std::vector<CallSpec> specs_;
  std::vector<ShapeEvent> script_;
};

// The labelled event index active on `vehicle` at `tick` (attacks first, then benign braking), or -1.
RowLabel label_row(const Scenario& s, int vehicle, std::int64_t tick, std::int64_t window_start);

// Scene seconds of a tick.
inline double tick_seconds(std::int64_t tick) { return static_cast<double>(tick) * kTickSeconds; }

}  // namespace vehicle
