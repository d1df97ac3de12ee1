// The formula of every unary elementwise op (the rows of
// runtime/core/unary_ops.def, and Gelu's two forms), on one element of type
// T: float and double for every op, the integer types for the table's
// Numeric rows. The reference kernel (unary() in elementwise.cpp) maps these
// over a tensor; T = double is the fp64 reference mode.
//
// NaN stays NaN through every op except HardSigmoid (its fmax/fmin form,
// shared with the fused kernels, maps NaN to the clamp's bound: 1),
// ThresholdedRelu and Shrink (0, as ONNX defines them: "0 otherwise").
#pragma once

#include <cmath>
#include <type_traits>

#include "kernels/reference.h"
#include "kernels/scalar_math.h"

namespace canary::kernels {

// Logistic function without overflow for large |x|.
template <typename T>
T sigmoid(T x) {
  if (x >= 0) return T{1} / (T{1} + std::exp(-x));
  const T e = std::exp(x);
  return e / (T{1} + e);
}

// Softplus without overflow: log(1 + exp(x)).
template <typename T>
T softplus(T x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// -v with two's-complement wrap for integers (the most negative value stays).
template <typename T>
T wrapping_neg(T v) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(U{0} - static_cast<U>(v));
  } else {
    return -v;
  }
}

// op(v); alpha and beta are the op's attributes in the table's order.
template <UnaryOp op, typename T>
T unary_value(T v, [[maybe_unused]] T alpha, [[maybe_unused]] T beta) {
  using enum UnaryOp;
  constexpr T zero{0}, one{1};
  if constexpr (op == Neg) return wrapping_neg(v);
  else if constexpr (op == Abs) {
    if constexpr (std::is_integral_v<T>) return v < zero ? wrapping_neg(v) : v;
    else return std::abs(v);  // -0 gives +0
  }
  else if constexpr (op == Relu) return v < zero ? zero : v;
  else if constexpr (op == Sign) return v > zero ? one : (v < zero ? T(-1) : v);
  else if constexpr (op == Exp) return std::exp(v);
  else if constexpr (op == Log) return std::log(v);
  else if constexpr (op == Sqrt) return std::sqrt(v);
  else if constexpr (op == Reciprocal) return one / v;
  else if constexpr (op == Erf) return std::erf(v);
  else if constexpr (op == Floor) return std::floor(v);
  else if constexpr (op == Ceil) return std::ceil(v);
  // nearbyint rounds in the default mode: to nearest, ties to even.
  else if constexpr (op == Round) return std::nearbyint(v);
  else if constexpr (op == Tanh) return std::tanh(v);
  else if constexpr (op == Sigmoid) return sigmoid(v);
  else if constexpr (op == Softplus) return softplus(v);
  else if constexpr (op == Softsign) return v / (one + std::abs(v));
  else if constexpr (op == LeakyRelu) return v < zero ? alpha * v : v;
  else if constexpr (op == HardSigmoid) return std::fmax(zero, std::fmin(one, alpha * v + beta));
  // HardSwish (opset 14): x * HardSigmoid(x) with alpha 1/6 and beta 1/2, as
  // its ONNX function body and the fused kernels compute it.
  else if constexpr (op == HardSwish)
    return v * std::fmax(zero, std::fmin(one, static_cast<T>(1.0 / 6.0) * v + static_cast<T>(0.5)));
  // expm1 keeps the small negative values exp(v) - 1 would cancel.
  else if constexpr (op == Elu) return v < zero ? alpha * std::expm1(v) : v;
  else if constexpr (op == Celu) return v < zero ? alpha * std::expm1(v / alpha) : v;
  // Selu: beta is gamma.
  else if constexpr (op == Selu) return v > zero ? beta * v : beta * alpha * std::expm1(v);
  else if constexpr (op == ThresholdedRelu) return v > alpha ? v : zero;
  // Shrink: alpha is bias, beta is lambd.
  else if constexpr (op == Shrink) return v < -beta ? v + alpha : (v > beta ? v - alpha : zero);
  else if constexpr (op == Sin) return std::sin(v);
  else if constexpr (op == Cos) return std::cos(v);
  else if constexpr (op == Tan) return std::tan(v);
  else if constexpr (op == Asin) return std::asin(v);
  else if constexpr (op == Acos) return std::acos(v);
  else if constexpr (op == Atan) return std::atan(v);
  else if constexpr (op == Sinh) return std::sinh(v);
  else if constexpr (op == Cosh) return std::cosh(v);
  else if constexpr (op == Asinh) return std::asinh(v);
  else if constexpr (op == Acosh) return std::acosh(v);
  else if constexpr (op == Atanh) return std::atanh(v);
  else if constexpr (op == Gelu) return gelu_erf(v);
  else if constexpr (op == GeluTanh) return gelu_tanh(v);
  else static_assert(op != op, "unary_value: an op of unary_ops.def without a formula");
}

}  // namespace canary::kernels
