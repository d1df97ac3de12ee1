// Scalar forms of the activations whose textbook formula cancels, shared by
// the reference kernels and the fused kernels' scalar evaluator, so both
// tiers compute them the same way.
//
// GELU's formulas multiply x by 1 + erf(...) or 1 + tanh(...), which for
// x below about -5.5 (erf form) or -5.3 (tanh form) rounds to 0 in f32 while
// the true value is still a normal number (-1e-7 at x = -5.5): every such
// output came back as 0, a relative error of 1 against the fp64 reference.
// The forms below have no cancellation: 1 + erf(-t) = erfc(t), and
// 1 + tanh(u) = 2 / (1 + exp(-2u)), which gives 0 only where the true value
// underflows. Both keep NaN, and give the old formulas' values at +-inf.
#pragma once

#include <cmath>
#include <numbers>

namespace canary::kernels {

// Exact GELU: 0.5 x (1 + erf(x / sqrt 2)) = 0.5 x erfc(-x / sqrt 2).
template <typename T>
T gelu_erf(T x) {
  return T{0.5} * x * std::erfc(-x * static_cast<T>(1.0 / std::numbers::sqrt2));
}

// Tanh-approximated GELU: 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3),
// as x / (1 + exp(-2u)).
template <typename T>
T gelu_tanh(T x) {
  const T k = static_cast<T>(std::sqrt(2.0 / std::numbers::pi));
  const T u = k * (x + static_cast<T>(0.044715) * x * x * x);
  return x / (T{1} + std::exp(T{-2} * u));
}

}  // namespace canary::kernels
