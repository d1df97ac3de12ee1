// Reference kernels of the elementwise ops exporters emit beyond the core
// set: Not, And, Or, Mod, and inference-mode Dropout (the unary ops are all
// in elementwise.cpp). Templated on the element
// type, so the fp64 reference mode runs them in double.
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "canary/error.h"
#include "kernels/reference.h"
#include "kernels/reference/broadcast_index.h"
#include "kernels/reference/element_dispatch.h"
#include "kernels/reference/simd_loops.h"

namespace canary::kernels {
namespace {

// y[i] = f(x[i]); reads x before writing y, so y may be x.
template <typename T, typename F>
void map_values(const Tensor& x, Tensor& y, F f) {
  const Tensor src = x;  // keeps x's buffer alive and shared, so reset() allocates when y is x
  y.reset(src.dtype(), src.shape());
  const T* px = src.data<T>();
  T* py = y.data<T>();
  detail::map_elements(px, py, src.numel(), f);
}

// y = f(a, b) with NumPy broadcasting; a and b share dtype T, y gets dtype R.
template <typename T, typename R, typename F>
void map_broadcast(const char* name, const Tensor& a_in, const Tensor& b_in, Tensor& y, F f) {
  const Tensor a = a_in, b = b_in;  // shared, so y's reset() never overwrites an operand
  if (a.dtype() != b.dtype()) {
    throw Error(ErrorKind::Input, std::string(name) + ": operands have different dtypes " + a.type_string() +
                                      " and " + b.type_string());
  }
  Shape out;
  try {
    out = broadcast_shapes(a.shape(), b.shape());
  } catch (const Error&) {
    throw Error(ErrorKind::Shape, std::string(name) + ": cannot broadcast " + shape_to_string(a.shape()) + " with " +
                                      shape_to_string(b.shape()));
  }
  const std::array<Shape, 2> strides{detail::broadcast_strides(a.shape(), out.size()),
                                     detail::broadcast_strides(b.shape(), out.size())};
  y.reset(dtype_of<R>::value, out);
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  detail::map_broadcast_rows(out, strides, pa, pb, y.data<R>(), f);
}

// Integer remainder; fmod keeps the dividend's sign, else the divisor's.
template <typename T>
T integer_mod(T a, T b, bool fmod) {
  if (b == 0) throw Error(ErrorKind::Input, "Mod: integer modulo by zero");
  if (b == -1) return T{0};  // INT_MIN % -1 overflows in C++
  T r = static_cast<T>(a % b);
  if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
  return r;
}

// Float remainder; fmod keeps the dividend's sign, else the divisor's.
template <typename T>
T float_mod(T a, T b, bool fmod) {
  T r = std::fmod(a, b);
  if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// Reads Dropout's training_mode: a one-element bool tensor.
bool training_mode_of(const Tensor* t) {
  if (!t || !t->defined()) return false;
  if (t->dtype() != DType::Bool || t->numel() != 1) {
    throw Error(ErrorKind::Input, "Dropout: training_mode must be a one-element bool tensor, got " + t->type_string());
  }
  return t->data<bool>()[0];
}

}  // namespace

void logical_not(const Tensor& x, Tensor& y) {
  if (x.dtype() != DType::Bool) detail::throw_unsupported_dtype("Not", x.dtype());
  map_values<bool>(x, y, [](bool v) { return !v; });
}

void float_test(bool nan, bool negative_inf, bool positive_inf, const Tensor& x_in, Tensor& y) {
  const Tensor x = x_in;  // shared, so y's reset() never overwrites it
  detail::dispatch_float(x.dtype(), nan ? "IsNaN" : "IsInf", [&](auto tag) {
    using T = decltype(tag);
    y.reset(DType::Bool, x.shape());
    const T* px = x.data<T>();
    bool* py = y.data<bool>();
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      const T v = px[i];
      py[i] = nan ? std::isnan(v) : std::isinf(v) && (v < 0 ? negative_inf : positive_inf);
    }
  });
}

void logical(LogicalOp op, const Tensor& a, const Tensor& b, Tensor& y) {
  const char* name = op == LogicalOp::And ? "And" : (op == LogicalOp::Or ? "Or" : "Xor");
  if (a.dtype() != DType::Bool) detail::throw_unsupported_dtype(name, a.dtype());
  if (op == LogicalOp::Xor) map_broadcast<bool, bool>(name, a, b, y, [](bool u, bool v) { return u != v; });
  else if (op == LogicalOp::And) map_broadcast<bool, bool>(name, a, b, y, [](bool u, bool v) { return u && v; });
  else map_broadcast<bool, bool>(name, a, b, y, [](bool u, bool v) { return u || v; });
}

void mod(bool fmod, const Tensor& a, const Tensor& b, Tensor& y) {
  detail::dispatch_numeric(a.dtype(), "Mod", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>)
      map_broadcast<T, T>("Mod", a, b, y, [fmod](T u, T v) { return float_mod(u, v, fmod); });
    else map_broadcast<T, T>("Mod", a, b, y, [fmod](T u, T v) { return integer_mod(u, v, fmod); });
  });
}

void dropout(const Tensor& x, const Tensor* training_mode, Tensor& y, Tensor* mask) {
  if (training_mode_of(training_mode)) {
    throw Error(ErrorKind::Input, "Dropout: training mode is not supported (training_mode is true); "
                                  "only inference is");
  }
  const Tensor src = x;
  if (mask != nullptr) {
    mask->reset(DType::Bool, src.shape());
    bool* pm = mask->data<bool>();
    for (std::int64_t i = 0; i < src.numel(); ++i) pm[i] = true;
  }
  identity(src, y);
}

}  // namespace canary::kernels
