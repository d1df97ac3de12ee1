// Gauge faults that change values but not shapes: dropouts (NaN runs), stuck
// gauges, calibration drift and spikes, plus 0.5 % gauge noise. Each fault is
// drawn once per stream and applied as a function of time, so any sample can
// be regenerated on its own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "samples/flowmeter/gauge_channels.h"
#include "samples/flowmeter/well_field.h"

namespace flowmeter {

enum class FaultKind { Dropout, Stuck, Drift, Spike };

std::string_view fault_kind_name(FaultKind kind);

// One fault on one well: on a channel, or on all of them (channel < 0: a communications loss).
struct SensorFault {
  FaultKind kind = FaultKind::Dropout;
  int well = 0;
  int channel = -1;
  double start_min = 0.0, end_min = 0.0;
  double magnitude = 0.0;  // drift: fraction per day; spike: relative jump
  std::string describe() const;
};

// Every fault of a stream, indexed by well.
class SensorFaults {
 public:
  SensorFaults() = default;
  // Draws faults for `wells` wells over [0, horizon_min) at the rates of SAMPLES.md.
  SensorFaults(std::uint64_t seed, int wells, double horizon_min);

  const std::vector<SensorFault>& all() const { return all_; }
  // The faults of one well.
  std::vector<const SensorFault*> of_well(int well) const;

  // What the gauge shows at t: the clean reading with faults and noise applied,
  // NaN during a dropout or before the well existed.
  double observe(const WellField& field, int well, Channel channel, double t_min) const;

 private:
  std::uint64_t seed_ = 0;
  std::vector<SensorFault> all_;
  std::vector<std::vector<std::size_t>> by_well_;
};

}  // namespace flowmeter
