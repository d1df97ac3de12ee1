// Reference Hardmax (opset 13): along one axis, 1 at the first largest
// element of each line and 0 elsewhere. Ties go to the first; a NaN counts as
// larger than every number (the first NaN wins), as ArgMax's NumPy semantics
// have it, so Hardmax(x) is always the one-hot of ArgMax(x).
#include <cmath>

#include "canary/error.h"
#include "kernels/reference.h"
#include "kernels/reference/axis.h"
#include "kernels/reference/element_dispatch.h"

namespace canary::kernels {
namespace {

// True when v, later along the line, replaces best.
template <typename T>
bool beats(T v, T best) {
  if (std::isnan(best)) return false;
  return std::isnan(v) || best < v;
}

// The position of the winner among `dim` elements `inner` apart (dim >= 1).
template <typename T>
std::int64_t winner(const T* line, std::int64_t dim, std::int64_t inner) {
  std::int64_t at = 0;
  for (std::int64_t k = 1; k < dim; ++k)
    if (beats(line[k * inner], line[at * inner])) at = k;
  return at;
}

template <typename T>
void hardmax_typed(std::int64_t axis, const Tensor& x, Tensor& y) {
  const detail::AxisSplit s = detail::split_at(x.shape(), axis);
  const T* px = x.data<T>();
  T* py = y.data<T>();
  for (std::int64_t o = 0; o < s.outer; ++o)
    for (std::int64_t i = 0; i < s.inner; ++i) {
      const std::int64_t base = o * s.dim * s.inner + i;
      const std::int64_t best = s.dim > 0 ? winner(px + base, s.dim, s.inner) : 0;
      for (std::int64_t k = 0; k < s.dim; ++k) py[base + k * s.inner] = k == best ? T{1} : T{0};
    }
}

}  // namespace

void hardmax(std::int64_t axis, const Tensor& x, Tensor& y) {
  const std::int64_t a = detail::normalize_axis("Hardmax", axis, x.rank(), x.shape());
  const Tensor src = x;  // keeps x's buffer alive when y is x
  detail::dispatch_float(src.dtype(), "Hardmax", [&](auto tag) {
    y.reset(src.dtype(), src.shape());
    hardmax_typed<decltype(tag)>(a, src, y);
  });
}

}  // namespace canary::kernels
