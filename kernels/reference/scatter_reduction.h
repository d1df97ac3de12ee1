// The `reduction` of ScatterND and ScatterElements as a function of the
// element an update lands on and the update, chosen once per call so that
// the scatter loops do not branch on it per element.
#pragma once

#include <cmath>
#include <type_traits>

#include "kernels/reference.h"

namespace canary::kernels::detail {

// Where max and min of ONNX's two reference implementations differ: NumPy's
// maximum and minimum (ScatterND) keep a NaN from either side; Python's max
// and min (ScatterElements) keep the current element unless the update
// compares strictly larger (smaller), which a NaN never does.
enum class NanRule { Propagate, KeepCurrent };

// a + b and a * b, wrapping for integers as NumPy does (signed overflow is
// undefined in C++, unsigned wraps); or and and for bool.
template <typename T>
T combine_add(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) return a || b;
  else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else return a + b;
}

template <typename T>
T combine_mul(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) return a && b;
  else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else return a * b;
}

// The larger (larger = true) or smaller of the current element a and the
// update b under `rule`.
template <typename T>
T combine_extreme(T a, T b, bool larger, NanRule rule) {
  if constexpr (std::is_floating_point_v<T>) {
    if (rule == NanRule::Propagate && std::isnan(a)) return a;
    if (rule == NanRule::Propagate && std::isnan(b)) return b;
  }
  return (larger ? b > a : b < a) ? b : a;
}

// f(combine) with combine(current, update) the new element value.
template <typename T, typename F>
void with_reduction(ScatterReduction reduction, NanRule rule, F&& f) {
  switch (reduction) {
    case ScatterReduction::None: f([](T, T b) { return b; }); return;
    case ScatterReduction::Add: f([](T a, T b) { return combine_add(a, b); }); return;
    case ScatterReduction::Mul: f([](T a, T b) { return combine_mul(a, b); }); return;
    case ScatterReduction::Max: f([rule](T a, T b) { return combine_extreme(a, b, true, rule); }); return;
    case ScatterReduction::Min: f([rule](T a, T b) { return combine_extreme(a, b, false, rule); }); return;
  }
}

}  // namespace canary::kernels::detail
