// oneDNN batch_normalization_forward for f32 BatchNormalization (inference form).
//
// x [N, C, ...] is viewed as a dense [N, C, S] tensor (S: the product of the
// spatial dims, 1 for rank 2), normalised with the given statistics
// (use_global_stats) and per-channel scale and shift. Invalid shapes or
// dtypes return false so the reference kernel reports them.
#include <array>
#include <cstdint>

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

// True when a per-channel input is f32 of shape [C].
bool is_channel_vector(const Tensor& t, std::int64_t channels) {
  return t.dtype() == DType::F32 && t.rank() == 1 && t.dim(0) == channels;
}

// Creates the inference batch normalisation of a dense [batch, channels, plane] tensor.
CachedPrimitive make_batch_norm(std::int64_t batch, std::int64_t channels, std::int64_t plane, float epsilon) {
  const std::int64_t dims[3] = {batch, channels, plane};
  const std::int64_t channel_dims[1] = {channels};
  const dnnl::memory::desc x_md = onednn::row_major_desc(dims);
  const dnnl::memory::desc c_md = onednn::row_major_desc(channel_dims);
  const auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
                     dnnl::normalization_flags::use_shift;
  const dnnl::batch_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, x_md, epsilon, flags);
  const dnnl::batch_normalization_forward::primitive_desc pd(desc, onednn::cpu_engine());
  CachedPrimitive entry{dnnl::batch_normalization_forward(pd)};
  entry.add_argument(DNNL_ARG_SRC, x_md);
  entry.add_argument(DNNL_ARG_MEAN, c_md);
  entry.add_argument(DNNL_ARG_VARIANCE, c_md);
  entry.add_argument(DNNL_ARG_SCALE, c_md);
  entry.add_argument(DNNL_ARG_SHIFT, c_md);
  entry.add_argument(DNNL_ARG_DST, x_md);
  return entry;
}

}  // namespace

// oneDNN inference batch normalisation of x into y, or false when the case does not apply.
bool onednn_batch_norm(const BatchNormParams& p, const Tensor& x, const Tensor& scale, const Tensor& bias,
                       const Tensor& mean, const Tensor& var, Tensor& y) {
  onednn::thread_primitive_cache().count_call();
  if (x.dtype() != DType::F32 || &x == &y || x.rank() < 2 || x.numel() == 0) return false;
  const std::int64_t batch = x.dim(0), channels = x.dim(1);
  for (const Tensor* t : {&scale, &bias, &mean, &var})
    if (t == &y || !is_channel_vector(*t, channels)) return false;
  const float epsilon = static_cast<float>(p.epsilon);
  if (!(epsilon >= 0.f)) return false;  // negative or NaN: leave it to the reference
  const std::int64_t plane = x.numel() / (batch * channels);
  const onednn::SerialWhenSmall threads(static_cast<double>(x.numel()), onednn::kParallelMinElements);
  PrimitiveKey key(PrimitiveKind::BatchNorm);
  for (std::int64_t v : {batch, channels, plane}) key.push(v);
  key.push_double(epsilon);
  try {
    CachedPrimitive& prim = onednn::thread_primitive_cache().find_or_create(
        key, [&] { return make_batch_norm(batch, channels, plane, epsilon); });
    y.reset(DType::F32, x.shape());
    const std::array<const void*, 6> buffers{x.raw(), mean.raw(), var.raw(), scale.raw(), bias.raw(), y.raw()};
    prim.execute(buffers);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace canary::kernels
