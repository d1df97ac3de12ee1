// The vehicle sample through the runtime: a short stream with shape events
// gives the same alarms and outputs (within tolerance) with the JIT on and
// off, held and non-finite messages never reach the model, and a call the
// model cannot accept is a typed error while the stream goes on.
#include <catch2/catch.hpp>
#include <cmath>

#include "samples/vehicle/model_card.h"
#include "samples/vehicle/replay.h"

using namespace vehicle;

namespace {

const std::string kModel = default_model_dir() + "/vehicle_lstm.onnx";

// 8 s scene: the first 40 calls see the window fill up (W 8 -> 20), two vehicles join,
// the message format briefly widens (F 5 -> 6) and three vehicles leave.
ScenarioConfig short_scene() {
  ScenarioConfig c;
  c.seed = 5;
  c.seconds = 8.0;
  return c;
}

ReplayConfig tier(bool jit) {
  ReplayConfig c;
  c.model_path = kModel;
  c.jit = jit;
  c.synchronous_compiles = true;
  c.max_calls = 40;
  return c;
}

}  // namespace

TEST_CASE("vehicle stream: JIT on and off give the same alarms and outputs", "[unit][vehicle][tiers]") {
  const VehicleStream stream(short_scene());
  int shape_events = 0;
  for (const ShapeEvent& e : stream.script()) shape_events += e.first_call < 40;
  REQUIRE(shape_events >= 3);
  const ReplayRun on = replay(tier(true), stream);
  const ReplayRun off = replay(tier(false), stream);
  REQUIRE(on.results.size() == 40);
  REQUIRE(off.results.size() == 40);
  CHECK(on.stats.jit.compiled_entries > 0);  // the JIT really ran part of the stream
  CHECK(off.stats.jit.compiled_entries == 0);
  TierComparison cmp;
  for (std::size_t i = 0; i < on.results.size(); ++i) {
    CHECK(on.results[i].failed == off.results[i].failed);
    compare_tiers(on.results[i], off.results[i], on.card.threshold, 0.01, cmp);
  }
  CHECK(cmp.rows > 400);
  CHECK(cmp.outcome_mismatches == 0);
  CHECK(cmp.call_mismatches == 0);
  CHECK(cmp.flips_outside_band == 0);
  CHECK(cmp.flips_inside_band == 0);
  CHECK(cmp.max_rel_diff < 1e-4);
  CHECK(on.stats.failed_calls == off.stats.failed_calls);
}

TEST_CASE("vehicle stream: a six-field message is a typed error for that call only", "[unit][vehicle]") {
  const VehicleStream stream(short_scene());
  const ReplayRun run = replay(tier(true), stream);
  int failed = 0, ran_after = 0;
  for (const CallResult& r : run.results) {
    if (r.failed) {
      ++failed;
      CHECK(r.features == 6);
      CHECK((r.error_kind == canary::ErrorKind::Shape || r.error_kind == canary::ErrorKind::Input));
      CHECK(r.error.find("'x'") != std::string::npos);
      for (const RowDecision& d : r.rows) CHECK(d.outcome == RowOutcome::Rejected);
    } else if (failed > 0 && r.model_rows > 0) {
      ++ran_after;
    }
  }
  CHECK(failed >= 2);
  CHECK(ran_after > 5);
}

TEST_CASE("vehicle detector: held and non-finite messages never reach the model", "[unit][vehicle]") {
  ScenarioConfig c;
  c.seed = 7;
  const VehicleStream stream(c);
  int index = -1;
  for (int i = 0; i < stream.calls() && index < 0; ++i) {
    const StreamCall call = stream.call(i);
    for (std::size_t r = 0; r < call.labels.size(); ++r)
      if (call.labels[r].kind == LabelKind::MessageLoss && call.spec.features == 5) index = i;
  }
  REQUIRE(index >= 0);
  StreamCall call = stream.call(index);
  const std::size_t w = static_cast<std::size_t>(call.spec.window), f = 5;
  std::size_t stale_row = 0;
  while (call.labels[stale_row].kind != LabelKind::MessageLoss) ++stale_row;
  const std::size_t nan_row = stale_row == 0 ? 1 : 0;
  call.inputs[nan_row * w * f + 3] = std::nanf("");
  const canary::Runtime rt(detector_options(false, true));
  const canary::Model model = rt.load(kModel);
  Detector detector(model.session(), load_model_card(card_path_for(kModel)));
  const CallResult r = detector.process(call);
  CHECK(r.rows[stale_row].outcome == RowOutcome::Stale);
  CHECK(r.rows[stale_row].alarm);
  CHECK(r.rows[nan_row].outcome == RowOutcome::NonFinite);
  CHECK(r.rows[nan_row].alarm);
  std::int64_t screened = 0;
  for (const RowDecision& d : r.rows) screened += d.outcome != RowOutcome::Scored;
  CHECK(r.model_rows == call.rows() - screened);
  const auto& shapes = detector.session().stats().input_shapes.at(0).shapes;
  REQUIRE(shapes.size() == 1);
  CHECK(shapes[0].shape == canary::Shape{r.model_rows, call.spec.window, 5});
  CHECK(detector.session().stats().failed_calls == 0);
}
