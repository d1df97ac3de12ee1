// oneDNN softmax_forward for f32 Softmax along any axis.
//
// The tensor is viewed as [outer, dim, inner] (or [outer, dim] when the axis
// is the last), so one primitive serves every rank with the same split and
// the cache key is three numbers. Invalid axes and empty tensors return false
// so the reference kernel reports or handles them, and so does a tensor with
// NaN, +Inf or a row of -Inf only (needs_reference): oneDNN 2.6 then returns
// NaN at those elements and 0 at the others, where the reference's
// exp(x - max) makes the whole row NaN, and every tier must agree on where
// NaN appears.
#include <array>
#include <cstdint>
#include <limits>

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/onednn.h"
#include "kernels/onednn/engine.h"
#include "kernels/onednn/plain_layout.h"
#include "kernels/onednn/primitive_cache.h"
#include "kernels/onednn/threading.h"

namespace canary::kernels {
namespace {

using onednn::CachedPrimitive;
using onednn::PrimitiveKey;
using onednn::PrimitiveKind;

// Creates a softmax over dim 1 of a dense [outer, dim(, inner)] tensor.
CachedPrimitive make_softmax(std::int64_t outer, std::int64_t dim, std::int64_t inner) {
  const std::int64_t dims[3] = {outer, dim, inner};
  const dnnl::memory::desc md = onednn::row_major_desc(std::span<const std::int64_t>(dims, inner == 1 ? 2 : 3));
  const dnnl::softmax_forward::desc desc(dnnl::prop_kind::forward_inference, md, 1);
  const dnnl::softmax_forward::primitive_desc pd(desc, onednn::cpu_engine());
  CachedPrimitive entry{dnnl::softmax_forward(pd)};
  entry.add_argument(DNNL_ARG_SRC, md);
  entry.add_argument(DNNL_ARG_DST, md);
  return entry;
}

// True when the reference kernel must compute this softmax, viewed as
// [outer, dim, inner] along the axis: some element is NaN or +Inf, or some
// row along the axis is -Inf throughout (oneDNN clamps exp's NaN argument
// and returns 0 there; the reference's exp(x - max) is NaN). A lone -Inf is
// an ordinary masked logit. One vectorisable pass, plus a per-row pass only
// when some -Inf is present: a few percent of a softmax's exp work.
bool needs_reference(const Tensor& x, std::int64_t outer, std::int64_t dim, std::int64_t inner) {
  const float* p = x.data<float>();
  const float inf = std::numeric_limits<float>::infinity();
  bool nan_or_inf = false, negative_inf = false;
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    nan_or_inf |= !(p[i] < inf);
    negative_inf |= p[i] == -inf;
  }
  if (nan_or_inf) return true;
  if (!negative_inf) return false;
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t in = 0; in < inner; ++in) {
      const float* row = p + o * dim * inner + in;
      bool all_negative_inf = true;
      for (std::int64_t k = 0; k < dim && all_negative_inf; ++k) all_negative_inf = row[k * inner] == -inf;
      if (all_negative_inf) return true;
    }
  return false;
}

}  // namespace

// oneDNN softmax of x along axis into y, or false when the case does not apply.
bool onednn_softmax(std::int64_t axis, const Tensor& x, Tensor& y) {
  onednn::thread_primitive_cache().count_call();
  const std::int64_t rank = x.rank();
  if (x.dtype() != DType::F32 || &x == &y || axis < -rank || axis >= rank || x.numel() == 0) return false;
  const std::int64_t a = axis < 0 ? axis + rank : axis;
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t d = 0; d < a; ++d) outer *= x.dim(static_cast<int>(d));
  for (std::int64_t d = a + 1; d < rank; ++d) inner *= x.dim(static_cast<int>(d));
  const std::int64_t dim = x.dim(static_cast<int>(a));
  if (needs_reference(x, outer, dim, inner)) return false;
  const onednn::SerialWhenSmall threads(static_cast<double>(x.numel()), onednn::kParallelMinElements);
  PrimitiveKey key(PrimitiveKind::Softmax);
  for (std::int64_t v : {outer, dim, inner}) key.push(v);
  try {
    CachedPrimitive& prim =
        onednn::thread_primitive_cache().find_or_create(key, [&] { return make_softmax(outer, dim, inner); });
    y.reset(DType::F32, x.shape());
    const std::array<const void*, 2> buffers{x.raw(), y.raw()};
    prim.execute(buffers);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace canary::kernels
