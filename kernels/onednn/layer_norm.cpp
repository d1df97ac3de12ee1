// oneDNN layer_normalization_forward for f32 LayerNormalization.
//
// The normalised dims [axis, rank) are flattened into one channel dim C, so x
// is a dense [outer, C] tensor with per-channel scale (and shift for the
// bias). Scale and bias must hold exactly C elements (dims equal to the
// normalised dims, leading 1s allowed); a broadcast scale or bias returns
// false and the reference kernel runs. When Mean or InvStdDev is requested the
// primitive runs as forward_training, which outputs mean and variance; the
// inverse standard deviation is 1 / sqrt(variance + epsilon).
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

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

// The flattened problem: rows, channels per row, which optional parts are used.
struct LayerNormPlan {
  std::int64_t axis = 0, outer = 1, channels = 1;
  bool has_bias = false, stats = false;
  float epsilon = 0;
};

// Per-thread buffers for statistics the caller did not ask for.
struct LayerNormScratch {
  std::vector<float> mean, variance;
};

// The calling thread's scratch buffers.
LayerNormScratch& thread_scratch() {
  thread_local LayerNormScratch scratch;
  return scratch;
}

// True when t is an f32 tensor whose dims equal the trailing normalised dims (leading 1s allowed).
bool matches_normalised(const Tensor& t, const Tensor& x, std::int64_t axis, std::int64_t channels) {
  const std::int64_t norm_rank = x.rank() - axis;
  if (t.dtype() != DType::F32 || t.rank() > norm_rank || t.numel() != channels) return false;
  for (int i = 0; i < t.rank(); ++i)
    if (t.dim(i) != x.dim(static_cast<int>(x.rank() - t.rank() + i))) return false;
  return true;
}

// Flattens x around axis and checks scale and bias; false where the case does not apply.
bool plan_layer_norm(const LayerNormParams& p, const Tensor& x, const Tensor& scale, const Tensor* bias,
                     LayerNormPlan& g) {
  const std::int64_t rank = x.rank();
  if (x.dtype() != DType::F32 || p.axis < -rank || p.axis >= rank || x.numel() == 0) return false;
  g.axis = p.axis < 0 ? p.axis + rank : p.axis;
  for (std::int64_t d = 0; d < rank; ++d) (d < g.axis ? g.outer : g.channels) *= x.dim(static_cast<int>(d));
  if (!matches_normalised(scale, x, g.axis, g.channels)) return false;
  if (bias && !matches_normalised(*bias, x, g.axis, g.channels)) return false;
  g.has_bias = bias != nullptr;
  g.epsilon = static_cast<float>(p.epsilon);
  return std::isfinite(g.epsilon) && g.epsilon >= 0;
}

// Creates the primitive: data [outer, C], statistics [outer], scale and optional shift [C].
CachedPrimitive make_layer_norm(const LayerNormPlan& g) {
  const std::int64_t data_dims[2] = {g.outer, g.channels};
  const std::int64_t stat_dims[1] = {g.outer};
  const std::int64_t channel_dims[1] = {g.channels};
  const dnnl::memory::desc data_md = onednn::row_major_desc(data_dims);
  const dnnl::memory::desc stat_md = onednn::row_major_desc(stat_dims);
  const dnnl::memory::desc channel_md = onednn::row_major_desc(channel_dims);
  auto flags = dnnl::normalization_flags::use_scale;
  if (g.has_bias) flags = flags | dnnl::normalization_flags::use_shift;
  const auto prop = g.stats ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
  const dnnl::layer_normalization_forward::desc desc(prop, data_md, stat_md, g.epsilon, flags);
  const dnnl::layer_normalization_forward::primitive_desc pd(desc, onednn::cpu_engine());
  if (pd.workspace_desc().get_size() != 0) throw dnnl::error(dnnl_unimplemented, "layer norm needs a workspace");
  CachedPrimitive entry{dnnl::layer_normalization_forward(pd)};
  entry.add_argument(DNNL_ARG_SRC, data_md);
  entry.add_argument(DNNL_ARG_DST, data_md);
  entry.add_argument(DNNL_ARG_SCALE, channel_md);
  if (g.has_bias) entry.add_argument(DNNL_ARG_SHIFT, channel_md);
  if (g.stats) {
    entry.add_argument(DNNL_ARG_MEAN, stat_md);
    entry.add_argument(DNNL_ARG_VARIANCE, stat_md);
  }
  return entry;
}

// Resets a statistics output to [d0..d(axis-1), 1, ..., 1] like the reference kernel.
void reset_stats(Tensor* t, const Tensor& x, std::int64_t axis) {
  if (t == nullptr) return;
  Shape shape(x.shape().size(), 1);
  for (std::int64_t d = 0; d < axis; ++d) shape[static_cast<std::size_t>(d)] = x.dim(static_cast<int>(d));
  t->reset(DType::F32, shape);
}

// The buffer oneDNN writes a statistic to: the output itself or scratch.
float* stat_buffer(Tensor* t, std::int64_t outer, std::vector<float>& scratch) {
  if (t != nullptr) return t->data<float>();
  scratch.resize(static_cast<std::size_t>(outer));
  return scratch.data();
}

// Binds the buffers in make_layer_norm's argument order, runs, and derives InvStdDev.
void execute_layer_norm(CachedPrimitive& prim, const LayerNormPlan& g, const Tensor& x, const Tensor& scale,
                        const Tensor* bias, Tensor& y, Tensor* mean, Tensor* inv_std) {
  y.reset(DType::F32, x.shape());
  reset_stats(mean, x, g.axis);
  reset_stats(inv_std, x, g.axis);
  LayerNormScratch& s = thread_scratch();
  std::array<const void*, 6> buffers{x.raw(), y.raw(), scale.raw()};
  std::size_t n = 3;
  if (bias) buffers[n++] = bias->raw();
  float* variance = nullptr;
  if (g.stats) {
    buffers[n++] = stat_buffer(mean, g.outer, s.mean);
    variance = stat_buffer(nullptr, g.outer, s.variance);
    buffers[n++] = variance;
  }
  prim.execute(std::span<const void* const>(buffers.data(), n));
  if (inv_std == nullptr) return;
  float* out = inv_std->data<float>();
  for (std::int64_t i = 0; i < g.outer; ++i)
    out[i] = static_cast<float>(1.0 / std::sqrt(static_cast<double>(variance[i]) + static_cast<double>(g.epsilon)));
}

}  // namespace

// oneDNN layer normalization into y (and the optional statistics), or false when the case does not apply.
bool onednn_layer_norm(const LayerNormParams& p, const Tensor& x, const Tensor& scale, const Tensor* bias, Tensor& y,
                       Tensor* mean, Tensor* inv_std) {
  onednn::thread_primitive_cache().count_call();
  for (const Tensor* out : {&y, mean, inv_std})
    if (out && (out == &x || out == &scale || out == bias)) return false;
  LayerNormPlan g;
  if (!plan_layer_norm(p, x, scale, bias, g)) return false;
  g.stats = mean != nullptr || inv_std != nullptr;
  const onednn::SerialWhenSmall threads(static_cast<double>(x.numel()), onednn::kParallelMinElements);
  PrimitiveKey key(PrimitiveKind::LayerNorm);
  for (std::int64_t v : {g.outer, g.channels, std::int64_t(g.has_bias), std::int64_t(g.stats)}) key.push(v);
  key.push_double(g.epsilon);
  try {
    CachedPrimitive& prim = onednn::thread_primitive_cache().find_or_create(key, [&] { return make_layer_norm(g); });
    execute_layer_norm(prim, g, x, scale, bias, y, mean, inv_std);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace canary::kernels
