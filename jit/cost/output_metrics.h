// Output metrics of a shadow run: one candidate output (model precision)
// against the fp64 reference's, and the spread of outputs under input noise.
// Pure functions on tensors; the session's shadow runner feeds them.
#pragma once

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "canary/cost.h"
#include "canary/tensor.h"

namespace canary::jit::cost {

// How one output of one call compares with the reference.
struct OutputComparison {
  std::string output;
  std::uint64_t elements = 0;
  double floor = 0.0;               // absolute floor used for the relative error
  double max_relative_error = 0.0;  // max |c - r| / max(|r|, floor) over finite pairs
  double max_abs_error = 0.0;
  double max_ulp = 0.0;             // max distance in floats between c and float(r)
  // Elements where the candidate is NaN/Inf but float(reference) is finite.
  std::uint64_t new_non_finite = 0;
  // Elements where |c| >= FLT_MAX / 2 but |float(reference)| < FLT_MAX / 2 (saturated or overflowed).
  std::uint64_t saturated = 0;
  // Decisions (only when a DecisionOutput names this output).
  std::uint64_t decisions = 0;      // elements (Threshold) or rows (Argmax) compared
  std::uint64_t near_flips = 0;     // flipped with reference margin <= near_margin
  std::uint64_t far_flips = 0;      // flipped with reference margin > near_margin
  std::vector<double> margins;      // the reference's margin per decision, in order
  double min_far_flip_margin = std::numeric_limits<double>::infinity();  // smallest margin among far flips
};

// Compares `candidate` (F32, or any float dtype) with `reference` (F64 for
// float outputs; other dtypes compare exactly: any mismatch counts as a
// relative error of 1). Shapes must match; otherwise the comparison reports
// every element as a mismatch (max_relative_error = +inf).
// relative_floor: floor = relative_floor x RMS(reference), at least the
// smallest normal float. `decision` may be null.
OutputComparison compare_output(const std::string& name, const Tensor& candidate, const Tensor& reference,
                                double relative_floor, const DecisionOutput* decision);

// A copy of `input` with relative Gaussian noise: x * (1 + sigma * N(0,1))
// for float dtypes; integer and bool inputs are returned unchanged.
Tensor perturb(const Tensor& input, double sigma, std::mt19937_64& rng);

// A dropout mask redrawn: each element 1 with probability p (the mask's
// mean), else 0; in the mask's dtype.
Tensor redraw_mask(const Tensor& mask, std::mt19937_64& rng);

// The spread of one output across perturbed copies, for the candidate and
// the reference: per element running mean and variance (Welford), summed.
class SpreadAccumulator {
 public:
  // One perturbed copy's outputs; shapes must stay the same across copies
  // (a mismatch is ignored and counted).
  void add(const Tensor& candidate, const Tensor& reference);
  std::uint64_t copies() const { return copies_; }
  // Copies ignored because their element count differed.
  std::uint64_t mismatches() const { return mismatches_; }
  // sqrt(sum of candidate variances) / sqrt(sum of reference variances);
  // 1 when both are 0, +inf when only the reference's is 0.
  double ratio() const;

 private:
  std::uint64_t copies_ = 0;
  std::uint64_t mismatches_ = 0;
  std::vector<double> mean_c_, m2_c_, mean_r_, m2_r_;
  std::vector<char> excluded_;  // per element: the reference was non-finite in some copy
};

}  // namespace canary::jit::cost
