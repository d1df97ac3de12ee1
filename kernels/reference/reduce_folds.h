// How each reduction of the ReduceX family folds one element into its
// output slot, and what a slot holds before any element (the result of an
// empty reduction, as ONNX defines it: 0 for sums, 1 for products, -Inf/+Inf
// for Max/Min, or the type's lowest/highest value where there is no infinity).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/reference.h"

namespace canary::kernels::detail {

// The per-element step of a reduction. Mean and LogSum add and finish later;
// LogSumExp adds exp(x - max) in a second pass, after a Max pass.
enum class Fold { Add, AddAbs, AddSquare, Multiply, Max, Min };

inline Fold fold_of(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
    case ReduceOp::LogSum:
    case ReduceOp::LogSumExp: return Fold::Add;
    case ReduceOp::L1: return Fold::AddAbs;
    case ReduceOp::L2:
    case ReduceOp::SumSquare: return Fold::AddSquare;
    case ReduceOp::Prod: return Fold::Multiply;
    case ReduceOp::Max: return Fold::Max;
    case ReduceOp::Min: return Fold::Min;
  }
  return Fold::Add;
}

// The slot's value before any element, for elements of type T (an integer
// type's own extremes, not its accumulator's, so that they survive the store).
template <typename T, typename Acc>
Acc fold_init(Fold f) {
  using Limits = std::numeric_limits<T>;
  switch (f) {
    case Fold::Multiply: return Acc{1};
    case Fold::Max: return Limits::has_infinity ? -static_cast<Acc>(Limits::infinity()) : Limits::lowest();
    case Fold::Min: return Limits::has_infinity ? static_cast<Acc>(Limits::infinity()) : Limits::max();
    default: return Acc{0};
  }
}

// Integer accumulators wrap on overflow (two's complement, like NumPy's
// int64 arithmetic) instead of overflowing a signed type.
inline std::int64_t wrap_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
inline std::int64_t wrap_mul(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}

// slot' = fold(x, slot). Max and Min let a NaN through and keep it.
template <Fold F, typename T, typename Acc>
inline Acc fold_step(T x, Acc s) {
  const Acc v = static_cast<Acc>(x);
  if constexpr (F == Fold::Max) {
    return v > s || v != v ? v : s;
  } else if constexpr (F == Fold::Min) {
    return v < s || v != v ? v : s;
  } else if constexpr (std::is_floating_point_v<Acc>) {
    if constexpr (F == Fold::Add) return s + v;
    else if constexpr (F == Fold::AddAbs) return s + std::abs(v);
    else if constexpr (F == Fold::AddSquare) return s + v * v;
    else return s * v;
  } else {
    if constexpr (F == Fold::Add) return wrap_add(s, v);
    else if constexpr (F == Fold::AddAbs) return wrap_add(s, v < 0 ? wrap_mul(v, -1) : v);
    else if constexpr (F == Fold::AddSquare) return wrap_add(s, wrap_mul(v, v));
    else return wrap_mul(s, v);
  }
}

}  // namespace canary::kernels::detail
