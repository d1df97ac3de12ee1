// Reference Trilu (opset 14): keeps the upper or lower triangle of every
// matrix formed by the last two dims and zeros the rest. Diagonal k counts
// from the main one (positive: above it); element (i, j) is kept where
// j - i >= k (upper) or j - i <= k (lower), so a k beyond the matrix keeps
// all or nothing. k is an input tensor, read here at run time.
#include <string>

#include "canary/error.h"
#include "kernels/reference.h"
#include "kernels/reference/element_dispatch.h"

namespace canary::kernels {
namespace {

// k from the optional 0-D i64 input; 0 when it is absent.
std::int64_t read_k(const Tensor* k) {
  if (k == nullptr || !k->defined()) return 0;
  if (k->dtype() != DType::I64)
    throw Error(ErrorKind::Input, "Trilu: k must be an i64 tensor, got " + k->type_string());
  if (k->rank() != 0) throw Error(ErrorKind::Shape, "Trilu: k must be a scalar (0-D tensor), got " + k->type_string());
  return k->data<std::int64_t>()[0];
}

// Copies the kept elements of `count` row-major rows x cols matrices and
// zeros the others. U is an unsigned type as wide as one element: the all-zero
// bit pattern is 0 in every dtype (0.0, 0, false).
template <typename U>
void trilu_bits(bool upper, std::int64_t k, std::int64_t count, std::int64_t rows, std::int64_t cols, const U* px,
                U* py) {
  for (std::int64_t m = 0; m < count; ++m)
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) {
        const std::int64_t at = (m * rows + i) * cols + j;
        const bool keep = upper ? j - i >= k : j - i <= k;
        py[at] = keep ? px[at] : U{0};
      }
}

}  // namespace

void trilu(bool upper, const Tensor& x, const Tensor* k, Tensor& y) {
  if (x.rank() < 2)
    throw Error(ErrorKind::Shape, "Trilu: input must have rank >= 2, got " + x.type_string());
  const std::int64_t diagonal = read_k(k);
  const std::int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
  const std::int64_t count = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
  const Tensor src = x;  // keeps x's buffer alive when y is x
  y.reset(src.dtype(), src.shape());
  detail::dispatch_bits(src.dtype(), [&](auto tag) {
    using U = decltype(tag);
    trilu_bits(upper, diagonal, count, rows, cols, static_cast<const U*>(src.raw()), static_cast<U*>(y.raw()));
  });
}

}  // namespace canary::kernels
