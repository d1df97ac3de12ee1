// The replay loop: clean, run, record; a typed error ends the call, not the stream.
#include "samples/flowmeter/replay.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#ifndef CANARY_FLOWMETER_MODEL_DIR
#define CANARY_FLOWMETER_MODEL_DIR "samples/flowmeter/models"
#endif

namespace flowmeter {
namespace {

constexpr double kReferenceFloor = 1.0;  // Sm3/h: relative error below this rate is measured against it

// True when the model declares an input of that name.
bool has_input(const canary::Model& model, std::string_view name) {
  const auto& inputs = model.inputs();
  return std::any_of(inputs.begin(), inputs.end(), [&](const canary::TensorSpec& s) { return s.name == name; });
}

// Names of the call's channels, for masking reasons.
std::vector<std::string> channel_names_of(const FlowCall& call) {
  std::vector<std::string> names;
  for (Channel c : call.channels) names.emplace_back(channel_name(c));
  return names;
}

// The model inputs for a cleaned batch.
canary::NamedTensors make_inputs(const canary::Model& model, const CleanBatch& clean, std::int64_t channels,
                                 std::int64_t window) {
  const auto n = static_cast<std::int64_t>(clean.rows.size());
  canary::NamedTensors in;
  in.emplace("x", canary::Tensor::from_vector(clean.x, {n, channels, window}));
  if (has_input(model, "lens")) in.emplace("lens", canary::Tensor::from_vector(clean.lens, {n}));
  return in;
}

// Largest |a - b| / max(|b|, floor) over the two outputs.
double max_relative_error(const canary::Tensor& f32, const canary::Tensor& f64) {
  double worst = 0.0;
  for (std::int64_t i = 0; i < f32.numel() && i < f64.numel(); ++i) {
    const double ref = f64.element_as_double(i);
    worst = std::max(worst, std::abs(f32.element_as_double(i) - ref) / std::max(std::abs(ref), kReferenceFloor));
  }
  return worst;
}

// Copies rates and truth of the kept rows into the record.
void record_rates(CallRecord& rec, const FlowCall& call, const CleanBatch& clean, const canary::Tensor& rates) {
  for (std::size_t k = 0; k < clean.rows.size(); ++k) {
    const auto row = static_cast<std::size_t>(clean.rows[k]);
    rec.wells.push_back(call.wells[row]);
    for (int p = 0; p < kPhases; ++p) {
      rec.rates.push_back(static_cast<float>(rates.element_as_double(static_cast<std::int64_t>(k) * kPhases + p)));
      rec.truth.push_back(call.truth[row * kPhases + static_cast<std::size_t>(p)]);
    }
  }
}

// Runs one call; a canary::Error marks it rejected.
void run_call(canary::Session& session, canary::Session* reference, const canary::Model& model,
              const FlowCall& call, const CleanBatch& clean, CallRecord& rec) {
  const auto in = make_inputs(model, clean, rec.stream_shape[1], rec.stream_shape[2]);
  try {
    const auto start = std::chrono::steady_clock::now();
    const canary::NamedTensors out = session.run(in);
    rec.latency_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    const canary::Tensor& rates = out.at(model.outputs().front().name);
    record_rates(rec, call, clean, rates);
    if (reference)
      rec.max_reference_error = max_relative_error(rates, reference->run(in).at(model.outputs().front().name));
  } catch (const canary::Error& e) {
    rec.outcome = CallOutcome::Rejected;
    rec.error_kind = e.kind();
    rec.error = e.detail();
  }
}

}  // namespace

// "conv" or "lstm".
std::string_view model_kind_name(ModelKind kind) { return kind == ModelKind::Conv ? "conv" : "lstm"; }

// samples/flowmeter/models/flowmeter_<kind>.onnx.
std::string default_model_path(ModelKind kind) {
  return std::string(CANARY_FLOWMETER_MODEL_DIR) + "/flowmeter_" + std::string(model_kind_name(kind)) + ".onnx";
}

// Trim leading gaps when the model takes sequence lengths, fill them otherwise.
GapPolicy gap_policy_for(const canary::Model& model) {
  return has_input(model, "lens") ? GapPolicy::TrimLeading : GapPolicy::Impute;
}

// Per call: build it, clean it, run it (unless nothing is left), collect the JIT's events.
ReplayResult replay_stream(const canary::Model& model, const StreamGenerator& stream, const ReplayOptions& options) {
  ReplayResult result;
  canary::Session session = model.session();
  canary::Session reference = model.reference_session();
  const GapPolicy policy = gap_policy_for(model);
  const int calls = options.calls < 0 ? stream.config().calls : std::min(options.calls, stream.config().calls);
  std::uint64_t next_event = 0;
  for (int i = 0; i < calls; ++i) {
    const FlowCall call = stream.call(i);
    CallRecord rec;
    rec.index = i;
    rec.stream_shape = call.shape();
    rec.shape_events = call.events;
    const auto [n, f, w] = call.shape();
    const CleanBatch clean = clean_batch(call.x, static_cast<int>(n), static_cast<int>(f), static_cast<int>(w), policy,
                                         channel_names_of(call));
    for (const MaskedWell& m : clean.masked) rec.masked.emplace_back(call.wells[static_cast<std::size_t>(m.row)], m.reason);
    rec.imputed_values = clean.imputed_values;
    rec.trimmed_steps = clean.trimmed_steps;
    rec.sent_shape = {static_cast<std::int64_t>(clean.rows.size()), f, w};
    if (clean.rows.empty()) rec.outcome = CallOutcome::NoWells;
    else run_call(session, options.reference ? &reference : nullptr, model, call, clean, rec);
    rec.events = model.events(next_event);
    if (!rec.events.empty()) next_event = rec.events.back().sequence + 1;
    result.calls.push_back(std::move(rec));
  }
  model.wait_for_compiles();
  for (const canary::Event& e : model.events(next_event))
    if (!result.calls.empty()) result.calls.back().events.push_back(e);
  result.stats = session.stats();
  result.jit = model.jit_report();
  result.events = model.events();
  return result;
}

}  // namespace flowmeter
