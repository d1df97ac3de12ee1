// Prints the app's report: detection per attack kind, false alarms, latency,
// agreement with the fp64 reference, the runtime's story (Stats::jit and the
// event log) and what happened at each shape event.
#pragma once

#include <string>

#include "samples/vehicle/replay.h"

namespace vehicle {

struct ReportHeader {
  std::uint64_t seed = 0;
  double seconds = 0.0;
  bool jit = true, reference = false;
  AlarmRule rule;
  std::string model_path;
};

void print_report(const ReportHeader& header, const ReplayRun& run, const VehicleStream& stream);

}  // namespace vehicle
