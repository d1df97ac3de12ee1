// GraphWriter elementwise emitters: unary ops on their well-conditioned
// domains (Log/Sqrt/Reciprocal of values bounded away from 0, Exp of values
// bounded above, Floor/Ceil of exactly computed values), binary ops with
// broadcasting, and the squashing that keeps magnitudes bounded.
#include <algorithm>
#include <cmath>

#include "tests/jit_differential/graph_writer.h"

namespace canary::differential {
namespace {

// Text of a float attribute (always with a '.' or an exponent).
std::string attr_float(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s += "0";
  return s;
}

}  // namespace

// A random unary op applied to a (magnitudes above 64 are squashed first).
Val GraphWriter::unary(Scope& scope, const Val& a_in) {
  Val a = max_abs(a_in.bound) > 64.0 ? squash(scope, a_in, 8.0) : a_in;
  int which = static_cast<int>(rng_.range(0, 16));
  if (which <= 2) {
    static const char* const kOps[] = {"Neg", "Abs", "Relu"};
    static const UnaryRule kRules[] = {UnaryRule::Neg, UnaryRule::Abs, UnaryRule::Relu};
    return emit(scope, kOps[which], {a.name}, "", a.dims, unary_bound(kRules[which], a.bound));
  }
  if (which <= 4) {
    std::optional<Val> exact = is_exact(a.bound) ? a : pick(scope, [&](const Val& v) { return is_exact(v.bound) && v.dims == a.dims; });
    if (!exact) return emit(scope, "Tanh", {a.name}, "", a.dims, unary_bound(UnaryRule::Tanh, a.bound));
    bool floor = which == 3;
    return emit(scope, floor ? "Floor" : "Ceil", {exact->name}, "", exact->dims,
                unary_bound(floor ? UnaryRule::Floor : UnaryRule::Ceil, exact->bound));
  }
  if (which <= 13) return transcendental(scope, a, which);
  return parameterised_unary(scope, a, which);
}

// Exp, Log, Sqrt, Tanh, Sigmoid, Erf, Gelu, Softplus or Reciprocal (which in 5..13).
Val GraphWriter::transcendental(Scope& scope, const Val& a, int which) {
  switch (which) {
    case 5: {
      Val x = a;
      if (x.bound.hi > 3.0) {
        if (rng_.chance(0.5)) {
          x = emit(scope, "Clip", {x.name, absent_clip_bound(scope, false), const_scalar(scope, 3.0f)}, "", x.dims,
                   clip_bound(x.bound, -INFINITY, 3.0));
        } else {
          x = squash(scope, x, 3.0);
        }
      }
      return emit(scope, "Exp", {x.name}, "", x.dims, unary_bound(UnaryRule::Exp, x.bound));
    }
    case 6: {
      Val p = positive(scope, a, rng_.chance(0.5) ? 1.0 : 0.5);
      return emit(scope, "Log", {p.name}, "", p.dims, unary_bound(UnaryRule::Log, p.bound));
    }
    case 7: {
      Val p = is_exact(a.bound) && rng_.chance(0.5)
                  ? emit(scope, "Abs", {a.name}, "", a.dims, unary_bound(UnaryRule::Abs, a.bound))
                  : positive(scope, a, rng_.chance(0.5) ? 1.0 : 0.25);
      return emit(scope, "Sqrt", {p.name}, "", p.dims, unary_bound(UnaryRule::Sqrt, p.bound));
    }
    case 13: {
      Val p = positive(scope, a, rng_.chance(0.5) ? 1.0 : 0.5);
      return emit(scope, "Reciprocal", {p.name}, "", p.dims, unary_bound(UnaryRule::Reciprocal, p.bound));
    }
    default: break;
  }
  static const char* const kOps[] = {"Tanh", "Sigmoid", "Erf", "Gelu", "Softplus"};
  static const UnaryRule kRules[] = {UnaryRule::Tanh, UnaryRule::Sigmoid, UnaryRule::Erf, UnaryRule::Gelu,
                                     UnaryRule::Softplus};
  int k = which - 8;
  std::string attrs = (k == 3 && rng_.chance(0.4)) ? "approximate = \"tanh\"" : "";
  return emit(scope, kOps[k], {a.name}, attrs, a.dims, unary_bound(kRules[k], a.bound));
}

// Clip (both bounds or one), LeakyRelu or HardSigmoid with random parameters (which in 14..16).
Val GraphWriter::parameterised_unary(Scope& scope, const Val& a, int which) {
  if (which == 14) {
    float lo = std::min(random_constant(-1.5, -0.05), -0.0625f);
    float hi = std::max(random_constant(0.05, 1.5), 0.0625f);
    int mode = static_cast<int>(rng_.range(0, 2));
    std::vector<std::string> args{a.name, mode == 2 ? absent_clip_bound(scope, false) : const_scalar(scope, lo)};
    if (mode != 1) args.push_back(const_scalar(scope, hi));
    else if (clip_bounds_ == ClipBounds::Unsaturated) args.push_back(absent_clip_bound(scope, true));
    return emit(scope, "Clip", args, "", a.dims,
                clip_bound(a.bound, mode == 2 ? -INFINITY : lo, mode == 1 ? INFINITY : hi));
  }
  if (which == 15) {
    static const double kAlphas[] = {0.01, 0.25, 0.125, 0.5};
    std::size_t k = rng_.index(4);
    std::string attrs = k == 0 ? "" : "alpha = " + attr_float(kAlphas[k]);
    return emit(scope, "LeakyRelu", {a.name}, attrs, a.dims, leaky_relu_bound(a.bound, kAlphas[k]));
  }
  static const double kAlpha[] = {0.2, 0.25, 0.5};
  static const double kBeta[] = {0.5, 0.5, 0.25};
  std::size_t k = rng_.index(3);
  std::string attrs = k == 0 ? "" : "alpha = " + attr_float(kAlpha[k]) + ", beta = " + attr_float(kBeta[k]);
  return emit(scope, "HardSigmoid", {a.name}, attrs, a.dims, hard_sigmoid_bound(a.bound, kAlpha[k], kBeta[k]));
}

// Add(Abs(a), offset): a value bounded below by offset > 0.
Val GraphWriter::positive(Scope& scope, const Val& a, double offset) {
  Val x = max_abs(a.bound) > 64.0 ? squash(scope, a, 8.0) : a;
  Val abs = emit(scope, "Abs", {x.name}, "", x.dims, unary_bound(UnaryRule::Abs, x.bound));
  std::string k = const_scalar(scope, static_cast<float>(offset));
  Bound kb = exact_bound(offset, offset);
  std::vector<std::string> args = rng_.chance(0.5) ? std::vector<std::string>{abs.name, k} : std::vector<std::string>{k, abs.name};
  return emit(scope, "Add", args, "", abs.dims, add_bound(abs.bound, kb));
}

// A version of a with magnitude at most limit: Tanh, a symmetric Clip or an exact power-of-two scaling.
Val GraphWriter::squash(Scope& scope, const Val& a, double limit) {
  double amax = max_abs(a.bound);
  int how = static_cast<int>(rng_.range(0, 2));
  if (how == 0 && limit >= 1.0) return emit(scope, "Tanh", {a.name}, "", a.dims, unary_bound(UnaryRule::Tanh, a.bound));
  if (how == 1 || amax <= limit) {
    auto l = static_cast<float>(limit);
    return emit(scope, "Clip", {a.name, const_scalar(scope, -l), const_scalar(scope, l)}, "", a.dims,
                clip_bound(a.bound, -limit, limit));
  }
  double scale = std::exp2(-std::ceil(std::log2(amax / limit)));
  std::string k = const_scalar(scope, static_cast<float>(scale));
  return emit(scope, "Mul", {a.name, k}, "", a.dims, mul_bound(a.bound, exact_bound(scale, scale)));
}

// A random binary op of a and b (broadcast-compatible), keeping magnitudes bounded.
Val GraphWriter::binary(Scope& scope, const Val& a_in, const Val& b_in) {
  int op = static_cast<int>(rng_.range(0, 9));
  if (op == 9) return divide(scope, a_in, b_in);
  Val a = a_in, b = b_in;
  if (op >= 4 && op <= 5) {  // Mul
    while (max_abs(a.bound) * max_abs(b.bound) > 256.0) {
      if (max_abs(a.bound) >= max_abs(b.bound)) a = squash(scope, a, 4.0);
      else b = squash(scope, b, 4.0);
    }
  } else {
    if (max_abs(a.bound) > 256.0) a = squash(scope, a, 16.0);
    if (max_abs(b.bound) > 256.0) b = squash(scope, b, 16.0);
  }
  if (rng_.chance(0.5)) std::swap(a, b);
  Dims dims = *broadcast(a.dims, b.dims);
  if (a.dims != b.dims) graph_.features.broadcast = true;
  std::vector<std::string> args{a.name, b.name};
  switch (op) {
    case 0: case 1: return emit(scope, "Add", args, "", dims, add_bound(a.bound, b.bound));
    case 2: case 3: return emit(scope, "Sub", args, "", dims, sub_bound(a.bound, b.bound));
    case 4: case 5: return emit(scope, "Mul", args, "", dims, mul_bound(a.bound, b.bound));
    case 6: case 7: return emit(scope, "Max", args, "", dims, max_bound(a.bound, b.bound));
    default: return emit(scope, "Min", args, "", dims, min_bound(a.bound, b.bound));
  }
}

// a / d where d is a constant away from 0 or Add(Abs(b), offset).
Val GraphWriter::divide(Scope& scope, const Val& a, const Val& b) {
  Val d = b;
  if (rng_.chance(0.4)) {
    float c = random_constant(0.5, 4.0);
    if (rng_.chance(0.5)) c = -c;
    d = Val{const_scalar(scope, c), {}, exact_bound(c, c), false};
  } else {
    d = positive(scope, b, rng_.chance(0.5) ? 1.0 : 0.5);
  }
  Dims dims = *broadcast(a.dims, d.dims);
  if (a.dims != d.dims) graph_.features.broadcast = true;
  return emit(scope, "Div", {a.name, d.name}, "", dims, div_bound(a.bound, d.bound));
}

// A visible value that broadcasts with a (to exactly a's dims when keep_dims).
std::optional<Val> GraphWriter::partner(Scope& scope, const Val& a, bool keep_dims) {
  return pick(scope, [&](const Val& v) {
    std::optional<Dims> d = broadcast(a.dims, v.dims);
    return d && (!keep_dims || *d == a.dims) && (v.name != a.name || rng_.chance(0.1));
  });
}

// A constant operand for a: a scalar, a [1] tensor or a vector along a's constant last dim.
Val GraphWriter::constant_like(Scope& scope, const Val& a, bool keep_dims) {
  std::vector<std::int64_t> shape;
  int kind = static_cast<int>(rng_.range(0, 3));
  if (kind == 1) shape = {1};
  std::string last = a.dims.empty() ? "" : a.dims.back();
  if (kind >= 2 && !last.empty() && dim_min(last) == dim_max(last)) shape = {dim_min(last)};
  if (keep_dims && shape.size() > a.dims.size()) shape.clear();
  std::int64_t n = shape.empty() ? 1 : shape[0];
  std::vector<float> values;
  double lo = 1e9, hi = -1e9;
  for (std::int64_t i = 0; i < n; ++i) {
    values.push_back(random_constant(-2.0, 2.0));
    lo = std::min(lo, static_cast<double>(values.back()));
    hi = std::max(hi, static_cast<double>(values.back()));
  }
  Dims dims;
  for (std::int64_t d : shape) dims.push_back(std::to_string(d));
  return Val{const_f32(scope, shape, values), dims, exact_bound(lo, hi), false};
}

}  // namespace canary::differential
