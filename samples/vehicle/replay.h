// Replays a generated stream through the detector, optionally beside the
// fp64 reference session, and gathers what the report needs: per-call
// results, the evaluation, the tier comparison, Stats and the JIT's events.
#pragma once

#include <string>
#include <vector>

#include "canary/canary.h"
#include "samples/vehicle/detector.h"
#include "samples/vehicle/evaluation.h"
#include "samples/vehicle/stream.h"

namespace vehicle {

// Agreement of one tier's results with another's on the same calls.
struct TierComparison {
  std::int64_t rows = 0;                 // rows scored by both
  std::int64_t flips_inside_band = 0;    // alarm differs, reference score within the band around the threshold
  std::int64_t flips_outside_band = 0;   // alarm differs elsewhere: a defect
  std::int64_t outcome_mismatches = 0;   // rows scored by one and not the other, or NaN in one only
  std::int64_t call_mismatches = 0;      // calls that failed in one tier only
  double max_abs_diff = 0.0;             // largest |prediction difference|
  double max_rel_diff = 0.0;             // largest |difference| / (1 + |reference|)
};

// Adds the comparison of `tier` against `reference` for one call. `band` is relative to the threshold.
void compare_tiers(const CallResult& tier, const CallResult& reference, double threshold, double band,
                   TierComparison& out);

struct ReplayConfig {
  std::string model_path;             // .onnx; its metrics.json sits beside it
  bool jit = true;
  bool synchronous_compiles = false;  // tests: compile on the calling thread
  bool reference = false;             // also run the fp64 reference session
  int max_calls = -1;                 // -1: the whole stream
  AlarmRule rule;                // when exceedances become alarms
};

struct ReplayRun {
  ModelCard card;
  std::vector<canary::TensorSpec> inputs, outputs;
  std::vector<CallResult> results;
  Summary summary;
  TierComparison vs_reference;
  canary::Stats stats;
  std::vector<canary::Event> events;
  std::string jit_isa;
};

// Loads the model and its card, replays the stream's calls, evaluates.
ReplayRun replay(const ReplayConfig& config, const VehicleStream& stream);

// The card path for a model path: the same folder's metrics.json.
std::string card_path_for(const std::string& model_path);

}  // namespace vehicle
