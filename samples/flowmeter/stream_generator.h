// The flow-meter stream: a field of wells, their gauge faults and a shape-event
// script, cut into model calls. Call k is the window of gauge readings ending
// at minute first_call + k * interval, for the wells reporting then; it comes
// with fp64 ground truth (each well's rates averaged over the window).
// Everything is a function of the seed (or of the seed and a given script).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "samples/flowmeter/gauge_channels.h"
#include "samples/flowmeter/sensor_faults.h"
#include "samples/flowmeter/shape_events.h"
#include "samples/flowmeter/well_field.h"

namespace flowmeter {

struct StreamConfig {
  std::uint64_t seed = 7;
  int wells = 40;                 // field size, 8..64 (a tenth are new wells brought online later)
  int calls = 120;
  double interval_min = 20.0;     // minutes between calls
  double first_call_min = 90.0;   // the first call's window ends here
  int window = 60;                // nominal W, one sample a minute
};

// One model call's input and the truth behind it.
struct FlowCall {
  int index = 0;
  double end_min = 0.0;            // time of the window's last sample
  double step_min = 1.0;           // sample spacing (1/6 during burst sampling)
  int window = 60;
  std::vector<int> wells;          // well ids, one per batch row
  std::vector<Channel> channels;   // channel order of the rows
  std::vector<float> x;            // [wells, channels, window]; NaN where a gauge reported nothing
  std::vector<double> truth;       // [wells, 3]: mean oil, gas, water Sm3/h over the window while online
  std::vector<ShapeEvent> events;  // the shape events that shape this call

  std::array<std::int64_t, 3> shape() const {
    return {static_cast<std::int64_t>(wells.size()), static_cast<std::int64_t>(channels.size()), window};
  }
};

class StreamGenerator {
 public:
  // Draws the field, its faults and the shape-event script from the seed.
  explicit StreamGenerator(const StreamConfig& config);
  // The same field and faults, with a given script (replaying a recorded stream).
  StreamGenerator(const StreamConfig& config, ShapeScript script);

  const StreamConfig& config() const { return config_; }
  const ShapeScript& script() const { return script_; }
  const SensorFaults& faults() const { return faults_; }
  const WellField& field() const { return field_; }

  // The wells reporting at call `index` (before any partial-batch event).
  std::vector<int> reporting_wells(int index) const;
  // Builds call `index` (0-based); calls may be built in any order.
  FlowCall call(int index) const;
  // Minute at which call `index`'s window ends.
  double call_time(int index) const { return config_.first_call_min + config_.interval_min * index; }

 private:
  void apply_script_to_field();
  int regular_wells() const;

  StreamConfig config_;
  WellField field_;
  SensorFaults faults_;
  ShapeScript script_;
};

// Fills c.x and c.truth for c's wells, channels, window, step and end time.
void fill_call(const WellField& field, const SensorFaults& faults, FlowCall& c);

// Number of new wells held back for a "wells online" event in a field of n.
int new_well_count(int wells);

}  // namespace flowmeter
