// Reference Conv kernel: 1-D and 2-D convolution with pads, strides, dilations, groups and auto_pad.
#include <algorithm>
#include <string>
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"
#include "kernels/reference/channels_last.h"
#include "kernels/reference/wide_sums.h"

namespace canary::kernels {
namespace {

// Both F32 and F64 accumulate in double: the "wide" accumulator of each element type.
using Accumulator = double;

// Geometry of one spatial axis after attributes and auto_pad are resolved.
struct ConvAxis {
  std::int64_t in = 1, kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0, out = 1;
};

// Full geometry; a 1-D convolution is planned as 2-D with a unit height axis.
struct ConvGeometry {
  std::int64_t batch = 0, channels = 0, out_channels = 0, group = 1;
  ConvAxis h, w;
  Shape out_shape;
};

// Throws Error(Model) when an attribute list is neither empty nor of the expected length.
void check_attribute_length(const char* name, const std::vector<std::int64_t>& v, std::size_t want) {
  if (!v.empty() && v.size() != want)
    throw Error(ErrorKind::Model, std::string("Conv: attribute '") + name + "' expected " + std::to_string(want) +
                                      " values, got " + std::to_string(v.size()));
}

// Attribute value i, or `fallback` when the list is empty.
std::int64_t attribute_at(const std::vector<std::int64_t>& v, std::size_t i, std::int64_t fallback) {
  return v.empty() ? fallback : v[i];
}

// Splits the SAME auto_pad total between begin and end (extra at the end for UPPER).
void apply_same_padding(AutoPad mode, ConvAxis& a) {
  const std::int64_t out = a.in / a.stride + (a.in % a.stride != 0 ? 1 : 0);
  std::int64_t covered = 0, span = 0, total = 0;
  if (__builtin_mul_overflow(out - 1, a.stride, &covered) ||
      __builtin_mul_overflow(a.kernel - 1, a.dilation, &span) || __builtin_add_overflow(covered, span, &total) ||
      __builtin_add_overflow(total, 1 - a.in, &total))
    throw Error(ErrorKind::Shape, "Conv: SAME padding overflows int64 for input length " + std::to_string(a.in) +
                                      ", kernel " + std::to_string(a.kernel) + ", stride " + std::to_string(a.stride) +
                                      ", dilation " + std::to_string(a.dilation));
  total = std::max<std::int64_t>(0, total);
  const std::int64_t small = total / 2;
  a.pad_begin = mode == AutoPad::SameUpper ? small : total - small;
  a.pad_end = total - a.pad_begin;
}

// Computes the output length of one axis; throws Error(Shape) when it would be empty.
void compute_output_length(ConvAxis& a) {
  std::int64_t span = 0, padded = 0, room = 0;
  if (__builtin_mul_overflow(a.kernel - 1, a.dilation, &span) || __builtin_add_overflow(span, 1, &span) ||
      __builtin_add_overflow(a.in, a.pad_begin, &padded) || __builtin_add_overflow(padded, a.pad_end, &padded) ||
      __builtin_sub_overflow(padded, span, &room))
    throw Error(ErrorKind::Shape, "Conv: output size overflows int64 for input length " + std::to_string(a.in) +
                                      ", kernel " + std::to_string(a.kernel) + " (dilation " +
                                      std::to_string(a.dilation) + "), pads " + std::to_string(a.pad_begin) + "+" +
                                      std::to_string(a.pad_end));
  if (room < 0)
    throw Error(ErrorKind::Shape, "Conv: output size <= 0 for input length " + std::to_string(a.in) + ", kernel " +
                                      std::to_string(a.kernel) + " (dilation " + std::to_string(a.dilation) +
                                      "), pads " + std::to_string(a.pad_begin) + "+" + std::to_string(a.pad_end));
  a.out = room / a.stride + 1;
}

// Resolves spatial axis `i` of `spatial` (input length `in`, kernel `k`) from the params.
ConvAxis plan_axis(const ConvParams& p, std::size_t i, std::size_t spatial, std::int64_t in, std::int64_t k) {
  ConvAxis a;
  a.in = in;
  a.kernel = k;
  a.stride = attribute_at(p.strides, i, 1);
  a.dilation = attribute_at(p.dilations, i, 1);
  if (a.stride < 1 || a.dilation < 1)
    throw Error(ErrorKind::Model, "Conv: strides and dilations must be >= 1, got stride " + std::to_string(a.stride) +
                                      ", dilation " + std::to_string(a.dilation));
  if (p.auto_pad == AutoPad::SameUpper || p.auto_pad == AutoPad::SameLower) {
    apply_same_padding(p.auto_pad, a);
  } else if (p.auto_pad == AutoPad::NotSet) {
    a.pad_begin = attribute_at(p.pads, i, 0);
    a.pad_end = attribute_at(p.pads, i + spatial, 0);
    if (a.pad_begin < 0 || a.pad_end < 0)
      throw Error(ErrorKind::Model,
                  "Conv: pads must be >= 0, got " + std::to_string(a.pad_begin) + " and " + std::to_string(a.pad_end));
  }
  compute_output_length(a);
  return a;
}

// Checks ranks, channels, groups and kernel_shape against x and w.
void check_conv_inputs(const ConvParams& p, const Tensor& x, const Tensor& w, const Tensor* b) {
  if (x.rank() != 3 && x.rank() != 4)
    throw Error(ErrorKind::Shape, "Conv: input 'X' expected rank 3 or 4, got " + shape_to_string(x.shape()));
  if (w.rank() != x.rank())
    throw Error(ErrorKind::Shape,
                "Conv: input 'W' expected rank " + std::to_string(x.rank()) + ", got " + shape_to_string(w.shape()));
  if (p.group < 1) throw Error(ErrorKind::Model, "Conv: group must be >= 1, got " + std::to_string(p.group));
  std::int64_t grouped_channels = 0;
  if (__builtin_mul_overflow(p.group, w.dim(1), &grouped_channels) || x.dim(1) != grouped_channels ||
      w.dim(0) % p.group != 0)
    throw Error(ErrorKind::Shape, "Conv: channels do not match: X " + shape_to_string(x.shape()) + ", W " +
                                      shape_to_string(w.shape()) + ", group " + std::to_string(p.group));
  const Shape w_kernel(w.shape().begin() + 2, w.shape().end());
  if (!p.kernel_shape.empty() && p.kernel_shape != w_kernel)
    throw Error(ErrorKind::Shape, "Conv: kernel_shape " + shape_to_string(p.kernel_shape) + " does not match W " +
                                      shape_to_string(w.shape()));
  if (b && (b->rank() != 1 || b->dim(0) != w.dim(0)))
    throw Error(ErrorKind::Shape, "Conv: input 'B' expected shape [" + std::to_string(w.dim(0)) + "], got " +
                                      shape_to_string(b->shape()));
}

// Validates the inputs and resolves every axis into a 2-D geometry.
ConvGeometry plan_conv(const ConvParams& p, const Tensor& x, const Tensor& w, const Tensor* b) {
  check_conv_inputs(p, x, w, b);
  const std::size_t spatial = static_cast<std::size_t>(x.rank() - 2);
  check_attribute_length("strides", p.strides, spatial);
  check_attribute_length("dilations", p.dilations, spatial);
  check_attribute_length("pads", p.pads, 2 * spatial);
  ConvGeometry g;
  g.batch = x.dim(0);
  g.channels = x.dim(1);
  g.out_channels = w.dim(0);
  g.group = p.group;
  g.out_shape = {g.batch, g.out_channels};
  if (spatial == 2) {
    g.h = plan_axis(p, 0, spatial, x.dim(2), w.dim(2));
    g.out_shape.push_back(g.h.out);
  }
  g.w = plan_axis(p, spatial - 1, spatial, x.dim(x.rank() - 1), w.dim(w.rank() - 1));
  g.out_shape.push_back(g.w.out);
  return g;
}

// Input position of output index o and kernel tap k on one axis (may fall in the padding).
std::int64_t input_position(const ConvAxis& a, std::int64_t o, std::int64_t k) {
  return o * a.stride - a.pad_begin + k * a.dilation;
}

// The output positions [lo, hi) of axis `a` whose input for kernel tap k lies
// inside the input (the rest read padding, which adds nothing).
struct TapRange {
  std::int64_t lo = 0, hi = 0;
};
TapRange valid_outputs(const ConvAxis& a, std::int64_t k) {
  const std::int64_t offset = k * a.dilation - a.pad_begin;  // input position of output 0
  // First o with o * stride + offset >= 0, and one past the last with o * stride + offset < in.
  const std::int64_t lo = offset >= 0 ? 0 : (-offset + a.stride - 1) / a.stride;
  const std::int64_t room = a.in - offset;  // o * stride < room
  const std::int64_t hi = room <= 0 ? 0 : std::min(a.out, (room + a.stride - 1) / a.stride);
  return {std::min(lo, hi), hi};
}

// One output row (fixed n, m, oh): for each channel and kernel tap in
// order, the tap's products are added to every output position of the row.
// Each position sums its products in the same order as a per-point loop
// would (channels, then kernel rows, then kernel columns), in double.
// `columns`: valid_outputs of each kernel column, the same for every row.
template <typename T>
void conv_row(const ConvGeometry& g, const T* x_n, const T* w_m, std::int64_t c_begin, std::int64_t oh,
              const std::vector<TapRange>& columns, Accumulator* acc) {
  const std::int64_t cpg = g.channels / g.group;
  std::fill(acc, acc + g.w.out, Accumulator(0));
  for (std::int64_t c = 0; c < cpg; ++c)
    for (std::int64_t kh = 0; kh < g.h.kernel; ++kh) {
      const std::int64_t ih = input_position(g.h, oh, kh);
      if (ih < 0 || ih >= g.h.in) continue;
      const T* x_row = x_n + ((c_begin + c) * g.h.in + ih) * g.w.in;
      const T* w_row = w_m + (c * g.h.kernel + kh) * g.w.kernel;
      for (std::int64_t kw = 0; kw < g.w.kernel; ++kw) {
        const TapRange r = columns[static_cast<std::size_t>(kw)];
        if (r.lo >= r.hi) continue;
        reference::accumulate_scaled(acc + r.lo, x_row + input_position(g.w, r.lo, kw), r.hi - r.lo, g.w.stride,
                                     Accumulator(w_row[kw]));
      }
    }
}

// Fills y for every batch entry, output channel and output position.
template <typename T>
void run_conv(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y) {
  const T* px = x.data<T>();
  const T* pw = w.data<T>();
  const T* pb = b ? b->data<T>() : nullptr;
  T* py = y.data<T>();
  const std::int64_t cpg = g.channels / g.group, mpg = g.out_channels / g.group;
  const std::int64_t x_image = g.channels * g.h.in * g.w.in, w_filter = cpg * g.h.kernel * g.w.kernel;
  std::vector<Accumulator> acc(static_cast<std::size_t>(g.w.out));
  std::vector<TapRange> columns;
  for (std::int64_t kw = 0; kw < g.w.kernel; ++kw) columns.push_back(valid_outputs(g.w, kw));
  for (std::int64_t n = 0; n < g.batch; ++n)
    for (std::int64_t m = 0; m < g.out_channels; ++m) {
      const Accumulator bias = pb ? Accumulator(pb[m]) : 0;
      const std::int64_t c_begin = (m / mpg) * cpg;
      for (std::int64_t oh = 0; oh < g.h.out; ++oh) {
        conv_row(g, px + n * x_image, pw + m * w_filter, c_begin, oh, columns, acc.data());
        for (std::int64_t ow = 0; ow < g.w.out; ++ow) *py++ = T(acc[static_cast<std::size_t>(ow)] + bias);
      }
    }
}

}  // namespace

// Convolution of x [N, C, (H,) W] with w [M, C/group, (kh,) kw] plus optional bias b [M].
void conv(const ConvParams& p, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y) {
  if (p.channels_last)
    return detail::through_channels_first(x, y, [&](const Tensor& xf, Tensor& yf) {
      ConvParams first = p;
      first.channels_last = false;
      conv(first, xf, w, b, yf);
    });
  if (x.dtype() != w.dtype() || (b && b->dtype() != x.dtype()))
    throw Error(ErrorKind::Input, "Conv: inputs have different dtypes: X " + x.type_string() + ", W " +
                                      w.type_string() + (b ? ", B " + b->type_string() : std::string()));
  if (!is_floating(x.dtype()))
    throw Error(ErrorKind::Input,
                "Conv: unsupported dtype " + std::string(dtype_name(x.dtype())) + " (expected f32 or f64)");
  const ConvGeometry g = plan_conv(p, x, w, b);
  y.reset(x.dtype(), g.out_shape);
  if (x.dtype() == DType::F32)
    run_conv<float>(g, x, w, b, y);
  else
    run_conv<double>(g, x, w, b, y);
}

}  // namespace canary::kernels
