// Axis normalisation and the outer/dim/inner view around an axis, shared by
// the reference kernels that take an axis.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "canary/error.h"
#include "canary/tensor.h"

namespace canary::kernels::detail {

// Normalises an axis in [-rank, rank) or throws Error(Shape) naming the op and shape.
inline std::int64_t normalize_axis(const char* op, std::int64_t axis, std::int64_t rank,
                                   std::span<const std::int64_t> shape) {
  if (axis < -rank || axis >= rank)
    throw Error(ErrorKind::Shape, std::string(op) + ": axis " + std::to_string(axis) + " is out of range for shape " +
                                      shape_to_string(shape));
  return axis < 0 ? axis + rank : axis;
}

// A shape seen as [outer, dim, inner] around one (normalised) axis: the
// element at (o, k, i) lies at (o * dim + k) * inner + i.
struct AxisSplit {
  std::int64_t outer = 1, dim = 1, inner = 1;
};
inline AxisSplit split_at(std::span<const std::int64_t> shape, std::int64_t axis) {
  AxisSplit s;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const auto di = static_cast<std::int64_t>(d);
    if (di < axis) s.outer *= shape[d];
    else if (di == axis) s.dim = shape[d];
    else s.inner *= shape[d];
  }
  return s;
}

}  // namespace canary::kernels::detail
