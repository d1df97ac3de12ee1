// An f32 Transpose as runs and planes (transpose_planes.h), or where those do
// not serve, as a oneDNN reorder: the source is x's buffer read through
// permuted strides, the destination y's dense row-major buffer. oneDNN's
// jit reorders move [N, C, H, W] <-> [N, H, W, C] (the edges of a
// channels-last region, graph/passes/channels_last.cpp) at memory speed,
// where the reference kernel walks an index per element.
#include <array>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/onednn.h"
#include "kernels/onednn/engine.h"
#include "kernels/onednn/plain_layout.h"
#include "kernels/onednn/primitive_cache.h"
#include "kernels/onednn/threading.h"
#include "kernels/onednn/transpose_planes.h"

namespace canary::kernels {

bool onednn_transpose(std::span<const std::int64_t> perm, const Tensor& x, Tensor& y) {
  onednn::thread_primitive_cache().count_call();
  const std::size_t rank = static_cast<std::size_t>(x.rank());
  if (x.dtype() != DType::F32 || &x == &y || x.numel() == 0 || rank < 2 || rank > DNNL_MAX_NDIMS) return false;
  if (perm.size() != rank || !onednn::dense_size_fits(x.shape())) return false;
  std::array<bool, DNNL_MAX_NDIMS> seen{};
  Shape out(rank), strides(rank), dense(rank, 1);
  for (std::size_t i = rank; i-- > 1;) dense[i - 1] = dense[i] * x.shape()[i];
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t d = perm[i];
    if (d < 0 || d >= static_cast<std::int64_t>(rank) || seen[static_cast<std::size_t>(d)]) return false;
    seen[static_cast<std::size_t>(d)] = true;
    out[i] = x.shape()[static_cast<std::size_t>(d)];
    strides[i] = dense[static_cast<std::size_t>(d)];
  }
  // Runs and planes need no primitive: nothing is created for a new shape.
  if (onednn::transpose_by_planes(perm, x, y)) return true;
  const onednn::SerialWhenSmall threads(static_cast<double>(x.numel()), onednn::kParallelMinElements);
  onednn::PrimitiveKey key(onednn::PrimitiveKind::Transpose);
  key.push_list(x.shape());
  key.push_list(std::vector<std::int64_t>(perm.begin(), perm.end()));
  if (!key.valid()) return false;
  try {
    onednn::CachedPrimitive& prim = onednn::thread_primitive_cache().find_or_create(key, [&] {
      const dnnl::memory::desc src = onednn::strided_desc(out, strides);
      const dnnl::memory::desc dst = onednn::row_major_desc(out);
      onednn::CachedPrimitive entry{dnnl::reorder(dnnl::reorder::primitive_desc(onednn::cpu_engine(), src,
                                                                                onednn::cpu_engine(), dst))};
      entry.add_argument(DNNL_ARG_FROM, src);
      entry.add_argument(DNNL_ARG_TO, dst);
      return entry;
    });
    const Tensor source = x;  // keeps x's buffer alive should y be x's register
    y.reset(DType::F32, out);
    const std::array<const void*, 2> buffers{source.raw(), y.raw()};
    prim.execute(buffers);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace canary::kernels
