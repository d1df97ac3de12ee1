// Reference elementwise kernels: unary, binary (NumPy broadcasting), where, clip,
// and the shared broadcast_shapes helper. Values are computed in the element
// type itself, so f64 tensors (the fp64 reference mode) run in double.
#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <string>
#include <type_traits>

#include "canary/error.h"
#include "kernels/reference.h"
#include "kernels/reference/broadcast_index.h"
#include "kernels/reference/element_dispatch.h"
#include "kernels/scalar_math.h"
#include "kernels/reference/simd_loops.h"
#include "kernels/reference/unary_formulas.h"

namespace canary::kernels {
namespace {

using detail::broadcast_strides;
using detail::for_each_strided;

// ONNX name of a binary op, for error messages.
const char* binary_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "Add";
    case BinaryOp::Sub: return "Sub";
    case BinaryOp::Mul: return "Mul";
    case BinaryOp::Div: return "Div";
    case BinaryOp::Pow: return "Pow";
    case BinaryOp::Max: return "Max";
    case BinaryOp::Min: return "Min";
    case BinaryOp::Equal: return "Equal";
    case BinaryOp::Less: return "Less";
    case BinaryOp::Greater: return "Greater";
    case BinaryOp::PRelu: return "PRelu";
  }
  return "?";
}

// NumPy broadcast of two shapes; the Shape error names `what` and both shapes.
Shape broadcast_two(const char* what, std::span<const std::int64_t> a, std::span<const std::int64_t> b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw Error(ErrorKind::Shape,
                  std::string(what) + ": cannot broadcast " + shape_to_string(a) + " with " + shape_to_string(b));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Integer ops wrap on overflow (two's complement) instead of invoking UB.
template <typename T>
T wrapping(T a, T b, BinaryOp op) {
  using U = std::make_unsigned_t<T>;
  const U ua = static_cast<U>(a), ub = static_cast<U>(b);
  switch (op) {
    case BinaryOp::Add: return static_cast<T>(ua + ub);
    case BinaryOp::Sub: return static_cast<T>(ua - ub);
    default: return static_cast<T>(ua * ub);
  }
}

// Integer division truncating toward zero; division by zero is the caller's error.
template <typename T>
T integer_div(T a, T b) {
  if (b == 0) throw Error(ErrorKind::Input, "Div: integer division by zero");
  if (b == -1) return wrapping<T>(T{0}, a, BinaryOp::Sub);  // INT_MIN / -1 wraps
  return a / b;
}

// Max/Min propagate NaN (as NumPy's maximum/minimum do).
template <typename T>
T max_of(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  return a < b ? b : a;
}
template <typename T>
T min_of(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  return b < a ? b : a;
}

// y[i] = f(x[i]) with y shaped like x.
template <typename T, typename F>
void map_unary(const Tensor& x, Tensor& y, F f) {
  const T* px = x.data<T>();
  y.reset(x.dtype(), x.shape());
  T* py = y.data<T>();
  detail::map_elements(px, py, x.numel(), f);
}

// Domains of unary_ops.def rows, named as the table names them.
namespace unary_domain {
enum Domain { Numeric, Float };
}

// y = op(x) for one op of the table; integer dtypes only for Numeric rows.
template <UnaryOp op, bool numeric>
void run_unary(const Tensor& x_in, Tensor& y, const UnaryParams& p) {
  const char* name = unary_op_name(op);
  const Tensor x = x_in;  // shares x's buffer, so y's reset() allocates when y is x
  detail::dispatch_numeric(x.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!numeric && !std::is_floating_point_v<T>) {
      detail::throw_unsupported_dtype(name, x.dtype());
    } else {
      const T alpha = static_cast<T>(p.alpha), beta = static_cast<T>(p.beta);
      map_unary<T>(x, y, [alpha, beta](T v) { return unary_value<op>(v, alpha, beta); });
    }
  });
}

// y = f(a, b) with broadcasting; fast paths for equal shapes and a scalar side.
// y must not be a or b (binary() copies through a temporary in that case).
template <typename T, typename R, typename F>
void map_binary(const char* name, const Tensor& a, const Tensor& b, Tensor& y, F f) {
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  const bool same = a.shape() == b.shape();
  const bool a_scalar = !same && a.numel() == 1 && a.rank() <= b.rank();
  const bool b_scalar = !same && !a_scalar && b.numel() == 1 && b.rank() <= a.rank();
  if (same || a_scalar || b_scalar) {
    const Tensor& big = a_scalar ? b : a;
    y.reset(dtype_of<R>::value, big.shape());
    R* py = y.data<R>();
    detail::map_element_pairs(pa, a_scalar ? 0 : 1, pb, b_scalar ? 0 : 1, py, big.numel(), f);
    return;
  }
  const Shape out = broadcast_two(name, a.shape(), b.shape());
  const std::array<Shape, 2> strides{broadcast_strides(a.shape(), out.size()), broadcast_strides(b.shape(), out.size())};
  y.reset(dtype_of<R>::value, out);
  detail::map_broadcast_rows(out, strides, pa, pb, y.data<R>(), f);
}

// Arithmetic binary ops (same dtype in and out).
template <typename T>
void binary_arith(BinaryOp op, const char* name, const Tensor& a, const Tensor& b, Tensor& y) {
  constexpr bool integral = std::is_integral_v<T>;
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
      if constexpr (integral) return map_binary<T, T>(name, a, b, y, [op](T u, T v) { return wrapping<T>(u, v, op); });
      else if (op == BinaryOp::Add) return map_binary<T, T>(name, a, b, y, [](T u, T v) { return u + v; });
      else if (op == BinaryOp::Sub) return map_binary<T, T>(name, a, b, y, [](T u, T v) { return u - v; });
      else return map_binary<T, T>(name, a, b, y, [](T u, T v) { return u * v; });
    case BinaryOp::Div:
      if constexpr (integral) return map_binary<T, T>(name, a, b, y, [](T u, T v) { return integer_div<T>(u, v); });
      else return map_binary<T, T>(name, a, b, y, [](T u, T v) { return u / v; });
    case BinaryOp::Pow:
      if constexpr (integral) detail::throw_unsupported_dtype(name, a.dtype());
      else return map_binary<T, T>(name, a, b, y, [](T u, T v) { return std::pow(u, v); });
    case BinaryOp::Max: return map_binary<T, T>(name, a, b, y, [](T u, T v) { return max_of(u, v); });
    case BinaryOp::Min: return map_binary<T, T>(name, a, b, y, [](T u, T v) { return min_of(u, v); });
    case BinaryOp::PRelu:
      if constexpr (integral) return map_binary<T, T>(name, a, b, y, [](T u, T v) { return u < 0 ? wrapping<T>(u, v, BinaryOp::Mul) : u; });
      else return map_binary<T, T>(name, a, b, y, [](T u, T v) { return u < 0 ? u * v : u; });
    case BinaryOp::Equal: return map_binary<T, bool>(name, a, b, y, [](T u, T v) { return u == v; });
    case BinaryOp::Less: return map_binary<T, bool>(name, a, b, y, [](T u, T v) { return u < v; });
    case BinaryOp::Greater: return map_binary<T, bool>(name, a, b, y, [](T u, T v) { return u > v; });
  }
}

// Reads a Clip bound: a one-element tensor of x's dtype.
template <typename T>
T clip_bound(const Tensor* t, const char* what, T unbounded, DType x_dtype) {
  if (!t || !t->defined()) return unbounded;
  if (t->dtype() != x_dtype || t->numel() != 1)
    throw Error(ErrorKind::Input, std::string("Clip: ") + what + " must be a one-element " +
                                      std::string(dtype_name(x_dtype)) + " tensor, got " + t->type_string());
  return t->data<T>()[0];
}

}  // namespace

Shape broadcast_shapes(std::span<const std::int64_t> a, std::span<const std::int64_t> b) {
  return broadcast_two("broadcast", a, b);
}

const char* unary_op_name(UnaryOp op) {
  switch (op) {
#define CANARY_UNARY_OP(o, ...) \
  case UnaryOp::o: return #o;
#include "runtime/core/unary_ops.def"
#undef CANARY_UNARY_OP
    case UnaryOp::Gelu: return "Gelu";
    case UnaryOp::GeluTanh: return "Gelu(tanh)";
  }
  return "?";
}

void unary(UnaryOp op, const Tensor& x, Tensor& y, const UnaryParams& p) {
  switch (op) {
#define CANARY_UNARY_OP(o, domain, ...) \
  case UnaryOp::o: return run_unary<UnaryOp::o, unary_domain::domain == unary_domain::Numeric>(x, y, p);
#include "runtime/core/unary_ops.def"
#undef CANARY_UNARY_OP
    case UnaryOp::Gelu: return run_unary<UnaryOp::Gelu, false>(x, y, p);
    case UnaryOp::GeluTanh: return run_unary<UnaryOp::GeluTanh, false>(x, y, p);
  }
}

void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& y) {
  const char* name = binary_name(op);
  if (&y == &a || &y == &b) {
    Tensor out;
    binary(op, a, b, out);
    y = std::move(out);
    return;
  }
  if (a.dtype() != b.dtype())
    throw Error(ErrorKind::Input, std::string(name) + ": operands have different dtypes " + a.type_string() + " and " +
                                      b.type_string());
  if (a.dtype() == DType::Bool) {
    if (op != BinaryOp::Equal) detail::throw_unsupported_dtype(name, a.dtype());
    return map_binary<bool, bool>(name, a, b, y, [](bool u, bool v) { return u == v; });
  }
  // PRelu's slope broadcasts to x one way: the result is shaped like x.
  if (op == BinaryOp::PRelu && broadcast_two(name, a.shape(), b.shape()) != a.shape())
    throw Error(ErrorKind::Shape, std::string(name) + ": the slope " + shape_to_string(b.shape()) +
                                      " does not broadcast to x " + shape_to_string(a.shape()));
  detail::dispatch_numeric(a.dtype(), name, [&](auto tag) { binary_arith<decltype(tag)>(op, name, a, b, y); });
}

void sum_of(std::span<const Tensor* const> inputs, bool mean, Tensor& y) {
  const char* name = mean ? "Mean" : "Sum";
  if (inputs.empty()) throw Error(ErrorKind::Input, std::string(name) + ": needs at least one input");
  Tensor acc = *inputs[0];
  if (mean) detail::dispatch_float(acc.dtype(), name, [](auto) {});
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    if (inputs[i]->dtype() != acc.dtype())
      throw Error(ErrorKind::Input, std::string(name) + ": input " + std::to_string(i) + " has dtype " +
                                        inputs[i]->type_string() + ", input 0 " + inputs[0]->type_string());
    Tensor next;
    binary(BinaryOp::Add, acc, *inputs[i], next);
    acc = std::move(next);
  }
  if (!mean) {
    identity(acc, y);
    return;
  }
  detail::dispatch_float(acc.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    const Tensor count = Tensor::scalar<T>(static_cast<T>(inputs.size()));
    Tensor out;
    binary(BinaryOp::Div, acc, count, out);
    y = std::move(out);
  });
}

void where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& y) {
  if (&y == &cond || &y == &a || &y == &b) {
    Tensor out;
    where(cond, a, b, out);
    y = std::move(out);
    return;
  }
  if (cond.dtype() != DType::Bool)
    throw Error(ErrorKind::Input, "Where: condition must be bool, got " + cond.type_string());
  if (a.dtype() != b.dtype())
    throw Error(ErrorKind::Input, "Where: branches have different dtypes " + a.type_string() + " and " + b.type_string());
  const Shape out = broadcast_two("Where", broadcast_two("Where", cond.shape(), a.shape()), b.shape());
  const std::array<Shape, 3> strides{broadcast_strides(cond.shape(), out.size()),
                                     broadcast_strides(a.shape(), out.size()), broadcast_strides(b.shape(), out.size())};
  detail::dispatch_any(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const bool* pc = cond.data<bool>();
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    y.reset(a.dtype(), out);
    T* py = y.data<T>();
    for_each_strided<3>(out, strides, {0, 0, 0}, [&](std::int64_t o, const std::array<std::int64_t, 3>& at) {
      py[o] = pc[at[0]] ? pa[at[1]] : pb[at[2]];
    });
  });
}

void clip(const Tensor& x, const Tensor* lo, const Tensor* hi, Tensor& y) {
  detail::dispatch_numeric(x.dtype(), "Clip", [&](auto tag) {
    using T = decltype(tag);
    const T low = clip_bound<T>(lo, "min", std::numeric_limits<T>::lowest(), x.dtype());
    const T high = clip_bound<T>(hi, "max", std::numeric_limits<T>::max(), x.dtype());
    // NaN stays NaN; when low > high every value becomes high (as NumPy's clip).
    map_unary<T>(x, y, [low, high](T v) { return v < low ? (low > high ? high : low) : (v > high ? high : v); });
  });
}

}  // namespace canary::kernels
