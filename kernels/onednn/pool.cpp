// oneDNN pooling_v2_forward for 1-D and 2-D f32 MaxPool / AveragePool, the
// batch in power-of-two chunks (batch_chunks.h), and GlobalAveragePool as
// row sums.
//
// Geometry is resolved exactly like the reference kernel (kernels/reference/
// pool.cpp). ceil_mode becomes extra end padding, which oneDNN never counts:
// exact for max and for averages that exclude padding. count_include_pad maps
// to pooling_avg_include_padding, whose divisor is the kernel size; that equals
// the reference's count of taps inside the padded input only while no window
// reaches past the original end padding, so a ceil_mode window that does
// returns false. So does any window without a real input element (possible
// with dilation), whose value the reference defines as -inf / NaN.
// Invalid shapes or attributes return false so the reference kernel throws.
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/onednn.h"
#include "kernels/onednn/batch_chunks.h"
#include "kernels/onednn/engine.h"
#include "kernels/onednn/plain_layout.h"
#include "kernels/onednn/primitive_cache.h"
#include "kernels/onednn/threading.h"
#include "kernels/row_sums.h"

namespace canary::kernels {
namespace {

using onednn::CachedPrimitive;
using onednn::PrimitiveKey;
using onednn::PrimitiveKind;

// One spatial axis: the reference geometry plus oneDNN's end padding.
struct PoolAxis {
  std::int64_t in = 1, kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0, out = 1;
  std::int64_t onednn_pad_end = 0;  // pad_end, grown to cover the last ceil_mode window
};

// A pooling in oneDNN's terms.
struct PoolPlan {
  std::size_t spatial = 0;
  std::array<PoolAxis, 2> axes{};
  std::array<std::int64_t, 4> out{};

  std::span<const std::int64_t> out_shape() const { return {out.data(), spatial + 2}; }
};

// Attribute value i, or `fallback` when the list is empty.
std::int64_t attribute_at(const std::vector<std::int64_t>& v, std::size_t i, std::int64_t fallback) {
  return v.empty() ? fallback : v[i];
}

// Floor division for a positive divisor.
std::int64_t floor_divide(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0 && a < 0) ? 1 : 0); }

// The dilated kernel extent; false on overflow.
bool kernel_span(const PoolAxis& a, std::int64_t& span) {
  return !__builtin_mul_overflow(a.dilation, a.kernel - 1, &span) && !__builtin_add_overflow(span, 1, &span);
}

// SAME padding split like the reference (extra at the end for SAME_UPPER).
bool apply_same_padding(AutoPad mode, PoolAxis& a, std::int64_t span) {
  a.out = a.in / a.stride + (a.in % a.stride != 0 ? 1 : 0);
  std::int64_t covered = 0;
  if (__builtin_mul_overflow(a.out - 1, a.stride, &covered) || __builtin_add_overflow(covered, span, &covered))
    return false;
  const std::int64_t total = std::max<std::int64_t>(0, covered - a.in);
  a.pad_begin = mode == AutoPad::SameUpper ? total / 2 : total - total / 2;
  a.pad_end = total - a.pad_begin;
  return true;
}

// Output length from explicit pads, floor or ceil mode, like the reference.
bool compute_output_length(bool ceil_mode, PoolAxis& a, std::int64_t span) {
  const std::int64_t room = a.in + a.pad_begin + a.pad_end - span;  // operands checked by the caller
  if (room < 0) return false;
  a.out = room / a.stride + 1;
  if (ceil_mode) {
    a.out += room % a.stride != 0 ? 1 : 0;
    a.out = std::min(a.out, floor_divide(a.in + a.pad_begin - 1, a.stride) + 1);
  }
  return true;
}

// True when window o holds at least one real (non-padding) tap, in closed form:
// the first tap at or after position 0 must also lie before position in.
bool window_has_input(const PoolAxis& a, std::int64_t o) {
  const std::int64_t start = o * a.stride - a.pad_begin;  // bounded by the planner's limits
  const std::int64_t first = start >= 0 ? 0 : (-start + a.dilation - 1) / a.dilation;
  return first < a.kernel && start + first * a.dilation < a.in;
}

// True when every window holds at least one real tap. Window starts grow with
// o, so when dilation <= in (no window can step over the whole input) only the
// first and last windows can miss it; otherwise windows are checked one by one,
// up to a bound past which the caller falls back to the reference kernel.
bool every_window_has_input(const PoolAxis& a) {
  if (a.dilation <= a.in) return window_has_input(a, 0) && window_has_input(a, a.out - 1);
  constexpr std::int64_t kMaxCheckedWindows = std::int64_t{1} << 16;
  if (a.out > kMaxCheckedWindows) return false;
  for (std::int64_t o = 0; o < a.out; ++o)
    if (!window_has_input(a, o)) return false;
  return true;
}

// Sets oneDNN's end padding so its floor-mode length equals a.out; false when
// that is impossible or changes an include-padding average's divisor.
bool fit_onednn_padding(const PoolParams& p, PoolAxis& a, std::int64_t span) {
  const std::int64_t needed = (a.out - 1) * a.stride + span - a.in - a.pad_begin;
  a.onednn_pad_end = std::max(a.pad_end, needed);
  if (p.op == PoolOp::Average && p.count_include_pad && a.onednn_pad_end != a.pad_end) return false;
  if (a.onednn_pad_end >= span) return false;
  return (a.in + a.pad_begin + a.onednn_pad_end - span) / a.stride + 1 == a.out;
}

// Resolves spatial axis i; false on attributes the reference rejects or cases oneDNN cannot match.
bool plan_axis(const PoolParams& p, std::size_t i, std::size_t spatial, std::int64_t in, PoolAxis& a) {
  a.in = in;
  a.kernel = p.kernel_shape[i];
  a.stride = attribute_at(p.strides, i, 1);
  a.dilation = attribute_at(p.dilations, i, 1);
  constexpr std::int64_t kLimit = std::int64_t{1} << 40;  // keeps the sums below far from overflow
  if (a.in < 1 || a.kernel < 1 || a.stride < 1 || a.dilation < 1 || a.in > kLimit || a.stride > kLimit) return false;
  std::int64_t span = 0;
  if (!kernel_span(a, span) || span > kLimit) return false;
  if (p.auto_pad == AutoPad::SameUpper || p.auto_pad == AutoPad::SameLower) {
    if (!apply_same_padding(p.auto_pad, a, span)) return false;
  } else {
    if (p.auto_pad == AutoPad::NotSet) {
      a.pad_begin = attribute_at(p.pads, i, 0);
      a.pad_end = attribute_at(p.pads, i + spatial, 0);
      if (a.pad_begin < 0 || a.pad_end < 0 || a.pad_begin >= span || a.pad_end >= span) return false;
    }
    if (!compute_output_length(p.ceil_mode, a, span)) return false;
  }
  // A kernel longer than the input costs oneDNN out * kernel taps, most of them padding; the
  // reference visits only the taps on real elements.
  if (a.out < 1 || a.kernel > a.in) return false;
  return fit_onednn_padding(p, a, span) && every_window_has_input(a);
}

// Validates x and the attribute lengths and resolves every axis.
bool plan_pool(const PoolParams& p, const Tensor& x, PoolPlan& g) {
  if (x.rank() != 3 && x.rank() != 4) return false;
  g.spatial = static_cast<std::size_t>(x.rank() - 2);
  const auto length_ok = [](const std::vector<std::int64_t>& v, std::size_t want, bool required) {
    return (!required && v.empty()) || v.size() == want;
  };
  if (!length_ok(p.kernel_shape, g.spatial, true) || !length_ok(p.strides, g.spatial, false) ||
      !length_ok(p.dilations, g.spatial, false) || !length_ok(p.pads, 2 * g.spatial, false))
    return false;
  g.out[0] = x.dim(0);
  g.out[1] = x.dim(1);
  for (std::size_t i = 0; i < g.spatial; ++i) {
    if (!plan_axis(p, i, g.spatial, x.dim(static_cast<int>(i) + 2), g.axes[i])) return false;
    g.out[i + 2] = g.axes[i].out;
  }
  return true;
}

// The oneDNN algorithm for the op and count_include_pad.
dnnl::algorithm pool_algorithm(const PoolParams& p) {
  if (p.op == PoolOp::Max) return dnnl::algorithm::pooling_max;
  return p.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                             : dnnl::algorithm::pooling_avg_exclude_padding;
}

// The cache key: algorithm, input dims, each resolved axis and the layout.
PrimitiveKey pool_key(const PoolParams& p, const PoolPlan& g, std::span<const std::int64_t> x_dims) {
  PrimitiveKey key(PrimitiveKind::Pool);
  key.push(static_cast<std::int64_t>(pool_algorithm(p)));
  key.push_list(x_dims);
  key.push(p.channels_last);
  for (std::size_t i = 0; i < g.spatial; ++i) {
    const PoolAxis& a = g.axes[i];
    for (std::int64_t v : {a.kernel, a.stride, a.dilation, a.pad_begin, a.onednn_pad_end}) key.push(v);
  }
  return key;
}

// Creates the pooling primitive for a plan on plain layouts, x of dims x_dims
// (channels-first) and y of the plan's output dims with x's batch.
CachedPrimitive make_pool(const PoolParams& p, const PoolPlan& g, std::span<const std::int64_t> x_dims) {
  dnnl::memory::dims strides, kernel, dilation, pad_l, pad_r;
  for (std::size_t i = 0; i < g.spatial; ++i) {
    const PoolAxis& a = g.axes[i];
    strides.push_back(a.stride);
    kernel.push_back(a.kernel);
    dilation.push_back(a.dilation - 1);
    pad_l.push_back(a.pad_begin);
    pad_r.push_back(a.onednn_pad_end);
  }
  std::array<std::int64_t, 4> y_dims = g.out;
  y_dims[0] = x_dims[0];
  const std::span<const std::int64_t> y_span(y_dims.data(), g.spatial + 2);
  const dnnl::memory::desc x_md =
      p.channels_last ? onednn::channels_last_desc(x_dims) : onednn::row_major_desc(x_dims);
  const dnnl::memory::desc y_md =
      p.channels_last ? onednn::channels_last_desc(y_span) : onednn::row_major_desc(y_span);
  const dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, pool_algorithm(p), x_md, y_md,
                                            strides, kernel, dilation, pad_l, pad_r);
  const dnnl::pooling_v2_forward::primitive_desc pd(desc, onednn::cpu_engine());
  CachedPrimitive entry{dnnl::pooling_v2_forward(pd)};
  entry.add_argument(DNNL_ARG_SRC, x_md);
  entry.add_argument(DNNL_ARG_DST, y_md);
  return entry;
}

}  // namespace

// oneDNN max or average pooling of x into y, or false when the case does not apply.
bool onednn_pool(const PoolParams& p, const Tensor& x, Tensor& y) {
  onednn::thread_primitive_cache().count_call();
  if (x.dtype() != DType::F32 || &x == &y || x.numel() == 0) return false;
  if (p.channels_last && x.rank() < 3) return false;
  // Channels-last buffers are planned with channels-first dims; only the descriptors differ.
  const Tensor dims = p.channels_last ? onednn::channels_first_view(x) : x;
  PoolPlan g;
  if (!plan_pool(p, dims, g) || !onednn::dense_size_fits(g.out_shape())) return false;
  const onednn::SerialWhenSmall threads(static_cast<double>(x.numel()), onednn::kParallelMinElements);
  // The batch in power-of-two chunks, one primitive per chunk size, unless
  // the whole batch comes back often (batch_chunks.h).
  const PrimitiveKey whole = pool_key(p, g, dims.shape());
  if (!whole.valid()) return false;
  thread_local onednn::HotBatches hot;
  const std::vector<onednn::BatchChunk> chunks =
      onednn::batch_plan(x.dim(0), onednn::thread_primitive_cache().contains(whole), hot, whole);
  std::vector<std::int64_t> chunk_dims(dims.shape().begin(), dims.shape().end());
  for (const onednn::BatchChunk& chunk : chunks) {
    chunk_dims[0] = chunk.images;
    if (!pool_key(p, g, chunk_dims).valid()) return false;
  }
  try {
    if (p.channels_last) y.reset(DType::F32, onednn::channels_last_dims(g.out_shape()));
    else y.reset(DType::F32, g.out_shape());
    // Both layouts keep an image's values together. A failure below leaves y
    // to the reference kernel, which writes all of it.
    const std::int64_t x_image = x.numel() / x.dim(0), y_image = y.numel() / y.dim(0);
    for (const onednn::BatchChunk& chunk : chunks) {
      chunk_dims[0] = chunk.images;
      CachedPrimitive& prim = onednn::thread_primitive_cache().find_or_create(
          pool_key(p, g, chunk_dims), [&] { return make_pool(p, g, chunk_dims); });
      const std::array<const void*, 2> buffers{x.data<float>() + chunk.first * x_image,
                                               y.data<float>() + chunk.first * y_image};
      prim.execute(buffers);
    }
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

// The mean of x [N, C, spatial...] over the spatial axes as row sums
// (kernels/row_sums.h): no primitive made per batch size.
bool onednn_global_average_pool(const Tensor& x, Tensor& y) {
  onednn::thread_primitive_cache().count_call();
  if (x.dtype() != DType::F32 || &x == &y || x.rank() < 3 || x.numel() == 0) return false;
  const std::int64_t planes = x.dim(0) * x.dim(1);
  const std::int64_t plane_size = x.numel() / planes;
  Shape out(x.shape().size(), 1);
  out[0] = x.dim(0);
  out[1] = x.dim(1);
  y.reset(DType::F32, out);
  const float* in = x.data<float>();
  float* means = y.data<float>();
  const double work = static_cast<double>(x.numel()) * (onednn::kParallelMinFlops / onednn::kParallelMinElements);
  onednn::for_row_blocks(planes, work, [&](std::int64_t begin, std::int64_t end) {
    row_sums(in + begin * plane_size, end - begin, plane_size, static_cast<float>(plane_size), means + begin);
  });
  return true;
}

}  // namespace canary::kernels
