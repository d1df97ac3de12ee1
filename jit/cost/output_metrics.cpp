// Output metrics of a shadow run: error, ulp distance, new non-finite and
// saturated values, decision flips, input perturbation and output spread.
#include "jit/cost/output_metrics.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

namespace canary::jit::cost {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Every element of a defined tensor as a double (any dtype).
std::vector<double> to_doubles(const Tensor& t) {
  std::vector<double> out(static_cast<std::size_t>(t.defined() ? t.numel() : 0));
  if (out.empty()) return out;
  if (t.dtype() == DType::F32) {
    const float* p = t.data<float>();
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = p[i];
  } else if (t.dtype() == DType::F64) {
    std::memcpy(out.data(), t.data<double>(), out.size() * sizeof(double));
  } else {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = t.element_as_double(static_cast<std::int64_t>(i));
  }
  return out;
}

// Stores v into element i of t, converted to t's dtype.
void store_element(Tensor& t, std::size_t i, double v) {
  switch (t.dtype()) {
    case DType::F32: t.data<float>()[i] = static_cast<float>(v); break;
    case DType::F64: t.data<double>()[i] = v; break;
    case DType::I64: t.data<std::int64_t>()[i] = static_cast<std::int64_t>(v); break;
    case DType::I32: t.data<std::int32_t>()[i] = static_cast<std::int32_t>(v); break;
    case DType::Bool: t.data<bool>()[i] = v != 0.0; break;
  }
}

// Position of a float on the integer line where adjacent floats differ by 1
// (+0 and -0 both map to 0, negatives below it).
std::int64_t ordered_float(float f) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof bits);
  const auto magnitude = static_cast<std::int64_t>(bits & 0x7fffffffu);
  return (bits & 0x80000000u) ? -magnitude : magnitude;
}

// Floats between a and b (neither NaN).
double ulp_distance(float a, float b) {
  return static_cast<double>(std::llabs(ordered_float(a) - ordered_float(b)));
}

// 0 finite, 1 +Inf, 2 -Inf, 3 NaN.
int value_class(double v) {
  if (std::isnan(v)) return 3;
  if (std::isinf(v)) return v > 0 ? 1 : 2;
  return 0;
}

// Root mean square of the finite values (0 when there are none).
double finite_rms(const std::vector<double>& values) {
  double sum = 0.0;
  std::size_t n = 0;
  for (double v : values)
    if (std::isfinite(v)) {
      sum += v * v;
      ++n;
    }
  return n ? std::sqrt(sum / static_cast<double>(n)) : 0.0;
}

// Relative, absolute and ulp errors of float outputs, and new non-finite or saturated values.
void compare_floats(const std::vector<double>& c, const std::vector<double>& r, OutputComparison& out) {
  constexpr double kSaturation = FLT_MAX / 2.0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const double rf = static_cast<double>(static_cast<float>(r[i]));
    if (!std::isnan(c[i]) && !std::isnan(rf))
      out.max_ulp = std::max(out.max_ulp, ulp_distance(static_cast<float>(c[i]), static_cast<float>(rf)));
    if (std::isfinite(c[i]) && std::isfinite(r[i])) {
      const double abs_err = std::fabs(c[i] - r[i]);
      out.max_abs_error = std::max(out.max_abs_error, abs_err);
      out.max_relative_error = std::max(out.max_relative_error, abs_err / std::max(std::fabs(r[i]), out.floor));
      if (std::fabs(c[i]) >= kSaturation && std::fabs(rf) < kSaturation) ++out.saturated;
    } else if (!std::isfinite(c[i]) && std::isfinite(rf)) {
      ++out.new_non_finite;
    } else if (value_class(c[i]) != value_class(rf)) {
      // A finite value where the reference has none, or another kind of non-finite.
      out.max_relative_error = kInf;
      out.max_abs_error = kInf;
    }
  }
}

// Integer and bool outputs: exact comparison, a mismatch is a relative error of 1.
void compare_exact(const std::vector<double>& c, const std::vector<double>& r, OutputComparison& out) {
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (c[i] == r[i]) continue;
    out.max_relative_error = std::max(out.max_relative_error, 1.0);
    out.max_abs_error = std::max(out.max_abs_error, std::fabs(c[i] - r[i]));
  }
}

// Records one decision: its reference margin and whether it flipped.
void record_decision(bool flipped, double margin, double near_margin, OutputComparison& out) {
  ++out.decisions;
  out.margins.push_back(margin);
  if (!flipped) return;
  if (margin <= near_margin) {
    ++out.near_flips;
  } else {
    ++out.far_flips;
    out.min_far_flip_margin = std::min(out.min_far_flip_margin, margin);
  }
}

// Index of the largest value of a row (the first on ties).
std::size_t row_argmax(const double* row, std::size_t cols) {
  std::size_t best = 0;
  for (std::size_t j = 1; j < cols; ++j)
    if (row[j] > row[best]) best = j;
  return best;
}

// Gap between the largest value of a row (at best) and the next largest.
double row_margin(const double* row, std::size_t cols, std::size_t best) {
  if (cols < 2) return kInf;
  double second = -kInf;
  for (std::size_t j = 0; j < cols; ++j)
    if (j != best) second = std::max(second, row[j]);
  return row[best] - second;
}

// Counts flips of the decisions `decision` describes.
void compare_decisions(const std::vector<double>& c, const std::vector<double>& r, const Shape& shape,
                       const DecisionOutput& decision, OutputComparison& out) {
  if (decision.kind == DecisionOutput::Kind::Threshold) {
    for (std::size_t i = 0; i < c.size(); ++i)
      record_decision((c[i] > decision.threshold) != (r[i] > decision.threshold),
                      std::fabs(r[i] - decision.threshold), decision.near_margin, out);
    return;
  }
  const std::size_t cols = shape.empty() ? 1 : static_cast<std::size_t>(shape.back());
  if (cols == 0) return;
  for (std::size_t row = 0; row < c.size() / cols; ++row) {
    const double* cr = c.data() + row * cols;
    const double* rr = r.data() + row * cols;
    const std::size_t best = row_argmax(rr, cols);
    record_decision(row_argmax(cr, cols) != best, row_margin(rr, cols, best), decision.near_margin, out);
  }
}

}  // namespace

// Errors, non-finite and saturated counts, and decision flips of one output.
OutputComparison compare_output(const std::string& name, const Tensor& candidate, const Tensor& reference,
                                double relative_floor, const DecisionOutput* decision) {
  OutputComparison out;
  out.output = name;
  const std::int64_t cn = candidate.defined() ? candidate.numel() : 0;
  const std::int64_t rn = reference.defined() ? reference.numel() : 0;
  if (candidate.shape() != reference.shape() || cn != rn) {
    out.elements = static_cast<std::uint64_t>(std::max(cn, rn));
    out.max_relative_error = kInf;
    return out;
  }
  out.elements = static_cast<std::uint64_t>(cn);
  const std::vector<double> c = to_doubles(candidate);
  const std::vector<double> r = to_doubles(reference);
  out.floor = std::max(relative_floor * finite_rms(r), static_cast<double>(FLT_MIN));
  if (is_floating(candidate.dtype()) && is_floating(reference.dtype()))
    compare_floats(c, r, out);
  else
    compare_exact(c, r, out);
  if (decision) compare_decisions(c, r, reference.shape(), *decision, out);
  return out;
}

// A float copy with relative Gaussian noise; other dtypes unchanged.
Tensor perturb(const Tensor& input, double sigma, std::mt19937_64& rng) {
  if (!input.defined() || !is_floating(input.dtype())) return input;
  Tensor out = input.clone();
  std::normal_distribution<double> noise(0.0, 1.0);
  const std::vector<double> values = to_doubles(input);
  for (std::size_t i = 0; i < values.size(); ++i) store_element(out, i, values[i] * (1.0 + sigma * noise(rng)));
  return out;
}

// A fresh Bernoulli mask with the old mask's mean as keep probability.
Tensor redraw_mask(const Tensor& mask, std::mt19937_64& rng) {
  if (!mask.defined()) return mask;
  const std::vector<double> values = to_doubles(mask);
  double sum = 0.0;
  for (double v : values) sum += v;
  double p = values.empty() ? 0.0 : sum / static_cast<double>(values.size());
  p = std::isnan(p) ? 0.0 : std::clamp(p, 0.0, 1.0);
  Tensor out = Tensor::empty(mask.dtype(), mask.shape());
  std::bernoulli_distribution keep(p);
  for (std::size_t i = 0; i < values.size(); ++i) store_element(out, i, keep(rng) ? 1.0 : 0.0);
  return out;
}

namespace {

// Welford's update of per-element running means and sums of squared
// deviations, for the elements not excluded.
void welford_update(std::vector<double>& mean, std::vector<double>& m2, const std::vector<double>& x,
                    std::uint64_t n, const std::vector<char>& excluded) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (excluded[i]) continue;
    const double delta = x[i] - mean[i];
    mean[i] += delta / static_cast<double>(n);
    m2[i] += delta * (x[i] - mean[i]);
  }
}

// Sum over the elements not excluded of the sample variance.
double summed_variance(const std::vector<double>& m2, std::uint64_t n, const std::vector<char>& excluded) {
  double sum = 0.0;
  for (std::size_t i = 0; i < m2.size(); ++i)
    if (!excluded[i]) sum += m2[i];
  return sum / static_cast<double>(n - 1);
}

}  // namespace

// Adds one copy's outputs; the first fixes the element count.
void SpreadAccumulator::add(const Tensor& candidate, const Tensor& reference) {
  const std::vector<double> c = to_doubles(candidate);
  const std::vector<double> r = to_doubles(reference);
  if (c.size() != r.size() || (copies_ > 0 && c.size() != mean_c_.size())) {
    ++mismatches_;
    return;
  }
  if (copies_ == 0) {
    mean_c_.assign(c.size(), 0.0);
    m2_c_.assign(c.size(), 0.0);
    mean_r_.assign(r.size(), 0.0);
    m2_r_.assign(r.size(), 0.0);
    excluded_.assign(r.size(), 0);
  }
  // An element the reference itself makes NaN or Inf (a NaN input, say) has
  // no spread to compare: it leaves the sums for good. A candidate that is
  // non-finite where the reference is not keeps its element: its spread is
  // then NaN, and the ratio infinite.
  for (std::size_t i = 0; i < r.size(); ++i)
    if (!std::isfinite(r[i])) excluded_[i] = 1;
  ++copies_;
  welford_update(mean_c_, m2_c_, c, copies_, excluded_);
  welford_update(mean_r_, m2_r_, r, copies_, excluded_);
}

// Candidate spread over reference spread (a NaN variance counts as infinite).
double SpreadAccumulator::ratio() const {
  if (copies_ < 2) return 1.0;
  const double vc = summed_variance(m2_c_, copies_, excluded_);
  const double vr = summed_variance(m2_r_, copies_, excluded_);
  if (std::isnan(vc) || std::isnan(vr)) return kInf;
  if (vr == 0.0) return vc == 0.0 ? 1.0 : kInf;
  return std::sqrt(vc) / std::sqrt(vr);
}

}  // namespace canary::jit::cost
