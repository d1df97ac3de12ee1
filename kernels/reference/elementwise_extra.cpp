// Reference kernels of the elementwise ops exporters emit beyond the core
// set: Sign, Reciprocal, Floor, Ceil, Round, Softplus, LeakyRelu, HardSigmoid,
// Not, And, Or, Mod, and inference-mode Dropout. Templated on the element
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

// ONNX name of a math op, for error messages.
const char* math_name(MathOp op) {
  switch (op) {
    case MathOp::Sign: return "Sign";
    case MathOp::Reciprocal: return "Reciprocal";
    case MathOp::Floor: return "Floor";
    case MathOp::Ceil: return "Ceil";
    case MathOp::Round: return "Round";
    case MathOp::Softplus: return "Softplus";
  }
  return "?";
}

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

// Softplus without overflow: log(1 + exp(x)).
template <typename T>
T softplus(T x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// Sign: -1, 0 or 1; NaN stays NaN.
template <typename T>
T sign(T v) {
  if (v > T{0}) return T{1};
  if (v < T{0}) return T(-1);
  return v;
}

// The float math ops.
template <typename T>
void math_float(MathOp op, const Tensor& x, Tensor& y) {
  switch (op) {
    case MathOp::Reciprocal: return map_values<T>(x, y, [](T v) { return T{1} / v; });
    case MathOp::Floor: return map_values<T>(x, y, [](T v) { return std::floor(v); });
    case MathOp::Ceil: return map_values<T>(x, y, [](T v) { return std::ceil(v); });
    // nearbyint rounds in the default mode, to nearest with ties to even.
    case MathOp::Round: return map_values<T>(x, y, [](T v) { return std::nearbyint(v); });
    case MathOp::Softplus: return map_values<T>(x, y, [](T v) { return softplus(v); });
    case MathOp::Sign: return map_values<T>(x, y, [](T v) { return sign(v); });
  }
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

void math_unary(MathOp op, const Tensor& x, Tensor& y) {
  const char* name = math_name(op);
  detail::dispatch_numeric(x.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) math_float<T>(op, x, y);
    else if (op == MathOp::Sign) map_values<T>(x, y, [](T v) { return sign(v); });
    else detail::throw_unsupported_dtype(name, x.dtype());
  });
}

void leaky_relu(double alpha, const Tensor& x, Tensor& y) {
  detail::dispatch_float(x.dtype(), "LeakyRelu", [&](auto tag) {
    using T = decltype(tag);
    const T a = static_cast<T>(alpha);
    map_values<T>(x, y, [a](T v) { return v < 0 ? a * v : v; });
  });
}

void hard_sigmoid(double alpha, double beta, const Tensor& x, Tensor& y) {
  detail::dispatch_float(x.dtype(), "HardSigmoid", [&](auto tag) {
    using T = decltype(tag);
    const T a = static_cast<T>(alpha), b = static_cast<T>(beta);
    map_values<T>(x, y, [a, b](T v) { return std::fmax(T{0}, std::fmin(T{1}, a * v + b)); });
  });
}

void logical_not(const Tensor& x, Tensor& y) {
  if (x.dtype() != DType::Bool) detail::throw_unsupported_dtype("Not", x.dtype());
  map_values<bool>(x, y, [](bool v) { return !v; });
}

void logical(LogicalOp op, const Tensor& a, const Tensor& b, Tensor& y) {
  const char* name = op == LogicalOp::And ? "And" : "Or";
  if (a.dtype() != DType::Bool) detail::throw_unsupported_dtype(name, a.dtype());
  if (op == LogicalOp::And) map_broadcast<bool, bool>(name, a, b, y, [](bool u, bool v) { return u && v; });
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
