// ConvTranspose's geometry (see conv_transpose_geometry.h).
#include "kernels/conv_transpose_geometry.h"

#include <string>

#include "canary/error.h"

namespace canary::kernels {
namespace {

[[noreturn]] void fail(ErrorKind kind, const std::string& what) { throw Error(kind, "ConvTranspose: " + what); }

// Throws Error(Model) when an attribute list is neither empty nor of the expected length.
void check_length(const char* name, const std::vector<std::int64_t>& v, std::size_t want) {
  if (!v.empty() && v.size() != want)
    fail(ErrorKind::Model, std::string("attribute '") + name + "' expected " + std::to_string(want) +
                               " values, got " + std::to_string(v.size()));
}

std::int64_t at_or(const std::vector<std::int64_t>& v, std::size_t i, std::int64_t fallback) {
  return v.empty() ? fallback : v[i];
}

// Floor division by 2 (the split of a total padding, which may be negative).
std::int64_t floor_half(std::int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

// The natural output length: stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1.
std::int64_t natural_length(const ConvTransposeAxis& a, std::int64_t output_padding) {
  std::int64_t spread = 0, span = 0, total = 0;
  if (__builtin_mul_overflow(a.stride, a.in - 1, &spread) || __builtin_mul_overflow(a.kernel - 1, a.dilation, &span) ||
      __builtin_add_overflow(spread, span, &total) || __builtin_add_overflow(total, output_padding + 1, &total))
    fail(ErrorKind::Shape, "output length overflows int64 for input length " + std::to_string(a.in) + ", stride " +
                               std::to_string(a.stride) + ", kernel " + std::to_string(a.kernel) + ", dilation " +
                               std::to_string(a.dilation));
  return total;
}

// Resolves spatial axis i (input length `in`, kernel `k`).
ConvTransposeAxis plan_axis(const ConvTransposeParams& p, std::size_t i, std::size_t spatial, std::int64_t in,
                            std::int64_t k) {
  ConvTransposeAxis a;
  a.in = in;
  a.kernel = k;
  a.stride = at_or(p.strides, i, 1);
  a.dilation = at_or(p.dilations, i, 1);
  const std::int64_t output_padding = at_or(p.output_padding, i, 0);
  if (a.stride < 1 || a.dilation < 1 || output_padding < 0)
    fail(ErrorKind::Model, "strides and dilations must be >= 1 and output_padding >= 0, got stride " +
                               std::to_string(a.stride) + ", dilation " + std::to_string(a.dilation) +
                               ", output_padding " + std::to_string(output_padding));
  const std::int64_t natural = natural_length(a, output_padding);
  const bool same = p.auto_pad == AutoPad::SameUpper || p.auto_pad == AutoPad::SameLower;
  if (!p.output_shape.empty() || same) {
    // The pads follow from the requested length; explicit pads are ignored.
    std::int64_t target = 0;
    if (!p.output_shape.empty()) target = p.output_shape[i];
    else if (__builtin_mul_overflow(in, a.stride, &target))
      fail(ErrorKind::Shape, "SAME output length overflows int64 for input length " + std::to_string(in));
    if (target < 1)
      fail(ErrorKind::Model, "attribute 'output_shape' holds " + std::to_string(target) + ", expected >= 1");
    const std::int64_t total = natural - target;  // both in [1, 2^63): cannot overflow
    const std::int64_t half = floor_half(total);
    a.pad_begin = p.auto_pad == AutoPad::SameUpper ? half : total - half;
    a.pad_end = total - a.pad_begin;
    a.out = target;
    return a;
  }
  if (p.auto_pad == AutoPad::NotSet) {
    a.pad_begin = at_or(p.pads, i, 0);
    a.pad_end = at_or(p.pads, i + spatial, 0);
    if (a.pad_begin < 0 || a.pad_end < 0)
      fail(ErrorKind::Model,
           "pads must be >= 0, got " + std::to_string(a.pad_begin) + " and " + std::to_string(a.pad_end));
  }
  std::int64_t pads = 0;
  if (__builtin_add_overflow(a.pad_begin, a.pad_end, &pads) || natural - pads < 1)
    fail(ErrorKind::Shape, "output length <= 0 for input length " + std::to_string(in) + ", kernel " +
                               std::to_string(k) + ", stride " + std::to_string(a.stride) + ", pads " +
                               std::to_string(a.pad_begin) + "+" + std::to_string(a.pad_end));
  a.out = natural - pads;
  return a;
}

// Checks ranks, channels, groups, kernel_shape and the bias against x and w.
void check_inputs(const ConvTransposeParams& p, const Shape& x, const Shape& w, const Tensor* b) {
  if (x.size() < 3 || x.size() > 2 + kMaxConvTransposeSpatial)
    fail(ErrorKind::Shape, "input 'X' expected rank 3, 4 or 5, got " + shape_to_string(x));
  if (w.size() != x.size())
    fail(ErrorKind::Shape, "input 'W' expected rank " + std::to_string(x.size()) + ", got " + shape_to_string(w));
  if (p.group < 1) fail(ErrorKind::Model, "group must be >= 1, got " + std::to_string(p.group));
  if (x[1] != w[0] || w[0] % p.group != 0)
    fail(ErrorKind::Shape, "channels do not match: X " + shape_to_string(x) + ", W " + shape_to_string(w) +
                               " (W is [C, M/group, k...]), group " + std::to_string(p.group));
  const Shape w_kernel(w.begin() + 2, w.end());
  if (!p.kernel_shape.empty() && p.kernel_shape != w_kernel)
    fail(ErrorKind::Shape,
         "kernel_shape " + shape_to_string(p.kernel_shape) + " does not match W " + shape_to_string(w));
  std::int64_t out_channels = 0;
  if (__builtin_mul_overflow(w[1], p.group, &out_channels))
    fail(ErrorKind::Shape, "output channels overflow int64: W " + shape_to_string(w) + ", group " +
                               std::to_string(p.group));
  if (b && (b->rank() != 1 || b->dim(0) != out_channels))
    fail(ErrorKind::Shape, "input 'B' expected shape [" + std::to_string(out_channels) + "], got " +
                               shape_to_string(b->shape()));
}

}  // namespace

ConvTransposeGeometry plan_conv_transpose(const ConvTransposeParams& p, const Shape& x, const Shape& w,
                                          const Tensor* b) {
  check_inputs(p, x, w, b);
  const std::size_t spatial = x.size() - 2;
  check_length("strides", p.strides, spatial);
  check_length("dilations", p.dilations, spatial);
  check_length("pads", p.pads, 2 * spatial);
  check_length("output_padding", p.output_padding, spatial);
  check_length("output_shape", p.output_shape, spatial);
  ConvTransposeGeometry g;
  g.spatial = spatial;
  g.batch = x[0];
  g.in_channels = x[1];
  g.group = p.group;
  g.out_channels = w[1] * p.group;
  g.out_shape = {g.batch, g.out_channels};
  for (std::size_t i = 0; i < spatial; ++i) {
    g.axes[i] = plan_axis(p, i, spatial, x[i + 2], w[i + 2]);
    g.out_shape.push_back(g.axes[i].out);
  }
  return g;
}

}  // namespace canary::kernels
