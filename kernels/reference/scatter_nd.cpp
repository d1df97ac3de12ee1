// Reference ScatterND (opset 18): a copy of data in which each index tuple
// of indices names a slice that its slice of updates replaces or, under a
// reduction, combines with. Tuples apply in order, as in ONNX's reference,
// so repeated tuples accumulate (or the last one wins under None).
#include <cstring>
#include <string>
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"
#include "kernels/reference/element_dispatch.h"
#include "kernels/reference/index_offsets.h"
#include "kernels/reference/scatter_reduction.h"

namespace canary::kernels {
namespace {

// Checks dtypes, ranks, the tuple length k in [1, r] and that updates is
// indices.shape[:-1] + data.shape[k:].
void check_inputs(const Tensor& data, const Tensor& indices, const Tensor& updates) {
  if (indices.dtype() != DType::I64)
    throw Error(ErrorKind::Input, "ScatterND: indices must be i64, got " + indices.type_string());
  if (updates.dtype() != data.dtype())
    throw Error(ErrorKind::Input, "ScatterND: updates " + updates.type_string() + " must have the dtype of data " +
                                      data.type_string());
  if (data.rank() < 1 || indices.rank() < 1)
    throw Error(ErrorKind::Shape, "ScatterND: data " + shape_to_string(data.shape()) + " and indices " +
                                      shape_to_string(indices.shape()) + " both need rank >= 1");
  const std::int64_t k = indices.dim(indices.rank() - 1);
  if (k < 1 || k > data.rank())
    throw Error(ErrorKind::Shape, "ScatterND: the last dim of indices " + shape_to_string(indices.shape()) + " (" +
                                      std::to_string(k) + ") must be in [1, " + std::to_string(data.rank()) +
                                      "], the rank of data " + shape_to_string(data.shape()));
  Shape expected(indices.shape().begin(), indices.shape().end() - 1);
  expected.insert(expected.end(), data.shape().begin() + k, data.shape().end());
  if (updates.shape() != expected)
    throw Error(ErrorKind::Shape, "ScatterND: updates " + shape_to_string(updates.shape()) + " must be " +
                                      shape_to_string(expected) + " (indices " + shape_to_string(indices.shape()) +
                                      " without its last dim, then data " + shape_to_string(data.shape()) +
                                      " after dim " + std::to_string(k - 1) + ")");
}

template <typename T>
void apply_updates(ScatterReduction reduction, const std::vector<std::int64_t>& offsets, std::int64_t slice,
                   const Tensor& updates, Tensor& y) {
  const T* from = updates.data<T>();
  T* to = y.data<T>();
  detail::with_reduction<T>(reduction, detail::NanRule::Propagate, [&](auto combine) {
    for (std::size_t t = 0; t < offsets.size(); ++t) {
      T* dst = to + offsets[t];
      const T* src = from + static_cast<std::int64_t>(t) * slice;
      for (std::int64_t e = 0; e < slice; ++e) dst[e] = combine(dst[e], src[e]);
    }
  });
}

}  // namespace

void scatter_nd(ScatterReduction reduction, const Tensor& data, const Tensor& indices, const Tensor& updates,
                Tensor& y) {
  check_inputs(data, indices, updates);
  // Every tuple is checked before y is written.
  const std::vector<std::int64_t> offsets = detail::tuple_offsets("ScatterND", 0, data, indices);
  const std::int64_t k = indices.dim(indices.rank() - 1);
  std::int64_t slice = 1;
  for (int d = static_cast<int>(k); d < data.rank(); ++d) slice *= data.dim(d);
  const Tensor src = data, upd = updates;  // alive, and apart from y, when y is one of them
  y.reset(src.dtype(), src.shape());
  if (y.numel() == 0) return;
  std::memcpy(y.raw(), src.raw(), src.nbytes());
  detail::dispatch_any(src.dtype(), [&](auto tag) {
    apply_updates<decltype(tag)>(reduction, offsets, slice, upd, y);
  });
}

}  // namespace canary::kernels
