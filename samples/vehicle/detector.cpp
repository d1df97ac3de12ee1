// Screening, batching, one Session::run per call, scoring and alarms.
#include "samples/vehicle/detector.h"

#include <chrono>
#include <cmath>

namespace vehicle {
namespace {

// Outcome before the model: held messages and non-finite values are caught here.
RowOutcome screen_row(const StreamCall& call, std::size_t row) {
  const std::size_t w = static_cast<std::size_t>(call.spec.window);
  const std::size_t f = static_cast<std::size_t>(call.spec.features);
  for (std::size_t k = 0; k < w * f; ++k)
    if (!std::isfinite(call.inputs[row * w * f + k])) return RowOutcome::NonFinite;
  for (std::size_t j = 0; j < kTargets; ++j)
    if (!std::isfinite(call.observed[row * kTargets + j])) return RowOutcome::NonFinite;
  if (call.stale[row * (w + 1) + w]) return RowOutcome::Stale;
  for (std::size_t k = 0; k < w; ++k)
    if (call.stale[row * (w + 1) + k]) return RowOutcome::Recovering;
  return RowOutcome::Scored;
}

// The rows to predict, copied into one [rows, window, features] tensor.
canary::Tensor gather_batch(const StreamCall& call, const std::vector<std::size_t>& rows) {
  const std::size_t per_row = static_cast<std::size_t>(call.spec.window * call.spec.features);
  std::vector<float> values;
  values.reserve(rows.size() * per_row);
  for (std::size_t r : rows)
    values.insert(values.end(), call.inputs.begin() + static_cast<std::ptrdiff_t>(r * per_row),
                  call.inputs.begin() + static_cast<std::ptrdiff_t>((r + 1) * per_row));
  return canary::Tensor::from_vector(values, {static_cast<std::int64_t>(rows.size()), call.spec.window,
                                              call.spec.features});
}

// Mean of squared standardised residuals; non-finite when the prediction is.
double score_row(const ModelCard& card, const std::array<double, 3>& prediction, const float* observed) {
  double sum = 0.0;
  for (std::size_t j = 0; j < kTargets; ++j) {
    const double z = (prediction[j] - observed[j]) / card.residual_std[j];
    sum += z * z;
  }
  return sum / kTargets;
}

}  // namespace

// "scored", "stale", ...
const char* row_outcome_name(RowOutcome o) {
  switch (o) {
    case RowOutcome::Scored: return "scored";
    case RowOutcome::Stale: return "stale";
    case RowOutcome::Recovering: return "recovering";
    case RowOutcome::NonFinite: return "non-finite";
    case RowOutcome::Rejected: return "rejected";
  }
  return "?";
}

// JIT per the flag; NaN/Inf inputs are an Error(Input) should one ever slip past the screen.
canary::Options detector_options(bool jit, bool synchronous_compiles) {
  canary::Options o;
  o.jit.enabled = jit;
  o.jit.synchronous = synchronous_compiles;
  o.reject_non_finite_inputs = true;
  return o;
}

Detector::Detector(canary::Session session, ModelCard card, AlarmRule rule)
    : session_(std::move(session)), card_(std::move(card)), rule_(rule) {}

// Counts consecutive exceedances per vehicle (any other outcome resets the count); a strong score alarms alone.
bool Detector::persistent_alarm(int vehicle, bool exceeds, double score) {
  int& streak = streaks_[vehicle];
  streak = exceeds ? streak + 1 : 0;
  return streak >= rule_.persistence || (rule_.strong_factor > 0.0 && score > rule_.strong_factor * card_.threshold);
}

// Screens every row, runs the valid ones in one call, scores them.
CallResult Detector::process(const StreamCall& call) {
  CallResult result;
  result.index = call.index;
  result.window = call.spec.window;
  result.features = call.spec.features;
  result.rows.resize(static_cast<std::size_t>(call.rows()));
  std::vector<std::size_t> valid;
  for (std::size_t r = 0; r < result.rows.size(); ++r) {
    RowDecision& d = result.rows[r];
    d.outcome = screen_row(call, r);
    d.alarm = d.exceeds = d.outcome == RowOutcome::Stale || d.outcome == RowOutcome::NonFinite;
    if (d.outcome == RowOutcome::Scored) valid.push_back(r);
    else streaks_[call.spec.vehicles[r]] = 0;
  }
  result.model_rows = static_cast<std::int64_t>(valid.size());
  if (valid.empty()) return result;
  const canary::NamedTensors inputs{{card_.input, gather_batch(call, valid)}};
  const std::uint64_t compiled_before = session_.stats().jit.compiled_entries;
  const auto start = std::chrono::steady_clock::now();
  try {
    const canary::NamedTensors out = session_.run(inputs);
    result.latency_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    const canary::Tensor& y_tensor = out.at(card_.output);
    if (y_tensor.shape() != canary::Shape{result.model_rows, kTargets})
      throw canary::Error(canary::ErrorKind::Shape, "output '" + card_.output + "' expected [" +
                                                        std::to_string(result.model_rows) + ", 3], got " +
                                                        canary::shape_to_string(y_tensor.shape()));
    for (std::size_t i = 0; i < valid.size(); ++i) {
      RowDecision& d = result.rows[valid[i]];
      for (std::size_t j = 0; j < kTargets; ++j)
        d.prediction[j] = y_tensor.element_as_double(static_cast<std::int64_t>(i * kTargets + j));
      d.score = score_row(card_, d.prediction, call.observed.data() + valid[i] * kTargets);
      if (!std::isfinite(d.score)) d.outcome = RowOutcome::NonFinite;
      d.exceeds = !std::isfinite(d.score) || d.score > card_.threshold;
      d.alarm = d.outcome == RowOutcome::NonFinite || persistent_alarm(call.spec.vehicles[valid[i]], d.exceeds, d.score);
    }
  } catch (const canary::Error& e) {
    result.failed = true;
    result.error_kind = e.kind();
    result.error = e.what();
    for (std::size_t r : valid) {
      result.rows[r].outcome = RowOutcome::Rejected;
      streaks_[call.spec.vehicles[r]] = 0;
    }
  }
  const canary::Stats& st = session_.stats();
  result.session_call = static_cast<std::int64_t>(st.calls + st.failed_calls);
  result.compiled = st.jit.compiled_entries > compiled_before;
  return result;
}

}  // namespace vehicle
