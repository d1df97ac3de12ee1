// Reference EyeLike (opset 9): a 2-D tensor of the input's shape with ones
// on diagonal k (column - row == k; positive k above the main one) and
// zeros elsewhere. Only the input's shape is read, never its values.
#include <string>

#include "canary/error.h"
#include "kernels/reference.h"
#include "kernels/reference/element_dispatch.h"

namespace canary::kernels {

void eye_like(std::optional<DType> dtype, std::int64_t k, const Tensor& x, Tensor& y) {
  if (x.rank() != 2) throw Error(ErrorKind::Shape, "EyeLike: input must be 2-D, got " + x.type_string());
  const std::int64_t rows = x.dim(0), cols = x.dim(1);
  const DType out = dtype.value_or(x.dtype());
  const std::int64_t shape[2] = {rows, cols};
  y.reset(out, shape);
  detail::dispatch_any(out, [&](auto tag) {
    using T = decltype(tag);
    T* py = y.data<T>();
    for (std::int64_t i = 0; i < y.numel(); ++i) py[i] = T(0);
    // Row i holds its one at column i + k, when that column exists; the loop
    // bounds keep i + k in [0, cols) without forming it for a huge k.
    const std::int64_t first = k < 0 ? (k < -rows ? rows : -k) : 0;
    for (std::int64_t i = first; i < rows && k < cols - i; ++i) py[i * cols + i + k] = T(1);
  });
}

}  // namespace canary::kernels
