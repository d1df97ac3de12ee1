// Static bounds of generated values: an interval for the exact value and a
// first-order bound on the f32 rounding error, used to size tolerances.
//
// Every generated value carries, for inputs drawn from [-2, 2]:
//   lo, hi  an interval holding the exact (infinitely precise) value;
//   g       a bound on |f32 result - exact| in units of u = 2^-24;
//   s       inside a Loop body: the coefficient of the loop-carried state's
//           error in that bound (the error of the value is g + s * G_state);
//   depth   the number of ops on the longest path from a graph input.
// The rules are worst-case (interval arithmetic with derivative bounds), so a
// correct f32 implementation, interpreted or compiled, stays within g * u of
// the fp64 reference, and two correct implementations within 2 g u of each
// other. Ops add their own rounding in units of their result's magnitude: 1
// for correctly rounded arithmetic, 8 for transcendentals (4 ulp <= 8 u |x|).
#pragma once

#include <cstdint>

namespace canary::differential {

// Unit roundoff of f32.
inline constexpr double kUnitRoundoff = 1.0 / 16777216.0;

struct Bound {
  double lo = 0.0;
  double hi = 0.0;
  double g = 0.0;
  double s = 0.0;
  int depth = 0;
};

// The largest magnitude in the interval.
double max_abs(const Bound& b);
// True when every implementation computes the value exactly (no rounding yet).
bool is_exact(const Bound& b);
// A graph input or constant in [lo, hi] (exact).
Bound exact_bound(double lo, double hi);
// The loop-carried state inside a body: interval [lo, hi], error 1 * G_state.
Bound carried_bound(double lo, double hi);
// The union of two alternatives (If branches): hull of the intervals, the larger errors.
Bound join_bounds(const Bound& a, const Bound& b);

// Unary elementwise ops whose bound rule is known.
enum class UnaryRule : std::uint8_t {
  Neg, Abs, Relu, Floor, Ceil, Sign,
  Exp, Log, Sqrt, Tanh, Sigmoid, Erf, Gelu, Softplus, Reciprocal,
};

// The bound of op(a) for a rule without parameters. Log, Sqrt and Reciprocal
// need a.lo > 0 (Sqrt also accepts an exact a with a.lo >= 0); Floor, Ceil and
// Sign need an exact a.
Bound unary_bound(UnaryRule rule, const Bound& a);
// LeakyRelu with slope alpha (0 < alpha <= 1).
Bound leaky_relu_bound(const Bound& a, double alpha);
// HardSigmoid: max(0, min(1, alpha x + beta)).
Bound hard_sigmoid_bound(const Bound& a, double alpha, double beta);
// Clip to [lo, hi] (either side may be infinite when absent).
Bound clip_bound(const Bound& a, double lo, double hi);

// Elementwise binary ops.
Bound add_bound(const Bound& a, const Bound& b);
Bound sub_bound(const Bound& a, const Bound& b);
Bound mul_bound(const Bound& a, const Bound& b);
// a / d for a divisor interval not containing 0.
Bound div_bound(const Bound& a, const Bound& d);
Bound max_bound(const Bound& a, const Bound& b);
Bound min_bound(const Bound& a, const Bound& b);

// Reductions over an axis of at most n elements (n >= 1).
Bound reduce_sum_bound(const Bound& a, std::int64_t n);
Bound reduce_mean_bound(const Bound& a, std::int64_t n);
Bound reduce_max_bound(const Bound& a);
// Softmax over an axis of at most n elements.
Bound softmax_bound(const Bound& a, std::int64_t n);
// LayerNormalization over the last axis (at most n elements) with epsilon,
// scale entries within [-scale_abs, scale_abs] and bias within [-bias_abs, bias_abs].
Bound layer_norm_bound(const Bound& a, std::int64_t n, double epsilon, double scale_abs, double bias_abs);
// a @ W where the inner dim is k and the largest column sum of |W| is col_abs.
Bound matmul_bound(const Bound& a, std::int64_t k, double col_abs);
// The error after up to `trips` iterations of a loop whose body maps the
// carried state's error G to body.g + body.s * G, starting from initial.g.
double loop_error(const Bound& initial, const Bound& body, std::int64_t trips);

}  // namespace canary::differential
