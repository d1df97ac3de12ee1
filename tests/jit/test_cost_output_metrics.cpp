// Output metrics of shadow runs: errors against the fp64 reference, ulp
// distance, new non-finite and saturated values, decision flips, input
// perturbation, mask redraws and output spread.
#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <limits>

#include "jit/cost/output_metrics.h"

using namespace canary;
using namespace canary::jit::cost;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
constexpr float kInff = std::numeric_limits<float>::infinity();

Tensor f32(const std::vector<float>& v) { return Tensor::from_vector<float>(v, {static_cast<std::int64_t>(v.size())}); }
Tensor f64(const std::vector<double>& v) {
  return Tensor::from_vector<double>(v, {static_cast<std::int64_t>(v.size())});
}

}  // namespace

TEST_CASE("identical outputs compare with no error", "[unit][cost]") {
  const OutputComparison c = compare_output("y", f32({1, 2, 3}), f64({1, 2, 3}), 1e-3, nullptr);
  CHECK(c.output == "y");
  CHECK(c.elements == 3);
  CHECK(c.max_relative_error == 0.0);
  CHECK(c.max_abs_error == 0.0);
  CHECK(c.max_ulp == 0.0);
  CHECK(c.new_non_finite == 0);
  CHECK(c.saturated == 0);
  CHECK(c.decisions == 0);
  CHECK(c.margins.empty());
}

TEST_CASE("relative error uses a floor of relative_floor times the reference RMS", "[unit][cost]") {
  // RMS of [0, 3, 4] is sqrt(25 / 3); floor = 0.1 * that = 0.288675...
  const float c0 = 0.01f, c2 = 4.004f;
  const OutputComparison c = compare_output("y", f32({c0, 3, c2}), f64({0, 3, 4}), 0.1, nullptr);
  const double floor = 0.1 * std::sqrt(25.0 / 3.0);
  CHECK(c.floor == Approx(floor).epsilon(1e-12));
  // Element 0 is near zero: |0.01 - 0| / floor = 0.0346 (not 0.01 / 0).
  CHECK(c.max_relative_error == Approx(double(c0) / floor).epsilon(1e-12));
  CHECK(c.max_relative_error == Approx(0.034641).epsilon(1e-4));
  CHECK(c.max_abs_error == Approx(double(c0)).epsilon(1e-12));
}

TEST_CASE("the floor is at least the smallest normal float", "[unit][cost]") {
  const OutputComparison c = compare_output("y", f32({0, 0}), f64({0, 0}), 1e-3, nullptr);
  CHECK(c.floor == double(FLT_MIN));
  CHECK(c.max_relative_error == 0.0);
}

TEST_CASE("ulp distance counts floats between candidate and float(reference)", "[unit][cost]") {
  const float one_up = std::nextafter(1.0f, 2.0f);
  CHECK(compare_output("y", f32({one_up}), f64({1.0}), 1e-3, nullptr).max_ulp == 1.0);
  // Three floats up from 2.
  const float three_up = std::nextafter(std::nextafter(std::nextafter(2.0f, 4.0f), 4.0f), 4.0f);
  CHECK(compare_output("y", f32({three_up}), f64({2.0}), 1e-3, nullptr).max_ulp == 3.0);
  // +0 and -0 are the same point; the smallest denormals either side of zero are 2 apart.
  CHECK(compare_output("y", f32({-0.0f}), f64({0.0}), 1e-3, nullptr).max_ulp == 0.0);
  const float tiny = std::numeric_limits<float>::denorm_min();
  CHECK(compare_output("y", f32({tiny}), f64({-double(tiny)}), 1e-3, nullptr).max_ulp == 2.0);
  // The reference is rounded to float first: 1 + 2^-30 rounds to 1.
  CHECK(compare_output("y", f32({1.0f}), f64({1.0 + std::ldexp(1.0, -30)}), 1e-3, nullptr).max_ulp == 0.0);
}

TEST_CASE("new NaN and Inf values are counted, not folded into the error", "[unit][cost]") {
  const OutputComparison c = compare_output("y", f32({kNaNf, kInff, 1.0f}), f64({1, 1, 1}), 1e-3, nullptr);
  CHECK(c.new_non_finite == 2);
  CHECK(c.saturated == 0);
  CHECK(c.max_relative_error == 0.0);
  // NaN is skipped; Inf (0x7f800000) is 0x40000000 floats above 1 (0x3f800000).
  CHECK(c.max_ulp == 1073741824.0);
}

TEST_CASE("non-finite values the reference shares are fine, others are errors", "[unit][cost]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const OutputComparison same = compare_output("y", f32({kNaNf, -kInff, kInff}), f64({nan, -kInf, kInf}), 1e-3, nullptr);
  CHECK(same.new_non_finite == 0);
  CHECK(same.max_relative_error == 0.0);
  // A reference that overflows float: an Inf candidate is the same class.
  CHECK(compare_output("y", f32({kInff}), f64({1e39}), 1e-3, nullptr).new_non_finite == 0);
  CHECK(compare_output("y", f32({kInff}), f64({1e39}), 1e-3, nullptr).max_relative_error == 0.0);
  // A finite value where the reference is NaN, or Inf of the wrong sign.
  CHECK(compare_output("y", f32({1.0f}), f64({nan}), 1e-3, nullptr).max_relative_error == kInf);
  CHECK(compare_output("y", f32({-kInff}), f64({kInf}), 1e-3, nullptr).max_relative_error == kInf);
}

TEST_CASE("values near FLT_MAX the reference does not reach count as saturated", "[unit][cost]") {
  const OutputComparison c = compare_output("y", f32({FLT_MAX * 0.75f, 2.0f}), f64({1.0, 2.0}), 1e-3, nullptr);
  CHECK(c.saturated == 1);
  CHECK(c.new_non_finite == 0);
  // Both large: not a saturation.
  CHECK(compare_output("y", f32({FLT_MAX * 0.75f}), f64({FLT_MAX * 0.6}), 1e-3, nullptr).saturated == 0);
  // The reference itself overflows float: not a saturation either.
  CHECK(compare_output("y", f32({3e38f}), f64({1e39}), 1e-3, nullptr).saturated == 0);
  // An Inf is a new non-finite value only.
  const OutputComparison inf = compare_output("y", f32({kInff}), f64({1.0}), 1e-3, nullptr);
  CHECK(inf.new_non_finite == 1);
  CHECK(inf.saturated == 0);
}

TEST_CASE("a shape mismatch reports every element as wrong", "[unit][cost]") {
  const Tensor a = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {3, 2});
  const OutputComparison c = compare_output("y", a, b, 1e-3, nullptr);
  CHECK(c.max_relative_error == kInf);
  CHECK(c.elements == 6);
  const OutputComparison d = compare_output("y", f32({1, 2, 3, 4}), f64({1, 2}), 1e-3, nullptr);
  CHECK(d.max_relative_error == kInf);
  CHECK(d.elements == 4);
}

TEST_CASE("integer and bool outputs compare exactly", "[unit][cost]") {
  const Tensor c = Tensor::from_vector<std::int64_t>({1, 2, 3}, {3});
  const Tensor r = Tensor::from_vector<std::int64_t>({1, 5, 3}, {3});
  const OutputComparison m = compare_output("idx", c, r, 1e-3, nullptr);
  CHECK(m.max_relative_error == 1.0);
  CHECK(m.max_abs_error == 3.0);
  CHECK(compare_output("idx", c, c, 1e-3, nullptr).max_relative_error == 0.0);
  const Tensor b = Tensor::from_vector<bool>({true, false}, {2});
  CHECK(compare_output("flag", b, b, 1e-3, nullptr).max_relative_error == 0.0);
  const Tensor b2 = Tensor::from_vector<bool>({true, true}, {2});
  CHECK(compare_output("flag", b2, b, 1e-3, nullptr).max_relative_error == 1.0);
}

TEST_CASE("threshold decisions count near and far flips with the reference margin", "[unit][cost]") {
  DecisionOutput d;
  d.output = "p";
  d.kind = DecisionOutput::Kind::Threshold;
  d.threshold = 0.5;
  d.near_margin = 0.01;
  // 0: near flip (margin 0.005); 1: far flip (0.4); 2: no flip (0.4); 3: far flip (0.3).
  const OutputComparison c =
      compare_output("p", f32({0.495f, 0.3f, 0.1f, 0.6f}), f64({0.505, 0.9, 0.1, 0.2}), 1e-3, &d);
  CHECK(c.decisions == 4);
  CHECK(c.near_flips == 1);
  CHECK(c.far_flips == 2);
  REQUIRE(c.margins.size() == 4);
  CHECK(c.margins[0] == Approx(0.005));
  CHECK(c.margins[1] == Approx(0.4));
  CHECK(c.margins[2] == Approx(0.4));
  CHECK(c.margins[3] == Approx(0.3));
}

TEST_CASE("argmax decisions compare rows over the last axis", "[unit][cost]") {
  DecisionOutput d;
  d.kind = DecisionOutput::Kind::Argmax;
  d.near_margin = 0.02;
  const Tensor ref = Tensor::from_vector<double>({0.1, 0.5, 0.49, 1, 2, 3, 2, 2, 1}, {3, 3});
  const Tensor cand = Tensor::from_vector<float>({0.1f, 0.48f, 0.49f, 3, 2, 1, 2, 2, 1}, {3, 3});
  const OutputComparison c = compare_output("logits", cand, ref, 1e-3, &d);
  // Row 0 flips 1 -> 2 with margin 0.01 (near); row 1 flips 2 -> 0 with margin 1
  // (far); row 2 ties on 0 and 1, the first wins in both (margin 0).
  CHECK(c.decisions == 3);
  CHECK(c.near_flips == 1);
  CHECK(c.far_flips == 1);
  REQUIRE(c.margins.size() == 3);
  CHECK(c.margins[0] == Approx(0.01));
  CHECK(c.margins[1] == Approx(1.0));
  CHECK(c.margins[2] == 0.0);
}

TEST_CASE("argmax of a scalar or a single column has an infinite margin", "[unit][cost]") {
  DecisionOutput d;
  d.kind = DecisionOutput::Kind::Argmax;
  const OutputComparison s = compare_output("y", Tensor::scalar<float>(2.0f), Tensor::scalar<double>(3.0), 1e-3, &d);
  CHECK(s.decisions == 1);
  CHECK(s.margins == std::vector<double>{kInf});
  CHECK(s.far_flips == 0);
  const Tensor col = Tensor::from_vector<double>({1, 2}, {2, 1});
  const Tensor colf = Tensor::from_vector<float>({5, 6}, {2, 1});
  const OutputComparison c = compare_output("y", colf, col, 1e-3, &d);
  CHECK(c.decisions == 2);
  CHECK(c.near_flips + c.far_flips == 0);
}

TEST_CASE("perturb applies relative Gaussian noise to float inputs only", "[unit][cost]") {
  std::mt19937_64 rng(7);
  const Tensor x = f32({1.0f, -2.0f, 0.0f});
  const Tensor same = perturb(x, 0.0, rng);
  CHECK(same.data<float>()[0] == 1.0f);
  CHECK(same.data<float>()[1] == -2.0f);
  // Zero stays zero under relative noise; the input is not modified.
  const Tensor p = perturb(x, 0.5, rng);
  CHECK(p.data<float>()[2] == 0.0f);
  CHECK(x.data<float>()[0] == 1.0f);
  CHECK(p.data<float>()[0] != 1.0f);
  CHECK_FALSE(p.shares_storage_with(x));
  // Integers pass through unchanged.
  const Tensor i = Tensor::from_vector<std::int64_t>({3, 4}, {2});
  const Tensor pi = perturb(i, 0.5, rng);
  CHECK(pi.dtype() == DType::I64);
  CHECK(pi.data<std::int64_t>()[0] == 3);
  CHECK(pi.data<std::int64_t>()[1] == 4);
}

TEST_CASE("perturbed values have mean x and standard deviation sigma x", "[unit][cost]") {
  std::mt19937_64 rng(11);
  const int n = 20000;
  const Tensor x = Tensor::from_vector<double>(std::vector<double>(n, 4.0), {n});
  const Tensor p = perturb(x, 0.1, rng);
  REQUIRE(p.dtype() == DType::F64);
  double sum = 0, sq = 0;
  for (int i = 0; i < n; ++i) {
    sum += p.data<double>()[i];
    sq += p.data<double>()[i] * p.data<double>()[i];
  }
  const double mean = sum / n;
  const double sd = std::sqrt(sq / n - mean * mean);
  // Expected mean 4, sd 0.4; the standard error of the mean is 0.4 / sqrt(n) = 0.0028.
  CHECK(mean == Approx(4.0).margin(0.015));
  CHECK(sd == Approx(0.4).margin(0.015));
}

TEST_CASE("redrawn masks keep the mask's dtype, shape and keep probability", "[unit][cost]") {
  std::mt19937_64 rng(3);
  std::vector<float> values(1000, 0.0f);
  for (int i = 0; i < 250; ++i) values[static_cast<std::size_t>(i * 4)] = 1.0f;
  const Tensor mask = Tensor::from_vector<float>(values, {10, 100});
  const Tensor r = redraw_mask(mask, rng);
  CHECK(r.dtype() == DType::F32);
  CHECK(r.shape() == Shape{10, 100});
  int ones = 0;
  bool binary = true;
  for (int i = 0; i < 1000; ++i) {
    const float v = r.data<float>()[i];
    binary = binary && (v == 0.0f || v == 1.0f);
    ones += v == 1.0f;
  }
  CHECK(binary);
  // p = 0.25: expected 250 ones, standard deviation 13.7; 5 sigma either side.
  CHECK(ones >= 182);
  CHECK(ones <= 318);
  // Redrawn, not copied: the fixed pattern (every 4th element) does not survive.
  bool same_pattern = true;
  for (int i = 0; i < 1000; ++i) same_pattern = same_pattern && r.data<float>()[i] == values[static_cast<std::size_t>(i)];
  CHECK_FALSE(same_pattern);
}

TEST_CASE("masks of all ones or all zeros redraw to themselves", "[unit][cost]") {
  std::mt19937_64 rng(5);
  const Tensor all = Tensor::from_vector<bool>({true, true, true}, {3});
  const Tensor r = redraw_mask(all, rng);
  CHECK(r.dtype() == DType::Bool);
  CHECK((r.data<bool>()[0] && r.data<bool>()[1] && r.data<bool>()[2]));
  const Tensor none = Tensor::from_vector<std::int32_t>({0, 0}, {2});
  const Tensor z = redraw_mask(none, rng);
  CHECK(z.dtype() == DType::I32);
  CHECK(z.data<std::int32_t>()[0] == 0);
  CHECK(z.data<std::int32_t>()[1] == 0);
}

TEST_CASE("spread ratio is the candidate's summed spread over the reference's", "[unit][cost]") {
  SpreadAccumulator s;
  CHECK(s.ratio() == 1.0);
  s.add(f32({1, 2}), f64({1, 2}));
  CHECK(s.ratio() == 1.0);  // one copy: no spread yet
  s.add(f32({3, 2}), f64({2, 2}));
  // Candidate variances 2 and 0; reference 0.5 and 0: sqrt(2) / sqrt(0.5) = 2.
  CHECK(s.copies() == 2);
  CHECK(s.ratio() == Approx(2.0));
  // A copy with another element count is ignored and counted.
  s.add(f32({1, 2, 3}), f64({1, 2, 3}));
  CHECK(s.copies() == 2);
  CHECK(s.mismatches() == 1);
  CHECK(s.ratio() == Approx(2.0));
}

TEST_CASE("spread ratio over three copies uses the sample variance", "[unit][cost]") {
  SpreadAccumulator s;
  s.add(f32({1}), f64({2}));
  s.add(f32({2}), f64({4}));
  s.add(f32({3}), f64({6}));
  // Candidate variance 1, reference 4: ratio 1 / 2.
  CHECK(s.ratio() == Approx(0.5));
}

TEST_CASE("spread ratio is 1 with no spread and infinite when only the candidate spreads", "[unit][cost]") {
  SpreadAccumulator flat;
  flat.add(f32({1, 1}), f64({1, 1}));
  flat.add(f32({1, 1}), f64({1, 1}));
  CHECK(flat.ratio() == 1.0);
  SpreadAccumulator noisy;
  noisy.add(f32({1}), f64({1}));
  noisy.add(f32({2}), f64({1}));
  CHECK(noisy.ratio() == kInf);
}
