// Index tensors to flat data offsets (see index_offsets.h).
#include "kernels/reference/index_offsets.h"

#include <string>
#include <vector>

#include "canary/error.h"
#include "kernels/reference/broadcast_index.h"

namespace canary::kernels::detail {
namespace {

// The index at flat position i of indices, i64 or i32.
std::int64_t index_at(const Tensor& indices, std::int64_t i) {
  return indices.dtype() == DType::I64 ? indices.data<std::int64_t>()[i] : indices.data<std::int32_t>()[i];
}

// Index k (at flat position i of indices) along `axis` of data, from the
// end when negative; out of range is Error(Input) naming all of it.
std::int64_t checked_index(const char* op, std::int64_t k, std::int64_t axis, const Tensor& data,
                           const Tensor& indices, std::int64_t i) {
  const std::int64_t dim = data.dim(static_cast<int>(axis));
  if (k < -dim || k >= dim)
    throw Error(ErrorKind::Input, std::string(op) + ": index " + std::to_string(k) + " at " +
                                      position_text(indices.shape(), i) + " of indices is out of range for dim " +
                                      std::to_string(dim) + " (axis " + std::to_string(axis) + " of data " +
                                      shape_to_string(data.shape()) + ")");
  return k < 0 ? k + dim : k;
}

}  // namespace

std::string position_text(const Shape& shape, std::int64_t i) {
  Shape at(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    at[d] = i % shape[d];
    i /= shape[d];
  }
  return shape_to_string(at);
}

void check_element_indices(const char* op, std::int64_t axis, const Tensor& data, const Tensor& indices) {
  if (data.rank() != indices.rank())
    throw Error(ErrorKind::Shape, std::string(op) + ": indices " + shape_to_string(indices.shape()) +
                                      " must have the rank of data " + shape_to_string(data.shape()));
  for (int d = 0; d < data.rank(); ++d)
    if (d != axis && indices.dim(d) > data.dim(d))
      throw Error(ErrorKind::Shape, std::string(op) + ": indices " + shape_to_string(indices.shape()) +
                                        " exceed data " + shape_to_string(data.shape()) + " on dim " +
                                        std::to_string(d) + " (only the axis " + std::to_string(axis) +
                                        " may differ)");
}

std::vector<std::int64_t> element_offsets(const char* op, std::int64_t axis, const Tensor& data,
                                          const Tensor& indices) {
  const Shape strides = contiguous_strides(data.shape());
  const Shape& shape = indices.shape();
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(indices.numel()));
  Shape at(shape.size(), 0);
  for (std::int64_t i = 0; i < indices.numel(); ++i) {
    const std::int64_t k = checked_index(op, index_at(indices, i), axis, data, indices, i);
    std::int64_t off = 0;
    for (std::size_t d = 0; d < shape.size(); ++d)
      off += (static_cast<std::int64_t>(d) == axis ? k : at[d]) * strides[d];
    offsets[static_cast<std::size_t>(i)] = off;
    for (std::size_t d = shape.size(); d-- > 0;) {  // next multi-index, row-major
      if (++at[d] < shape[d]) break;
      at[d] = 0;
    }
  }
  return offsets;
}

std::vector<std::int64_t> tuple_offsets(const char* op, std::int64_t first, const Tensor& data,
                                        const Tensor& indices) {
  const Shape strides = contiguous_strides(data.shape());
  const std::int64_t k = indices.dim(indices.rank() - 1);
  const std::int64_t count = k == 0 ? 0 : indices.numel() / k;
  const std::int64_t* tuples = indices.data<std::int64_t>();
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(count));
  for (std::int64_t t = 0; t < count; ++t) {
    std::int64_t off = 0;
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t i = t * k + j;
      off += checked_index(op, tuples[i], first + j, data, indices, i) * strides[static_cast<std::size_t>(first + j)];
    }
    offsets[static_cast<std::size_t>(t)] = off;
  }
  return offsets;
}

}  // namespace canary::kernels::detail
