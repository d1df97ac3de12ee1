// oneDNN deconvolution_forward for 1-D to 3-D f32 ConvTranspose on plain
// layouts, the batch in power-of-two chunks (batch_chunks.h).
//
// The geometry is the reference kernel's (kernels/conv_transpose_geometry.h);
// oneDNN takes dilation - 1, the begin padding as padding_l and, as
// padding_r, whatever makes its output length the resolved one:
//   padding_r = stride * (in - 1) + (kernel - 1) * dilation + 1 - padding_l - out,
// which folds output_padding (and a negative derived end padding) in. A
// negative begin padding returns false: the reference kernel runs.
// ONNX's W [C, M/group, k...] is described to oneDNN in place with strides:
// [M, C, k...] (oc, ic) without groups, [group, M/group, C/group, k...] with.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "canary/error.h"
#include "kernels/conv_transpose_geometry.h"
#include "kernels/onednn.h"
#include "kernels/onednn/batch_chunks.h"
#include "kernels/onednn/engine.h"
#include "kernels/onednn/plain_layout.h"
#include "kernels/onednn/primitive_cache.h"
#include "kernels/onednn/threading.h"

namespace canary::kernels {
namespace {

using onednn::CachedPrimitive;
using onednn::PrimitiveKey;
using onednn::PrimitiveKind;

// oneDNN's end padding of an axis (see the file comment); false on overflow.
bool onednn_pad_end(const ConvTransposeAxis& a, std::int64_t& pad_end) {
  std::int64_t spread = 0, span = 0;
  return !__builtin_mul_overflow(a.stride, a.in - 1, &spread) &&
         !__builtin_mul_overflow(a.kernel - 1, a.dilation, &span) && !__builtin_add_overflow(spread, span, &spread) &&
         !__builtin_sub_overflow(spread + 1 - a.pad_begin, a.out, &pad_end);
}

// The cache key: x's dims, W's dims, group, bias, and every axis.
PrimitiveKey deconv_key(const ConvTransposeGeometry& g, std::span<const std::int64_t> x_dims,
                        std::span<const std::int64_t> w_dims, bool has_bias) {
  PrimitiveKey key(PrimitiveKind::ConvTranspose);
  key.push_list(x_dims);
  key.push_list(w_dims);
  key.push(g.group);
  key.push(has_bias);
  for (std::size_t i = 0; i < g.spatial; ++i) {
    const ConvTransposeAxis& a = g.axes[i];
    for (std::int64_t v : {a.stride, a.dilation, a.pad_begin, a.out}) key.push(v);
  }
  return key;
}

// W [C, M/group, k...] as oneDNN's deconvolution weights, in place.
dnnl::memory::desc weights_desc(const ConvTransposeGeometry& g, std::span<const std::int64_t> w_dims) {
  std::int64_t taps = 1;
  std::vector<std::int64_t> kernel_dims, kernel_strides(g.spatial);
  for (std::size_t i = 0; i < g.spatial; ++i) kernel_dims.push_back(w_dims[i + 2]);
  for (std::size_t i = g.spatial; i-- > 0;) {
    kernel_strides[i] = taps;
    taps *= kernel_dims[i];
  }
  const std::int64_t cpg = g.in_channels / g.group, mpg = g.out_channels / g.group;
  std::vector<std::int64_t> dims, strides;
  if (g.group > 1) {
    dims = {g.group, mpg, cpg};
    strides = {cpg * mpg * taps, taps, mpg * taps};
  } else {
    dims = {mpg, cpg};
    strides = {taps, mpg * taps};
  }
  dims.insert(dims.end(), kernel_dims.begin(), kernel_dims.end());
  strides.insert(strides.end(), kernel_strides.begin(), kernel_strides.end());
  return onednn::strided_desc(dims, strides);
}

// Creates the deconvolution for x of dims x_dims (its batch may be a chunk's).
CachedPrimitive make_deconv(const ConvTransposeGeometry& g, std::span<const std::int64_t> x_dims,
                            std::span<const std::int64_t> w_dims, bool has_bias) {
  dnnl::memory::dims strides, dilation, pad_l, pad_r;
  std::vector<std::int64_t> y_dims{x_dims[0], g.out_channels};
  for (std::size_t i = 0; i < g.spatial; ++i) {
    const ConvTransposeAxis& a = g.axes[i];
    std::int64_t end = 0;
    if (!onednn_pad_end(a, end)) throw dnnl::error(dnnl_invalid_arguments, "ConvTranspose padding overflows");
    strides.push_back(a.stride);
    dilation.push_back(a.dilation - 1);
    pad_l.push_back(a.pad_begin);
    pad_r.push_back(end);
    y_dims.push_back(a.out);
  }
  const dnnl::memory::desc x_md = onednn::row_major_desc(x_dims);
  const dnnl::memory::desc w_md = weights_desc(g, w_dims);
  const dnnl::memory::desc y_md = onednn::row_major_desc(y_dims);
  const std::array<std::int64_t, 1> bias_dims{g.out_channels};
  const dnnl::memory::desc b_md = has_bias ? onednn::row_major_desc(bias_dims) : dnnl::memory::desc();
  const dnnl::deconvolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                               dnnl::algorithm::deconvolution_direct, x_md, w_md, b_md, y_md,
                                               strides, dilation, pad_l, pad_r);
  const dnnl::deconvolution_forward::primitive_desc pd(desc, onednn::cpu_engine());
  CachedPrimitive entry{dnnl::deconvolution_forward(pd)};
  entry.add_argument(DNNL_ARG_SRC, x_md);
  entry.add_argument(DNNL_ARG_WEIGHTS, w_md);
  if (has_bias) entry.add_argument(DNNL_ARG_BIAS, b_md);
  entry.add_argument(DNNL_ARG_DST, y_md);
  return entry;
}

// The geometry when oneDNN can run it: f32 throughout, a positive batch,
// no negative begin padding, shapes that fit; nullopt otherwise (the
// reference kernel then runs, and throws where the input is wrong).
std::optional<ConvTransposeGeometry> plan(const ConvTransposeParams& p, const Tensor& x, const Tensor& w,
                                          const Tensor* b) {
  if (x.dtype() != DType::F32 || w.dtype() != DType::F32 || (b && b->dtype() != DType::F32)) return std::nullopt;
  try {
    ConvTransposeGeometry g = plan_conv_transpose(p, x.shape(), w.shape(), b);
    if (g.batch < 1 || x.numel() == 0 || w.numel() == 0 || !onednn::dense_size_fits(g.out_shape)) return std::nullopt;
    for (std::size_t i = 0; i < g.spatial; ++i) {
      std::int64_t end = 0;
      if (g.axes[i].pad_begin < 0 || !onednn_pad_end(g.axes[i], end)) return std::nullopt;
    }
    return g;
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

bool onednn_conv_transpose(const ConvTransposeParams& p, const Tensor& x, const Tensor& w, const Tensor* b,
                           Tensor& y) {
  onednn::thread_primitive_cache().count_call();
  if (&x == &y || &w == &y || b == &y) return false;
  const std::optional<ConvTransposeGeometry> planned = plan(p, x, w, b);
  if (!planned) return false;
  const ConvTransposeGeometry& g = *planned;
  const PrimitiveKey whole = deconv_key(g, x.shape(), w.shape(), b != nullptr);
  if (!whole.valid()) return false;
  const double flops = 2.0 * static_cast<double>(x.numel()) * static_cast<double>(w.numel() / w.dim(0)) *
                       static_cast<double>(g.out_channels / g.group);
  const onednn::SerialWhenSmall threads(flops, onednn::kParallelMinFlops);
  thread_local onednn::HotBatches hot;
  const std::vector<onednn::BatchChunk> chunks =
      onednn::batch_plan(x.dim(0), onednn::thread_primitive_cache().contains(whole), hot, whole);
  std::vector<std::int64_t> chunk_dims(x.shape().begin(), x.shape().end());
  try {
    y.reset(DType::F32, g.out_shape);
    const std::int64_t x_image = x.numel() / x.dim(0), y_image = y.numel() / y.dim(0);
    for (const onednn::BatchChunk& chunk : chunks) {
      chunk_dims[0] = chunk.images;
      const PrimitiveKey key = deconv_key(g, chunk_dims, w.shape(), b != nullptr);
      if (!key.valid()) return false;
      CachedPrimitive& prim = onednn::thread_primitive_cache().find_or_create(
          key, [&] { return make_deconv(g, chunk_dims, w.shape(), b != nullptr); });
      const float* x_chunk = x.data<float>() + chunk.first * x_image;
      float* y_chunk = y.data<float>() + chunk.first * y_image;
      if (b) {
        const std::array<const void*, 4> buffers{x_chunk, w.data<float>(), b->data<float>(), y_chunk};
        prim.execute(buffers);
      } else {
        const std::array<const void*, 3> buffers{x_chunk, w.data<float>(), y_chunk};
        prim.execute(buffers);
      }
    }
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace canary::kernels
