// Reference ScatterElements (opset 18), the inverse of GatherElements: a
// copy of data where each update lands on its own position with the axis
// coordinate replaced by its index. Updates apply in row-major order, as in
// ONNX's reference, so updates landing on one element accumulate (or the
// last one wins under None).
#include <cstring>
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"
#include "kernels/reference/axis.h"
#include "kernels/reference/element_dispatch.h"
#include "kernels/reference/index_offsets.h"
#include "kernels/reference/scatter_reduction.h"

namespace canary::kernels {
namespace {

// Checks dtypes, that data is not a scalar and that updates is shaped like
// indices; returns the normalised axis.
std::int64_t checked_axis(std::int64_t axis, const Tensor& data, const Tensor& indices, const Tensor& updates) {
  if (data.rank() == 0) throw Error(ErrorKind::Shape, "ScatterElements: data must have rank >= 1, got a scalar");
  if (indices.dtype() != DType::I64 && indices.dtype() != DType::I32)
    throw Error(ErrorKind::Input, "ScatterElements: indices must be i64 or i32, got " + indices.type_string());
  if (updates.dtype() != data.dtype())
    throw Error(ErrorKind::Input, "ScatterElements: updates " + updates.type_string() +
                                      " must have the dtype of data " + data.type_string());
  if (updates.shape() != indices.shape())
    throw Error(ErrorKind::Shape, "ScatterElements: updates " + shape_to_string(updates.shape()) +
                                      " must have the shape of indices " + shape_to_string(indices.shape()));
  return detail::normalize_axis("ScatterElements", axis, data.rank(), data.shape());
}

template <typename T>
void apply_updates(ScatterReduction reduction, const std::vector<std::int64_t>& offsets, const Tensor& updates,
                   Tensor& y) {
  const T* from = updates.data<T>();
  T* to = y.data<T>();
  detail::with_reduction<T>(reduction, detail::NanRule::KeepCurrent, [&](auto combine) {
    for (std::size_t i = 0; i < offsets.size(); ++i) to[offsets[i]] = combine(to[offsets[i]], from[i]);
  });
}

}  // namespace

void scatter_elements(std::int64_t axis, ScatterReduction reduction, const Tensor& data, const Tensor& indices,
                      const Tensor& updates, Tensor& y) {
  const std::int64_t a = checked_axis(axis, data, indices, updates);
  detail::check_element_indices("ScatterElements", a, data, indices);
  // Every index is checked before y is written.
  const std::vector<std::int64_t> offsets = detail::element_offsets("ScatterElements", a, data, indices);
  const Tensor src = data, upd = updates;  // alive, and apart from y, when y is one of them
  y.reset(src.dtype(), src.shape());
  if (y.numel() == 0) return;
  std::memcpy(y.raw(), src.raw(), src.nbytes());
  detail::dispatch_any(src.dtype(), [&](auto tag) { apply_updates<decltype(tag)>(reduction, offsets, upd, y); });
}

}  // namespace canary::kernels
