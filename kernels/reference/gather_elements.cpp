// Reference GatherElements (opset 13): y[i] = data[i with i[axis] replaced by
// indices[i]], y shaped like indices. Negative indices count from the end of
// the axis; an index out of range is an Error(Input) naming it and where it
// is, since reading past the axis would read another row or past the buffer.
#include <string>
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"
#include "kernels/reference/axis.h"
#include "kernels/reference/broadcast_index.h"
#include "kernels/reference/element_dispatch.h"

namespace canary::kernels {
namespace {

// The index at flat position i of indices, i64 or i32.
std::int64_t index_at(const Tensor& indices, std::int64_t i) {
  return indices.dtype() == DType::I64 ? indices.data<std::int64_t>()[i] : indices.data<std::int32_t>()[i];
}

// The multi-index of flat position i in a row-major shape, as text.
std::string position_text(const Shape& shape, std::int64_t i) {
  Shape at(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    at[d] = i % shape[d];
    i /= shape[d];
  }
  return shape_to_string(at);
}

// Rejects indices whose dims other than the axis exceed data's: they would
// address rows data does not have.
void check_shapes(std::int64_t axis, const Tensor& data, const Tensor& indices) {
  if (data.rank() != indices.rank())
    throw Error(ErrorKind::Shape, "GatherElements: indices " + shape_to_string(indices.shape()) +
                                      " must have the rank of data " + shape_to_string(data.shape()));
  for (int d = 0; d < data.rank(); ++d)
    if (d != axis && indices.dim(d) > data.dim(d))
      throw Error(ErrorKind::Shape, "GatherElements: indices " + shape_to_string(indices.shape()) +
                                        " exceed data " + shape_to_string(data.shape()) + " on dim " +
                                        std::to_string(d) + " (only the axis " + std::to_string(axis) +
                                        " may differ)");
}

// The data offset of every output element, bounds-checked.
std::vector<std::int64_t> source_offsets(std::int64_t axis, const Tensor& data, const Tensor& indices) {
  const Shape strides = detail::contiguous_strides(data.shape());
  const Shape& shape = indices.shape();
  const std::int64_t dim = data.dim(static_cast<int>(axis));
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(indices.numel()));
  Shape at(shape.size(), 0);
  for (std::int64_t i = 0; i < indices.numel(); ++i) {
    const std::int64_t k = index_at(indices, i);
    if (k < -dim || k >= dim)
      throw Error(ErrorKind::Input, "GatherElements: index " + std::to_string(k) + " at " +
                                        position_text(shape, i) + " of indices is out of range for dim " +
                                        std::to_string(dim) + " (axis " + std::to_string(axis) + " of data " +
                                        shape_to_string(data.shape()) + ")");
    std::int64_t off = 0;
    for (std::size_t d = 0; d < shape.size(); ++d)
      off += (static_cast<std::int64_t>(d) == axis ? (k < 0 ? k + dim : k) : at[d]) * strides[d];
    offsets[static_cast<std::size_t>(i)] = off;
    for (std::size_t d = shape.size(); d-- > 0;) {  // next multi-index, row-major
      if (++at[d] < shape[d]) break;
      at[d] = 0;
    }
  }
  return offsets;
}

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
  check_shapes(a, data, indices);
  const std::vector<std::int64_t> offsets = source_offsets(a, data, indices);
  const Tensor src = data;  // keeps data's buffer alive when y is data
  y.reset(data.dtype(), indices.shape());
  detail::dispatch_any(src.dtype(), [&](auto tag) { gather_elements_typed<decltype(tag)>(offsets, src, y); });
}

}  // namespace canary::kernels
