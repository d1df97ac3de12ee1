// Reference TopK (opset 11): the k largest (or smallest) elements of every
// line along an axis, with their indices, in order of value. Equal values
// keep the lower index first, as ONNX's reference implementation does (a
// stable sort). A NaN counts as larger than every number, as ArgMax's does
// here, so NaNs lead with largest = 1 and trail with largest = 0; the order
// is a strict weak one either way, which std::stable_sort needs.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"
#include "kernels/reference/axis.h"
#include "kernels/reference/element_dispatch.h"

namespace canary::kernels {
namespace {

// k: a 1-D i64 tensor of one element in [0, dim].
std::int64_t read_k(const Tensor& k, std::int64_t dim, const Tensor& x) {
  if (k.dtype() != DType::I64) throw Error(ErrorKind::Input, "TopK: K must be an i64 tensor, got " + k.type_string());
  if (k.rank() != 1 || k.numel() != 1)
    throw Error(ErrorKind::Shape, "TopK: K must be 1-D with one element, got " + k.type_string());
  const std::int64_t v = k.data<std::int64_t>()[0];
  if (v < 0 || v > dim)
    throw Error(ErrorKind::Input, "TopK: K " + std::to_string(v) + " is outside [0, " + std::to_string(dim) +
                                      "] for the axis of " + x.type_string());
  return v;
}

// a before b: a larger (largest) or smaller value, NaN above every number.
template <typename T>
bool ranks_before(T a, T b, bool largest) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool a_nan = std::isnan(a), b_nan = std::isnan(b);
    if (a_nan || b_nan) return largest ? a_nan && !b_nan : b_nan && !a_nan;
  }
  return largest ? a > b : a < b;
}

template <typename T>
void top_k_lines(const TopKParams& p, detail::AxisSplit s, std::int64_t k, const T* px, T* pv,
                 std::int64_t* pi) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(s.dim));
  for (std::int64_t o = 0; o < s.outer; ++o)
    for (std::int64_t i = 0; i < s.inner; ++i) {
      const T* line = px + o * s.dim * s.inner + i;
      std::iota(order.begin(), order.end(), std::int64_t{0});
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
        return ranks_before(line[a * s.inner], line[b * s.inner], p.largest);
      });
      for (std::int64_t j = 0; j < k; ++j) {
        const std::int64_t at = (o * k + j) * s.inner + i;
        pv[at] = line[order[static_cast<std::size_t>(j)] * s.inner];
        pi[at] = order[static_cast<std::size_t>(j)];
      }
    }
}

}  // namespace

void top_k(const TopKParams& p, const Tensor& x, const Tensor& k, Tensor& values, Tensor& indices) {
  if (x.rank() == 0) throw Error(ErrorKind::Shape, "TopK: X must have at least one dim, got " + x.type_string());
  const std::int64_t axis = detail::normalize_axis("TopK", p.axis, x.rank(), x.shape());
  const detail::AxisSplit s = detail::split_at(x.shape(), axis);
  const std::int64_t count = read_k(k, s.dim, x);
  std::vector<std::int64_t> shape(x.shape().begin(), x.shape().end());
  shape[static_cast<std::size_t>(axis)] = count;
  const Tensor src = x;  // alive when an output is x
  values.reset(src.dtype(), shape);
  indices.reset(DType::I64, shape);
  detail::dispatch_numeric(src.dtype(), "TopK", [&](auto tag) {
    using T = decltype(tag);
    top_k_lines(p, s, count, src.data<T>(), values.data<T>(), indices.data<std::int64_t>());
  });
}

}  // namespace canary::kernels
