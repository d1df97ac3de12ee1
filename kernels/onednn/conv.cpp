// oneDNN convolution_forward for 1-D and 2-D f32 Conv on plain ncw/nchw layouts.
//
// Attributes are resolved exactly like the reference kernel (auto_pad SAME
// splits the total padding with the extra at the end for SAME_UPPER), then
// mapped to oneDNN: dilation - 1, begin/end pads as padding_l/padding_r and
// groups as goiw/goihw weights (the ONNX [M, C/group, k...] buffer read as
// [group, M/group, C/group, k...]). Invalid shapes or attributes return false
// so the reference kernel throws its own error. Under BF16 precision
// (kernels/onednn/precision.h) x and w are read rounded; the bias stays f32.
// An epilogue (EpilogueOp) runs as eltwise post-ops on either path.
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/onednn.h"
#include "kernels/onednn/bf16_operands.h"
#include "kernels/onednn/conv_blocked.h"
#include "kernels/onednn/conv_patches.h"
#include "kernels/onednn/conv_tiled.h"
#include "kernels/onednn/engine.h"
#include "kernels/onednn/epilogue.h"
#include "kernels/onednn/plain_layout.h"
#include "kernels/onednn/primitive_cache.h"
#include "kernels/onednn/threading.h"

namespace canary::kernels {
namespace {

using onednn::CachedPrimitive;
using onednn::OperandEncoding;
using onednn::OperandSlot;
using onednn::PrimitiveKey;
using onednn::PrimitiveKind;

// One spatial axis after attributes and auto_pad are resolved.
struct ConvAxis {
  std::int64_t in = 1, kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0, out = 1;
};

// A convolution in oneDNN's terms: spatial axes, channels, groups, output shape.
struct ConvPlan {
  std::size_t spatial = 0;
  std::array<ConvAxis, 2> axes{};
  std::int64_t batch = 0, channels = 0, out_channels = 0, group = 1;
  bool has_bias = false;
  std::array<std::int64_t, 4> out{};

  std::span<const std::int64_t> out_shape() const { return {out.data(), spatial + 2}; }
};

// Attribute value i, or `fallback` when the list is empty.
std::int64_t attribute_at(const std::vector<std::int64_t>& v, std::size_t i, std::int64_t fallback) {
  return v.empty() ? fallback : v[i];
}

// Splits the SAME total padding like the reference kernel (extra at the end for
// SAME_UPPER); false when the arithmetic overflows (the reference then throws).
bool apply_same_padding(AutoPad mode, ConvAxis& a) {
  const std::int64_t out = a.in / a.stride + (a.in % a.stride != 0 ? 1 : 0);
  std::int64_t covered = 0, span = 0, total = 0;
  if (__builtin_mul_overflow(out - 1, a.stride, &covered) || __builtin_mul_overflow(a.kernel - 1, a.dilation, &span) ||
      __builtin_add_overflow(covered, span, &total) || __builtin_add_overflow(total, 1 - a.in, &total))
    return false;
  total = std::max<std::int64_t>(0, total);
  const std::int64_t small = total / 2;
  a.pad_begin = mode == AutoPad::SameUpper ? small : total - small;
  a.pad_end = total - a.pad_begin;
  return true;
}

// The output length of an axis; false when it would be empty or the arithmetic overflows.
bool compute_output_length(ConvAxis& a) {
  std::int64_t span = 0, padded = 0, room = 0;
  if (__builtin_mul_overflow(a.kernel - 1, a.dilation, &span) || __builtin_add_overflow(span, 1, &span) ||
      __builtin_add_overflow(a.in, a.pad_begin, &padded) || __builtin_add_overflow(padded, a.pad_end, &padded) ||
      __builtin_sub_overflow(padded, span, &room) || room < 0)
    return false;
  a.out = room / a.stride + 1;
  return true;
}

// Resolves spatial axis i; false on attributes or sizes the reference rejects.
bool plan_axis(const ConvParams& p, std::size_t i, std::size_t spatial, std::int64_t in, std::int64_t k, ConvAxis& a) {
  a.in = in;
  a.kernel = k;
  a.stride = attribute_at(p.strides, i, 1);
  a.dilation = attribute_at(p.dilations, i, 1);
  if (a.stride < 1 || a.dilation < 1) return false;
  if (p.auto_pad == AutoPad::SameUpper || p.auto_pad == AutoPad::SameLower) {
    if (!apply_same_padding(p.auto_pad, a)) return false;
  } else if (p.auto_pad == AutoPad::NotSet) {
    a.pad_begin = attribute_at(p.pads, i, 0);
    a.pad_end = attribute_at(p.pads, i + spatial, 0);
    if (a.pad_begin < 0 || a.pad_end < 0) return false;
  }
  return compute_output_length(a);
}

// Checks ranks, channels, groups, kernel_shape, bias and attribute lengths like the reference.
bool check_inputs(const ConvParams& p, const Tensor& x, const Tensor& w, const Tensor* b) {
  if (x.rank() != 3 && x.rank() != 4) return false;
  if (w.rank() != x.rank() || p.group < 1) return false;
  std::int64_t grouped_channels = 0;
  if (__builtin_mul_overflow(p.group, w.dim(1), &grouped_channels) || x.dim(1) != grouped_channels ||
      w.dim(0) % p.group != 0)
    return false;
  if (!p.kernel_shape.empty() && !std::equal(p.kernel_shape.begin(), p.kernel_shape.end(), w.shape().begin() + 2,
                                             w.shape().end()))
    return false;
  if (b && (b->rank() != 1 || b->dim(0) != w.dim(0))) return false;
  const std::size_t spatial = static_cast<std::size_t>(x.rank() - 2);
  const auto length_ok = [](const std::vector<std::int64_t>& v, std::size_t want) {
    return v.empty() || v.size() == want;
  };
  return length_ok(p.strides, spatial) && length_ok(p.dilations, spatial) && length_ok(p.pads, 2 * spatial);
}

// Validates and resolves the geometry; false where the reference kernel would throw.
bool plan_conv(const ConvParams& p, const Tensor& x, const Tensor& w, const Tensor* b, ConvPlan& g) {
  if (!check_inputs(p, x, w, b)) return false;
  g.spatial = static_cast<std::size_t>(x.rank() - 2);
  g.batch = x.dim(0);
  g.channels = x.dim(1);
  g.out_channels = w.dim(0);
  g.group = p.group;
  g.has_bias = b != nullptr;
  g.out[0] = g.batch;
  g.out[1] = g.out_channels;
  for (std::size_t i = 0; i < g.spatial; ++i) {
    const int axis = static_cast<int>(i) + 2;
    if (!plan_axis(p, i, g.spatial, x.dim(axis), w.dim(axis), g.axes[i])) return false;
    g.out[i + 2] = g.axes[i].out;
  }
  return true;
}

// The cache key: operand encoding, input and weight dims, group, bias, each resolved axis and the epilogue.
PrimitiveKey conv_key(const ConvPlan& g, const Tensor& x, const Tensor& w, OperandEncoding e,
                      const Epilogue& epilogue) {
  PrimitiveKey key(PrimitiveKind::Conv, e);
  key.push_list(x.shape());
  key.push_list(w.shape());
  key.push(g.group);
  key.push(g.has_bias);
  for (std::size_t i = 0; i < g.spatial; ++i) {
    const ConvAxis& a = g.axes[i];
    for (std::int64_t v : {a.stride, a.dilation, a.pad_begin, a.pad_end}) key.push(v);
  }
  onednn::push_epilogue(key, epilogue);
  return key;
}

// Weight dims: ONNX [M, C/g, k...], or [g, M/g, C/g, k...] when grouped.
dnnl::memory::dims weight_dims(const ConvPlan& g, const Tensor& w) {
  dnnl::memory::dims dims(w.shape().begin(), w.shape().end());
  if (g.group == 1) return dims;
  dims[0] = g.out_channels / g.group;
  dims.insert(dims.begin(), g.group);
  return dims;
}

// Creates the convolution primitive for a plan on plain layouts (x and y
// channels-last when asked), x and w of encoding e, the epilogue as post-ops.
CachedPrimitive make_conv(const ConvPlan& g, const Tensor& x, const Tensor& w, OperandEncoding e,
                          const Epilogue& epilogue, bool channels_last = false) {
  dnnl::memory::dims strides, dilations, pad_l, pad_r;
  for (std::size_t i = 0; i < g.spatial; ++i) {
    strides.push_back(g.axes[i].stride);
    dilations.push_back(g.axes[i].dilation - 1);
    pad_l.push_back(g.axes[i].pad_begin);
    pad_r.push_back(g.axes[i].pad_end);
  }
  const auto plain = [&](std::span<const std::int64_t> dims) {
    return channels_last ? onednn::channels_last_desc(dims) : onednn::row_major_desc(dims);
  };
  const dnnl::memory::desc x_md = onednn::operand_desc(plain(x.shape()), e);
  const dnnl::memory::desc w_md = onednn::operand_desc(onednn::row_major_desc(weight_dims(g, w)), e);
  const dnnl::memory::desc y_md = plain(g.out_shape());
  const std::int64_t bias_dims[1] = {g.out_channels};
  const dnnl::memory::desc b_md = g.has_bias ? onednn::row_major_desc(bias_dims) : dnnl::memory::desc();
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                             x_md, w_md, b_md, y_md, strides, dilations, pad_l, pad_r);
  const dnnl::convolution_forward::primitive_desc pd(desc, onednn::epilogue_attributes(epilogue),
                                                     onednn::cpu_engine());
  CachedPrimitive entry{dnnl::convolution_forward(pd)};
  entry.add_argument(DNNL_ARG_SRC, x_md);
  entry.add_argument(DNNL_ARG_WEIGHTS, w_md);
  entry.add_argument(DNNL_ARG_DST, y_md);
  if (g.has_bias) entry.add_argument(DNNL_ARG_BIAS, b_md);
  return entry;
}

// The tiled channels-last path serves 1-D convolutions with stride 1 and one group.
bool tiled_applies(const ConvPlan& g) { return g.spatial == 1 && g.group == 1 && g.axes[0].stride == 1; }

// The tiled path's shape of a plan, with operands of encoding e.
onednn::TiledConvShape tiled_shape(const ConvPlan& g, OperandEncoding e, const Epilogue& epilogue) {
  const ConvAxis& a = g.axes[0];
  onednn::TiledConvShape s;
  s.batch = g.batch;
  s.channels = g.channels;
  s.out_channels = g.out_channels;
  s.width = a.in;
  s.kernel = a.kernel;
  s.dilation = a.dilation;
  s.pad_begin = a.pad_begin;
  s.out = a.out;
  s.has_bias = g.has_bias;
  s.encoding = e;
  s.epilogue = epilogue;
  return s;
}

// The blocked path's description of a plan (f32 operands).
onednn::BlockedConvShape blocked_shape(const ConvPlan& g, const Tensor& x, const Tensor& w, const Epilogue& epilogue) {
  onednn::BlockedConvShape s;
  s.src.assign(x.shape().begin(), x.shape().end());
  s.weights = weight_dims(g, w);
  s.dst.assign(g.out_shape().begin(), g.out_shape().end());
  for (std::size_t i = 0; i < g.spatial; ++i) {
    s.strides.push_back(g.axes[i].stride);
    s.dilations.push_back(g.axes[i].dilation - 1);
    s.pad_l.push_back(g.axes[i].pad_begin);
    s.pad_r.push_back(g.axes[i].pad_end);
  }
  s.has_bias = g.has_bias;
  s.epilogue = epilogue;
  return s;
}

// Multiply-adds of a planned convolution, counted twice: every output sums
// one output channel's weights times inputs.
double conv_flops(const ConvPlan& g, const Tensor& w) {
  double outputs = 1.0;
  for (std::int64_t d : g.out_shape()) outputs *= static_cast<double>(d);
  return 2.0 * outputs * static_cast<double>(w.numel() / g.out_channels);
}

// What the finiteness of a convolution's operands allows: oneDNN's post-ops
// for the epilogue (epilogue_applies), and the paths that run on finite
// operands only (Winograd, the patch product). The operands are scanned at
// most once, and only when one of them asks.
struct Finiteness {
  bool epilogue_applies = false;
  bool operands = false;
};

// True when a path that needs finite operands could run the convolution.
bool finite_only_suits(const onednn::BlockedConvShape& s) {
  return onednn::winograd_suits(s) || onednn::patch_product_suits(s);
}

Finiteness check_finiteness(const ConvPlan& g, const Tensor& x, const Tensor& w, const Tensor* b,
                            bool weights_are_constant, const Epilogue& epilogue, bool finite_only_shape) {
  const onednn::ContractionBound bound{&x, &w, w.numel() / g.out_channels, 1.0, b, 1.0, weights_are_constant};
  const bool keeps_nan = onednn::epilogue_keeps_nan(epilogue);
  const bool finite_only_possible =
      finite_only_shape && onednn::current_operand_encoding() == OperandEncoding::F32;
  Finiteness f;
  if (!keeps_nan || finite_only_possible) f.operands = onednn::contraction_stays_finite(bound);
  f.epilogue_applies = keeps_nan || f.operands;
  return f;
}

// Runs a planned convolution with x and w of encoding e into y: on the tiled
// path where it applies, else on oneDNN's blocked layouts (f32), else on
// plain layouts; false when the key does not fit, throws dnnl::error.
bool run_conv(const ConvPlan& g, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y,
              bool weights_are_constant, OperandEncoding e, const Epilogue& epilogue,
              const onednn::BlockedConvShape& blocked) {
  try {
    if (tiled_applies(g) && onednn::tiled_conv1d(tiled_shape(g, e, epilogue), x, w, b, y, weights_are_constant))
      return true;
  } catch (const dnnl::error&) {
    // The plain path below may still apply.
  }
  const PrimitiveKey key = conv_key(g, x, w, e, epilogue);
  if (!key.valid()) return false;
  if (e == OperandEncoding::F32) {
    if (onednn::patch_product_conv(blocked, x, w, b, y, weights_are_constant)) return true;
    if (onednn::blocked_conv(blocked, x, w, b, y, weights_are_constant)) return true;
  }
  CachedPrimitive& prim =
      onednn::thread_primitive_cache().find_or_create(key, [&] { return make_conv(g, x, w, e, epilogue); });
  y.reset(DType::F32, g.out_shape());
  const std::array<const void*, 4> buffers{onednn::encode_operand(x.data<float>(), x.numel(), e, OperandSlot::Source),
                                           onednn::encode_operand(w.data<float>(), w.numel(), e, OperandSlot::Weights),
                                           y.raw(), b ? b->raw() : nullptr};
  prim.execute(std::span<const void* const>(buffers.data(), b ? 4 : 3));
  return true;
}

// A channels-last 1-D convolution on the tiled path, in the precision's encoding.
bool tiled_channels_last(const ConvPlan& g, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y,
                         bool weights_are_constant, const Epilogue& epilogue) {
  return onednn::run_with_encoding(onednn::current_operand_encoding(), [&](OperandEncoding e) {
    onednn::TiledConvShape s = tiled_shape(g, e, epilogue);
    s.channels_last = true;
    return onednn::tiled_conv1d(s, x, w, b, y, weights_are_constant);
  });
}

// A channels-last convolution (x [N, spatial..., C]): planned on
// channels-first dims, run on the tiled path where it applies, else on the
// blocked path with channels-last buffers (f32 only; anything else is the
// reference kernel's, through transposes).
bool channels_last_conv(const ConvParams& p, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y,
                        bool weights_are_constant, const Epilogue& epilogue) {
  if (x.rank() < 3) return false;
  const Tensor dims = onednn::channels_first_view(x);
  ConvPlan g;
  if (!plan_conv(p, dims, w, b, g) || !onednn::dense_size_fits(g.out_shape())) return false;
  if (g.batch == 0 || g.out_channels == 0 || x.numel() == 0 || w.numel() == 0) return false;
  onednn::BlockedConvShape s = blocked_shape(g, dims, w, epilogue);
  s.channels_last = true;
  const Finiteness finite = check_finiteness(g, x, w, b, weights_are_constant, epilogue, finite_only_suits(s));
  if (!finite.epilogue_applies) return false;
  s.operands_finite = finite.operands;
  const onednn::SerialWhenSmall threads(conv_flops(g, w));
  if (tiled_applies(g) && tiled_channels_last(g, x, w, b, y, weights_are_constant, epilogue)) return true;
  if (onednn::current_operand_encoding() != OperandEncoding::F32) return false;
  PrimitiveKey key = conv_key(g, dims, w, OperandEncoding::F32, epilogue);
  key.push(1);  // channels-last buffers
  key.push(s.operands_finite ? 1 : 0);
  if (!key.valid()) return false;
  try {
    if (onednn::patch_product_conv(s, x, w, b, y, weights_are_constant)) return true;
    if (onednn::blocked_conv(s, x, w, b, y, weights_are_constant)) return true;
    // No direct kernel (grouped, not depthwise): oneDNN's gemm path on the channels-last buffers.
    CachedPrimitive& prim = onednn::thread_primitive_cache().find_or_create(
        key, [&] { return make_conv(g, dims, w, OperandEncoding::F32, epilogue, true); });
    y.reset(DType::F32, onednn::channels_last_dims(g.out_shape()));
    const std::array<const void*, 4> buffers{x.raw(), w.raw(), y.raw(), b ? b->raw() : nullptr};
    prim.execute(std::span<const void* const>(buffers.data(), b ? 4 : 3));
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace

// oneDNN convolution into y, or false when the case does not apply.
bool onednn_conv(const ConvParams& p, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y,
                 bool weights_are_constant, const Epilogue& epilogue) {
  onednn::thread_primitive_cache().count_call();
  if (x.dtype() != DType::F32 || w.dtype() != DType::F32 || (b && b->dtype() != DType::F32)) return false;
  if (p.channels_last) return channels_last_conv(p, x, w, b, y, weights_are_constant, epilogue);
  ConvPlan g;
  if (!plan_conv(p, x, w, b, g)) return false;
  if (!onednn::dense_size_fits(g.out_shape())) return false;  // the reference reports the size
  if (g.batch == 0 || g.out_channels == 0) {
    y.reset(DType::F32, g.out_shape());
    return true;
  }
  if (x.numel() == 0 || w.numel() == 0) return false;  // empty sums: the reference writes the bias
  onednn::BlockedConvShape blocked = blocked_shape(g, x, w, epilogue);
  const Finiteness finite =
      check_finiteness(g, x, w, b, weights_are_constant, epilogue, finite_only_suits(blocked));
  if (!finite.epilogue_applies) return false;
  blocked.operands_finite = finite.operands;
  const onednn::SerialWhenSmall threads(conv_flops(g, w));
  return onednn::run_with_encoding(onednn::current_operand_encoding(), [&](OperandEncoding e) {
    return run_conv(g, x, w, b, y, weights_are_constant, e, epilogue, blocked);
  });
}

}  // namespace canary::kernels
