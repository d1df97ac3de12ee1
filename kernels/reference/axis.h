// Axis normalisation shared by the reference kernels that take an axis.
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

}  // namespace canary::kernels::detail
