// The flow-meter sample through the runtime: a 40-call stream with every kind
// of shape event gives the same decisions and outputs with the JIT on and off
// (conv and LSTM models), channel changes are typed errors while the stream
// goes on, NaN never reaches a model, and the committed models beat a
// constant-rate baseline on every phase (water, which the gauges barely
// reveal, by the least).
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <set>

#include "canary/canary.h"
#include "samples/flowmeter/flow_accuracy.h"
#include "samples/flowmeter/replay.h"

using namespace flowmeter;

namespace {

constexpr double kTierTolerance = 1e-4;  // relative, floor 1 Sm3/h: exact-math JIT vs interpreter

StreamConfig short_stream() {
  StreamConfig c;
  c.seed = 7;
  c.wells = 16;
  c.calls = 40;
  return c;
}

// A runtime with the JIT off, or on with synchronous compiles after two calls.
canary::Runtime make_runtime(bool jit) {
  canary::Options o;
  o.jit.enabled = jit;
  o.jit.synchronous = true;
  o.jit.hot_threshold = 2;
  o.jit.hot_time_us = 0;  // tier up by visits only: deterministic
  o.reject_non_finite_inputs = true;
  return canary::Runtime(o);
}

// True when the call was shaped by a channel change.
bool changes_channels(const CallRecord& c) {
  for (const ShapeEvent& e : c.shape_events)
    if (e.kind == ShapeEventKind::ChannelRemoved || e.kind == ShapeEventKind::ChannelAdded) return true;
  return false;
}

// Same outcome, same wells, same masks, rates within tolerance, call by call.
void check_tiers_agree(const ReplayResult& on, const ReplayResult& off) {
  REQUIRE(on.calls.size() == off.calls.size());
  for (std::size_t i = 0; i < on.calls.size(); ++i) {
    const CallRecord &a = on.calls[i], &b = off.calls[i];
    INFO("call " << i);
    CHECK(a.outcome == b.outcome);
    CHECK(a.error_kind == b.error_kind);
    CHECK(a.wells == b.wells);
    CHECK(a.masked == b.masked);
    REQUIRE(a.rates.size() == b.rates.size());
    for (std::size_t k = 0; k < a.rates.size(); ++k)
      CHECK(std::abs(a.rates[k] - b.rates[k]) <= kTierTolerance * std::max(1.0f, std::abs(b.rates[k])));
  }
}

// Every call either ran (or had every well masked), or was rejected with a
// shape error because its channels changed; nothing non-finite came out.
void check_stream_survived(const ReplayResult& r) {
  std::set<ShapeEventKind> seen;
  for (const CallRecord& c : r.calls) {
    INFO("call " << c.index << ": " << c.error);
    for (const ShapeEvent& e : c.shape_events) seen.insert(e.kind);
    if (changes_channels(c)) {
      CHECK(c.outcome == CallOutcome::Rejected);
      CHECK(c.error_kind == canary::ErrorKind::Shape);
    } else {
      CHECK(c.outcome != CallOutcome::Rejected);
    }
  }
  CHECK(seen.size() == kShapeEventKinds);
  const AccuracySummary a = summarize_accuracy(r);
  CHECK(a.non_finite_rates == 0);
  CHECK(a.negative_rates == 0);
  CHECK(a.estimates > 400);  // about 14 wells in each of 37 calls
}

// Replays the short stream with the JIT off and on and compares.
void check_model_tiers(ModelKind kind) {
  const StreamGenerator stream(short_stream());
  const canary::Runtime off_rt = make_runtime(false), on_rt = make_runtime(true);
  const canary::Model off_model = off_rt.load(default_model_path(kind));
  const canary::Model on_model = on_rt.load(default_model_path(kind));
  ReplayOptions options;
  options.reference = true;
  const ReplayResult off = replay_stream(off_model, stream, options);
  const ReplayResult on = replay_stream(on_model, stream, options);
  check_tiers_agree(on, off);
  check_stream_survived(on);
  check_stream_survived(off);
  // The JIT really ran compiled code and healed around the shape changes; off, it never did.
  CHECK(on.stats.jit.compiles >= 2);
  CHECK(on.stats.jit.compiled_entries >= 10);
  CHECK(on.stats.jit.guard_failures >= 1);
  CHECK(off.stats.jit.compiled_entries == 0);
  // f32 against the f64 reference session, per call.
  CHECK(summarize_accuracy(on).max_reference_error < 1e-3);
  CHECK(summarize_accuracy(off).max_reference_error < 1e-3);
}

}  // namespace

TEST_CASE("flow meter conv: JIT on and off agree on a stream with every shape event", "[unit][flowmeter][tiers]") {
  check_model_tiers(ModelKind::Conv);
}

TEST_CASE("flow meter LSTM: JIT on and off agree on a stream with every shape event", "[unit][flowmeter][tiers]") {
  check_model_tiers(ModelKind::Lstm);
}

TEST_CASE("flow meter: new wells are masked by the conv path and trimmed by the LSTM path", "[unit][flowmeter][gaps]") {
  const StreamGenerator stream(short_stream());
  int online_call = -1;
  for (const ShapeEvent& e : stream.script().events)
    if (e.kind == ShapeEventKind::WellsOnline) online_call = e.call;
  REQUIRE(online_call >= 0);
  const canary::Runtime rt = make_runtime(false);
  ReplayOptions options;
  options.calls = online_call + 1;
  const CallRecord conv = replay_stream(rt.load(default_model_path(ModelKind::Conv)), stream, options).calls.back();
  const CallRecord lstm = replay_stream(rt.load(default_model_path(ModelKind::Lstm)), stream, options).calls.back();
  // Well 15 is new: 34 of its 60 samples read nothing, more than half, so the conv path masks it...
  CHECK(std::count(conv.wells.begin(), conv.wells.end(), 15) == 0);
  bool masked = false;
  for (const auto& [well, reason] : conv.masked) masked |= well == 15;
  CHECK(masked);
  // ...while the LSTM path cuts the gap off and passes the 26 valid steps as its sequence length.
  CHECK(std::count(lstm.wells.begin(), lstm.wells.end(), 15) == 1);
  CHECK(lstm.trimmed_steps >= 34);
}

TEST_CASE("flow meter: a NaN that slipped past gap repair is a typed input error", "[unit][flowmeter][gaps]") {
  const canary::Runtime rt = make_runtime(true);
  canary::Session session = rt.load(default_model_path(ModelKind::Conv)).session();
  std::vector<float> x(2 * 7 * 60, 100.0f);
  x[7 * 60 + 3] = std::numeric_limits<float>::quiet_NaN();
  try {
    session.run({{"x", canary::Tensor::from_vector(x, {2, 7, 60})}});
    FAIL("a NaN input was accepted");
  } catch (const canary::Error& e) {
    CHECK(e.kind() == canary::ErrorKind::Input);
  }
}

TEST_CASE("flow meter: the trained models beat a constant-rate baseline", "[unit][flowmeter][accuracy]") {
  StreamConfig c;
  c.seed = 21;  // a field the models never saw (training fields use seeds from 1000)
  c.wells = 40;
  c.calls = 12;
  const StreamGenerator stream(c);
  const canary::Runtime rt = make_runtime(false);
  for (ModelKind kind : {ModelKind::Conv, ModelKind::Lstm}) {
    INFO(model_kind_name(kind));
    const ReplayResult r = replay_stream(rt.load(default_model_path(kind)), stream, {});
    // Baseline: every well predicted at the stream's own median true rate per phase.
    ReplayResult baseline = r;
    for (int p = 0; p < kPhases; ++p) {
      std::vector<double> truth;
      for (const CallRecord& call : r.calls)
        for (std::size_t k = 0; k < call.wells.size(); ++k) truth.push_back(call.truth[k * kPhases + static_cast<std::size_t>(p)]);
      std::nth_element(truth.begin(), truth.begin() + static_cast<std::ptrdiff_t>(truth.size() / 2), truth.end());
      for (CallRecord& call : baseline.calls)
        for (std::size_t k = 0; k < call.wells.size(); ++k)
          call.rates[k * kPhases + static_cast<std::size_t>(p)] = static_cast<float>(truth[truth.size() / 2]);
    }
    const AccuracySummary model = summarize_accuracy(r), constant = summarize_accuracy(baseline);
    CHECK(model.estimates > 300);
    // Measured on this stream: MAPE 47/41/62 % (conv) and 46/35/61 % (LSTM) against the
    // baseline's 130/135/83 %; median APE 28-30/28-30/68-70 % against 42/37/83 %.
    for (std::size_t p = 0; p < kPhases; ++p) {
      INFO(kPhaseNames[p] << ": model MAPE " << model.mape[p] << " %, median APE " << model.median_ape[p]
                          << " %; baseline " << constant.mape[p] << " %, " << constant.median_ape[p] << " %");
      CHECK(model.mape[p] < (p == 2 ? 0.85 : 0.5) * constant.mape[p]);
      CHECK(model.median_ape[p] < 0.9 * constant.median_ape[p]);
    }
  }
}
