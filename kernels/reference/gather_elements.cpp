// Reference GatherElements (opset 13): y[i] = data[i with i[axis] replaced by
// indices[i]], y shaped like indices. Negative indices count from the end of
// the axis; an index out of range is an Error(Input) naming it and where it
// is, since reading past the axis would read another row or past the buffer.
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"
#include "kernels/reference/axis.h"
#include "kernels/reference/element_dispatch.h"
#include "kernels/reference/index_offsets.h"

namespace canary::kernels {
namespace {

template <typename T>
void gather_elements_typed(const std::vector<std::int64_t>& offsets, const Tensor& data, Tensor& y) {
  const T* from = data.data<T>();
  T* to = y.data<T>();
  for (std::size_t i = 0; i < offsets.size(); ++i) to[i] = from[offsets[i]];
}

}  // namespace

void gather_elements(std::int64_t axis, const Tensor& data, const Tensor& indices, Tensor& y) {
  if (data.rank() == 0) throw Error(ErrorKind::Shape, "GatherElements: data must have rank >= 1, got a scalar");
  if (indices.dtype() != DType::I64 && indices.dtype() != DType::I32)
    throw Error(ErrorKind::Input, "GatherElements: indices must be i64 or i32, got " + indices.type_string());
  const std::int64_t a = detail::normalize_axis("GatherElements", axis, data.rank(), data.shape());
  detail::check_element_indices("GatherElements", a, data, indices);
  const std::vector<std::int64_t> offsets = detail::element_offsets("GatherElements", a, data, indices);
  const Tensor src = data;  // keeps data's buffer alive when y is data
  y.reset(data.dtype(), indices.shape());
  detail::dispatch_any(src.dtype(), [&](auto tag) { gather_elements_typed<decltype(tag)>(offsets, src, y); });
}

}  // namespace canary::kernels
