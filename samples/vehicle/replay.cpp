// The replay loop: one StreamCall at a time through the detector (and the
// reference), evaluated as it goes; the JIT's log is read at the end.
#include "samples/vehicle/replay.h"

#include <algorithm>
#include <cmath>

namespace vehicle {

// Compares outcomes, alarms and predictions row by row.
void compare_tiers(const CallResult& tier, const CallResult& reference, double threshold, double band,
                   TierComparison& out) {
  if (tier.failed != reference.failed) ++out.call_mismatches;
  for (std::size_t r = 0; r < std::min(tier.rows.size(), reference.rows.size()); ++r) {
    const RowDecision& a = tier.rows[r];
    const RowDecision& b = reference.rows[r];
    if (a.outcome != b.outcome) {
      ++out.outcome_mismatches;
      continue;
    }
    if (a.outcome != RowOutcome::Scored) continue;
    ++out.rows;
    for (std::size_t j = 0; j < a.prediction.size(); ++j) {
      const double diff = std::abs(a.prediction[j] - b.prediction[j]);
      out.max_abs_diff = std::max(out.max_abs_diff, diff);
      out.max_rel_diff = std::max(out.max_rel_diff, diff / (1.0 + std::abs(b.prediction[j])));
    }
    if (a.alarm == b.alarm) continue;
    if (std::abs(b.score - threshold) <= band * threshold) ++out.flips_inside_band;
    else ++out.flips_outside_band;
  }
}

// "models/vehicle_lstm.onnx" → "models/metrics.json".
std::string card_path_for(const std::string& model_path) {
  const std::size_t slash = model_path.find_last_of('/');
  return (slash == std::string::npos ? std::string() : model_path.substr(0, slash + 1)) + "metrics.json";
}

// Loads, replays, evaluates, then reads Stats and the event log.
ReplayRun replay(const ReplayConfig& config, const VehicleStream& stream) {
  ReplayRun run;
  const canary::Runtime runtime(detector_options(config.jit, config.synchronous_compiles));
  const canary::Model model = runtime.load(config.model_path);
  run.card = load_model_card(card_path_for(config.model_path));
  run.inputs = model.inputs();
  run.outputs = model.outputs();
  Detector detector(model.session(), run.card, config.rule);
  Detector reference(model.reference_session(), run.card, config.rule);
  Evaluation evaluation(stream.scene().scenario);
  const int calls = config.max_calls < 0 ? stream.calls() : std::min(config.max_calls, stream.calls());
  constexpr double kFlipBand = 0.01;
  for (int i = 0; i < calls; ++i) {
    const StreamCall call = stream.call(i);
    CallResult result = detector.process(call);
    evaluation.add(call, result);
    if (config.reference)
      compare_tiers(result, reference.process(call), run.card.threshold, kFlipBand, run.vs_reference);
    run.results.push_back(std::move(result));
  }
  model.wait_for_compiles();
  run.summary = evaluation.finish();
  run.stats = detector.session().stats();
  run.events = model.events();
  run.jit_isa = model.jit_report().isa;
  return run;
}

}  // namespace vehicle
