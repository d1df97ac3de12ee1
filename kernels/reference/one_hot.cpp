// Reference OneHot (opset 11): for every index, a line of `depth` values
// along a new axis, `on` at the index and `off` elsewhere. Negative indices
// count from the end (index + depth); an index outside [-depth, depth)
// leaves its whole line `off`, as the ONNX operator definition says.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"
#include "kernels/reference/element_dispatch.h"

namespace canary::kernels {
namespace {

// The one number of a 0-D or one-element 1-D tensor, truncated toward zero.
// A float beyond the i64 range (or NaN) is Error(Input).
std::int64_t read_integer(const char* what, const Tensor& t, std::int64_t i) {
  std::int64_t out = 0;
  detail::dispatch_numeric(t.dtype(), "OneHot", [&](auto tag) {
    using T = decltype(tag);
    const T v = t.data<T>()[i];
    if constexpr (std::is_floating_point_v<T>) {
      if (!(std::fabs(v) < 9.2e18))
        throw Error(ErrorKind::Input,
                    std::string("OneHot: ") + what + " " + std::to_string(v) + " is not an integer in the i64 range");
      out = static_cast<std::int64_t>(v);
    } else {
      out = static_cast<std::int64_t>(v);
    }
  });
  return out;
}

// depth: one number, at least 1.
std::int64_t read_depth(const Tensor& depth) {
  if (depth.rank() > 1 || depth.numel() != 1)
    throw Error(ErrorKind::Shape, "OneHot: depth must hold one number (0-D or 1-D), got " + depth.type_string());
  const std::int64_t d = read_integer("depth", depth, 0);
  if (d < 1) throw Error(ErrorKind::Input, "OneHot: depth " + std::to_string(d) + " must be at least 1");
  return d;
}

}  // namespace

void one_hot(std::int64_t axis, const Tensor& indices, const Tensor& depth, const Tensor& values, Tensor& y) {
  const std::int64_t d = read_depth(depth);
  if (values.rank() != 1 || values.numel() != 2)
    throw Error(ErrorKind::Shape, "OneHot: values must be [off, on] (1-D, 2 elements), got " + values.type_string());
  const std::int64_t rank = indices.rank();
  if (axis < -rank - 1 || axis > rank)
    throw Error(ErrorKind::Shape, "OneHot: axis " + std::to_string(axis) + " is out of range for indices " +
                                      indices.type_string());
  const std::int64_t at = axis < 0 ? axis + rank + 1 : axis;
  std::vector<std::int64_t> shape(indices.shape().begin(), indices.shape().end());
  shape.insert(shape.begin() + at, d);
  // Indices as [outer, inner] around the new axis; y is [outer, depth, inner].
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t k = 0; k < rank; ++k) (k < at ? outer : inner) *= indices.dim(static_cast<int>(k));
  const Tensor idx = indices, vals = values;  // alive when y aliases one
  y.reset(vals.dtype(), shape);
  detail::dispatch_bits(vals.dtype(), [&](auto tag) {
    using U = decltype(tag);
    const U off = static_cast<const U*>(vals.raw())[0], on = static_cast<const U*>(vals.raw())[1];
    U* py = static_cast<U*>(y.raw());
    for (std::int64_t i = 0; i < y.numel(); ++i) py[i] = off;
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t i = 0; i < inner; ++i) {
        std::int64_t hot = read_integer("index", idx, o * inner + i);
        if (hot < 0) hot += d;
        if (hot >= 0 && hot < d) py[(o * d + hot) * inner + i] = on;
      }
  });
}

}  // namespace canary::kernels
