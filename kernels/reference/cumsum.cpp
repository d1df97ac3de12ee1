// Reference CumSum (opset 14): running sums along one axis, inclusive or
// exclusive (each sum leaves out its own element), forwards or from the end.
// The axis is an input tensor, so it is read here, at run time: it is usually
// a constant but may be a graph input.
#include <string>
#include <type_traits>

#include "canary/error.h"
#include "kernels/reference.h"
#include "kernels/reference/axis.h"
#include "kernels/reference/element_dispatch.h"
#include "kernels/reference/reduce_folds.h"

namespace canary::kernels {
namespace {

// The axis held by a 0-D i64/i32 tensor, normalised against x's shape.
std::int64_t read_axis(const Tensor& axis, const Tensor& x) {
  if (axis.dtype() != DType::I64 && axis.dtype() != DType::I32)
    throw Error(ErrorKind::Input, "CumSum: axis must be an i64 or i32 tensor, got " + axis.type_string());
  if (axis.rank() != 0)
    throw Error(ErrorKind::Shape, "CumSum: axis must be a scalar (0-D tensor), got " + axis.type_string());
  const std::int64_t a = axis.dtype() == DType::I64 ? axis.data<std::int64_t>()[0] : axis.data<std::int32_t>()[0];
  return detail::normalize_axis("CumSum", a, x.rank(), x.shape());
}

// Floats accumulate in double (each output rounds once); integers in i64,
// wrapping like NumPy's, which an i32 output then narrows modulo 2^32.
template <typename T>
using SumOf = std::conditional_t<std::is_floating_point_v<T>, double, std::int64_t>;

template <typename Acc>
Acc accumulate(Acc a, Acc b) {
  if constexpr (std::is_floating_point_v<Acc>) return a + b;
  else return detail::wrap_add(a, b);
}

// One line of `dim` elements `inner` apart; each element is read before its
// output is written.
template <typename T>
void cumsum_line(const CumSumParams& p, std::int64_t dim, std::int64_t inner, const T* px, T* py) {
  SumOf<T> acc = 0;
  for (std::int64_t j = 0; j < dim; ++j) {
    const std::int64_t at = (p.reverse ? dim - 1 - j : j) * inner;
    const auto v = static_cast<SumOf<T>>(px[at]);
    if (p.exclusive) py[at] = static_cast<T>(acc);
    acc = accumulate(acc, v);
    if (!p.exclusive) py[at] = static_cast<T>(acc);
  }
}

template <typename T>
void cumsum_typed(const CumSumParams& p, std::int64_t axis, const Tensor& x, Tensor& y) {
  const detail::AxisSplit s = detail::split_at(x.shape(), axis);
  const T* px = x.data<T>();
  T* py = y.data<T>();
  for (std::int64_t o = 0; o < s.outer; ++o)
    for (std::int64_t i = 0; i < s.inner; ++i) {
      const std::int64_t base = o * s.dim * s.inner + i;
      cumsum_line(p, s.dim, s.inner, px + base, py + base);
    }
}

}  // namespace

void cumsum(const CumSumParams& p, const Tensor& x, const Tensor& axis, Tensor& y) {
  const std::int64_t a = read_axis(axis, x);
  const Tensor src = x;  // keeps x's buffer alive when y is x
  detail::dispatch_numeric(src.dtype(), "CumSum", [&](auto tag) {
    y.reset(src.dtype(), src.shape());
    cumsum_typed<decltype(tag)>(p, a, src, y);
  });
}

}  // namespace canary::kernels
