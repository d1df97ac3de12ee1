// Interval and rounding-error rules of the generated ops (see value_bounds.h).
#include "tests/jit_differential/value_bounds.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <stdexcept>
#include <utility>

namespace canary::differential {
namespace {

// One input of an op with the bound of |d op / d input|.
struct Term {
  double derivative;
  const Bound* input;
};

// A result in [lo, hi] whose error is the inputs' errors scaled by their
// derivative bounds plus the op's own rounding `own` (units of u).
Bound apply(double lo, double hi, std::initializer_list<Term> terms, double own) {
  Bound r;
  r.lo = lo;
  r.hi = hi;
  r.g = own;
  for (const Term& t : terms) {
    r.g += t.derivative * t.input->g;
    r.s += t.derivative * t.input->s;
    r.depth = std::max(r.depth, t.input->depth);
  }
  r.depth += 1;
  return r;
}

// Own rounding of a transcendental: 4 ulp of the result plus a little absolute slack.
double transcendental_own(double result_abs) { return 8.0 * result_abs + 2.0; }

// Throws on a generator bug (an op applied outside its well-conditioned domain).
void require(bool ok, const char* what) {
  if (!ok) throw std::logic_error(std::string("value bounds: ") + what);
}

// The interval of the Gelu of [lo, hi] (sampled; Gelu has one minimum near -0.75).
std::pair<double, double> gelu_interval(double lo, double hi) {
  auto gelu = [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); };
  double mn = std::min(gelu(lo), gelu(hi));
  double mx = std::max(gelu(lo), gelu(hi));
  if (lo < -0.7517 && hi > -0.7517) mn = std::min(mn, gelu(-0.7517916));
  return {mn - 1e-3, mx + 1e-3};
}

// The interval of a monotone increasing f over [lo, hi].
template <typename F>
Bound monotone(const Bound& a, F f, double derivative, bool transcendental) {
  double lo = f(a.lo), hi = f(a.hi);
  double own = transcendental ? transcendental_own(std::max(std::abs(lo), std::abs(hi))) : 0.0;
  return apply(lo, hi, {{derivative, &a}}, own);
}

}  // namespace

// The largest magnitude in the interval.
double max_abs(const Bound& b) { return std::max(std::abs(b.lo), std::abs(b.hi)); }

// True when every implementation computes the value exactly.
bool is_exact(const Bound& b) { return b.g == 0.0 && b.s == 0.0; }

// A graph input or constant in [lo, hi].
Bound exact_bound(double lo, double hi) { return Bound{lo, hi, 0.0, 0.0, 0}; }

// The loop-carried state inside a body.
Bound carried_bound(double lo, double hi) { return Bound{lo, hi, 0.0, 1.0, 0}; }

// The union of two alternatives.
Bound join_bounds(const Bound& a, const Bound& b) {
  return Bound{std::min(a.lo, b.lo), std::max(a.hi, b.hi), std::max(a.g, b.g), std::max(a.s, b.s),
               std::max(a.depth, b.depth)};
}

// The bound of op(a) for a rule without parameters.
Bound unary_bound(UnaryRule rule, const Bound& a) {
  switch (rule) {
    case UnaryRule::Neg: return apply(-a.hi, -a.lo, {{1.0, &a}}, 0.0);
    case UnaryRule::Abs: {
      double lo = (a.lo <= 0.0 && a.hi >= 0.0) ? 0.0 : std::min(std::abs(a.lo), std::abs(a.hi));
      return apply(lo, max_abs(a), {{1.0, &a}}, 0.0);
    }
    case UnaryRule::Relu: return apply(std::max(a.lo, 0.0), std::max(a.hi, 0.0), {{1.0, &a}}, 0.0);
    case UnaryRule::Floor:
      require(is_exact(a), "Floor of an inexact value");
      return apply(std::floor(a.lo), std::floor(a.hi), {{0.0, &a}}, 0.0);
    case UnaryRule::Ceil:
      require(is_exact(a), "Ceil of an inexact value");
      return apply(std::ceil(a.lo), std::ceil(a.hi), {{0.0, &a}}, 0.0);
    case UnaryRule::Sign:
      require(is_exact(a), "Sign of an inexact value");
      return apply(a.lo < 0 ? -1.0 : (a.lo > 0 ? 1.0 : 0.0), a.hi > 0 ? 1.0 : (a.hi < 0 ? -1.0 : 0.0), {{0.0, &a}}, 0.0);
    case UnaryRule::Exp: return monotone(a, [](double x) { return std::exp(x); }, std::exp(a.hi), true);
    case UnaryRule::Log:
      require(a.lo > 0.0, "Log of a value not bounded away from 0");
      return monotone(a, [](double x) { return std::log(x); }, 1.0 / a.lo, true);
    case UnaryRule::Sqrt:
      require(a.lo > 0.0 || (a.lo >= 0.0 && is_exact(a)), "Sqrt of an inexact value near 0");
      return monotone(a, [](double x) { return std::sqrt(x); }, a.lo > 0.0 ? 0.5 / std::sqrt(a.lo) : 0.0, true);
    case UnaryRule::Tanh: return monotone(a, [](double x) { return std::tanh(x); }, 1.0, true);
    case UnaryRule::Sigmoid: return monotone(a, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, 0.25, true);
    case UnaryRule::Erf: return monotone(a, [](double x) { return std::erf(x); }, 1.13, true);
    case UnaryRule::Gelu: {
      auto [lo, hi] = gelu_interval(a.lo, a.hi);
      return apply(lo, hi, {{1.13, &a}}, transcendental_own(std::max(std::abs(lo), std::abs(hi))) + 8.0 * max_abs(a));
    }
    case UnaryRule::Softplus:
      return monotone(a, [](double x) { return std::log1p(std::exp(x)); }, 1.0, true);
    case UnaryRule::Reciprocal: {
      require(a.lo > 0.0, "Reciprocal of a value not bounded away from 0");
      return apply(1.0 / a.hi, 1.0 / a.lo, {{1.0 / (a.lo * a.lo), &a}}, 2.0 / a.lo);
    }
  }
  throw std::logic_error("value bounds: unknown unary rule");
}

// LeakyRelu with slope alpha.
Bound leaky_relu_bound(const Bound& a, double alpha) {
  double lo = a.lo < 0 ? alpha * a.lo : a.lo;
  double hi = a.hi < 0 ? alpha * a.hi : a.hi;
  return apply(lo, hi, {{1.0, &a}}, 2.0 * max_abs(a));
}

// HardSigmoid: max(0, min(1, alpha x + beta)).
Bound hard_sigmoid_bound(const Bound& a, double alpha, double beta) {
  auto f = [&](double x) { return std::clamp(alpha * x + beta, 0.0, 1.0); };
  return apply(f(a.lo), f(a.hi), {{alpha, &a}}, 2.0 * (alpha * max_abs(a) + std::abs(beta)));
}

// Clip to [lo, hi].
Bound clip_bound(const Bound& a, double lo, double hi) {
  return apply(std::clamp(a.lo, lo, hi), std::clamp(a.hi, lo, hi), {{1.0, &a}}, 0.0);
}

// a + b.
Bound add_bound(const Bound& a, const Bound& b) {
  double lo = a.lo + b.lo, hi = a.hi + b.hi;
  return apply(lo, hi, {{1.0, &a}, {1.0, &b}}, std::max(std::abs(lo), std::abs(hi)));
}

// a - b.
Bound sub_bound(const Bound& a, const Bound& b) {
  double lo = a.lo - b.hi, hi = a.hi - b.lo;
  return apply(lo, hi, {{1.0, &a}, {1.0, &b}}, std::max(std::abs(lo), std::abs(hi)));
}

// a * b.
Bound mul_bound(const Bound& a, const Bound& b) {
  double p[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  double lo = *std::min_element(p, p + 4), hi = *std::max_element(p, p + 4);
  return apply(lo, hi, {{max_abs(b), &a}, {max_abs(a), &b}}, std::max(std::abs(lo), std::abs(hi)));
}

// a / d for a divisor interval not containing 0.
Bound div_bound(const Bound& a, const Bound& d) {
  require(d.lo > 0.0 || d.hi < 0.0, "Div by a value not bounded away from 0");
  double dmin = std::min(std::abs(d.lo), std::abs(d.hi));
  double q[] = {a.lo / d.lo, a.lo / d.hi, a.hi / d.lo, a.hi / d.hi};
  double lo = *std::min_element(q, q + 4), hi = *std::max_element(q, q + 4);
  return apply(lo, hi, {{1.0 / dmin, &a}, {max_abs(a) / (dmin * dmin), &d}}, 2.0 * std::max(std::abs(lo), std::abs(hi)));
}

// max(a, b): 1-Lipschitz in the larger of the two errors.
Bound max_bound(const Bound& a, const Bound& b) {
  Bound r{std::max(a.lo, b.lo), std::max(a.hi, b.hi), std::max(a.g, b.g), std::max(a.s, b.s),
          std::max(a.depth, b.depth) + 1};
  return r;
}

// min(a, b).
Bound min_bound(const Bound& a, const Bound& b) {
  Bound r{std::min(a.lo, b.lo), std::min(a.hi, b.hi), std::max(a.g, b.g), std::max(a.s, b.s),
          std::max(a.depth, b.depth) + 1};
  return r;
}

// Sum over an axis of at most n elements: recursive summation error.
Bound reduce_sum_bound(const Bound& a, std::int64_t n) {
  double k = static_cast<double>(n);
  double lo = std::min(a.lo, k * a.lo), hi = std::max(a.hi, k * a.hi);
  return apply(lo, hi, {{k, &a}}, k * k * max_abs(a));
}

// Mean over an axis of at most n elements.
Bound reduce_mean_bound(const Bound& a, std::int64_t n) {
  return apply(a.lo, a.hi, {{1.0, &a}}, (static_cast<double>(n) + 2.0) * max_abs(a));
}

// Max over an axis: exact selection.
Bound reduce_max_bound(const Bound& a) { return apply(a.lo, a.hi, {{1.0, &a}}, 0.0); }

// Softmax: relative perturbations of the inputs change each output by at most twice their size.
Bound softmax_bound(const Bound& a, std::int64_t n) {
  double own = static_cast<double>(n) + 12.0 + 4.0 * max_abs(a);
  return apply(0.0, 1.0, {{2.0, &a}}, own);
}

// LayerNormalization, assuming the variance may be computed as E[x^2] - E[x]^2.
Bound layer_norm_bound(const Bound& a, std::int64_t n, double epsilon, double scale_abs, double bias_abs) {
  double k = static_cast<double>(n), amax = max_abs(a), sig = std::sqrt(epsilon);
  double span = scale_abs * std::sqrt(k) + bias_abs;
  double own = scale_abs * ((k + 2.0) * 2.0 * amax / sig + std::sqrt(k) * (k + 3.0) * amax * amax / epsilon) +
               2.0 * span + 4.0;
  return apply(-span, span, {{3.0 * scale_abs / sig, &a}}, own);
}

// a @ W with inner dim k and largest column sum of |W| col_abs.
Bound matmul_bound(const Bound& a, std::int64_t k, double col_abs) {
  double m = max_abs(a) * col_abs;
  return apply(-m, m, {{col_abs, &a}}, (static_cast<double>(k) + 1.0) * m);
}

// The largest error over 0..trips iterations of G -> body.g + body.s * G.
double loop_error(const Bound& initial, const Bound& body, std::int64_t trips) {
  double g = initial.g, worst = g;
  for (std::int64_t t = 0; t < trips; ++t) {
    g = body.g + body.s * g;
    worst = std::max(worst, g);
  }
  return worst;
}

}  // namespace canary::differential
