// Reference GatherND (opset 13): each index tuple of indices (its last dim)
// picks one element or slice of data, within the batch its leading
// batch_dims dims name. Only element bits move, so any dtype gathers.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"
#include "kernels/reference/index_offsets.h"

namespace canary::kernels {
namespace {

// The product of dims [from, to) of a shape: it fits, since the tensor exists.
std::int64_t product(const Shape& shape, std::int64_t from, std::int64_t to) {
  std::int64_t n = 1;
  for (std::int64_t d = from; d < to; ++d) n *= shape[static_cast<std::size_t>(d)];
  return n;
}

[[noreturn]] void shape_error(const Tensor& data, const Tensor& indices, const std::string& why) {
  throw Error(ErrorKind::Shape, "GatherND: data " + shape_to_string(data.shape()) + " and indices " +
                                    shape_to_string(indices.shape()) + ": " + why);
}

// Checks ranks, batch_dims, the tuple length and the batch dims ONNX requires.
void check_shapes(std::int64_t b, const Tensor& data, const Tensor& indices) {
  const std::int64_t r = data.rank(), q = indices.rank();
  if (r < 1 || q < 1) shape_error(data, indices, "both need rank >= 1");
  if (b < 0 || b >= std::min(q, r))
    shape_error(data, indices, "batch_dims " + std::to_string(b) + " must be in [0, " +
                                   std::to_string(std::min(q, r)) + ") (below both ranks)");
  const std::int64_t k = indices.dim(static_cast<int>(q - 1));
  if (k < 1 || k > r - b)
    shape_error(data, indices, "the last dim of indices (" + std::to_string(k) + ") must be in [1, " +
                                   std::to_string(r - b) + "], the rank of data after batch_dims " +
                                   std::to_string(b));
  for (int d = 0; d < b; ++d)
    if (data.dim(d) != indices.dim(d))
      shape_error(data, indices, "batch dim " + std::to_string(d) + " differs");
}

}  // namespace

void gather_nd(std::int64_t batch_dims, const Tensor& data, const Tensor& indices, Tensor& y) {
  if (indices.dtype() != DType::I64)
    throw Error(ErrorKind::Input, "GatherND: indices must be i64, got " + indices.type_string());
  check_shapes(batch_dims, data, indices);
  const std::int64_t b = batch_dims, r = data.rank(), q = indices.rank();
  const std::int64_t k = indices.dim(static_cast<int>(q - 1));
  // Offsets within one batch block; batch t / per_batch starts batch_stride further.
  const std::vector<std::int64_t> offsets = detail::tuple_offsets("GatherND", b, data, indices);
  const auto per_batch = static_cast<std::size_t>(product(indices.shape(), b, q - 1));
  const std::int64_t batch_stride = product(data.shape(), b, r);
  const std::int64_t slice = product(data.shape(), b + k, r);
  Shape out(indices.shape().begin(), indices.shape().end() - 1);
  out.insert(out.end(), data.shape().begin() + b + k, data.shape().end());
  const Tensor src = data;  // keeps data's buffer alive when y is data
  y.reset(src.dtype(), out);
  if (y.numel() == 0) return;
  const std::size_t element = dtype_size(src.dtype());
  const std::size_t bytes = static_cast<std::size_t>(slice) * element;
  const auto* from = static_cast<const std::uint8_t*>(src.raw());
  auto* to = static_cast<std::uint8_t*>(y.raw());
  for (std::size_t t = 0; t < offsets.size(); ++t) {
    const std::int64_t at = static_cast<std::int64_t>(t / per_batch) * batch_stride + offsets[t];
    std::memcpy(to + t * bytes, from + static_cast<std::size_t>(at) * element, bytes);
  }
}

}  // namespace canary::kernels
