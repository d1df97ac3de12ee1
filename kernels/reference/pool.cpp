// Reference pooling kernels: 1-D and 2-D MaxPool and AveragePool (pads,
// strides, dilations, auto_pad, ceil_mode, count_include_pad) and GlobalAveragePool.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"
#include "kernels/reference/channels_last.h"

namespace canary::kernels {
namespace {

// Both F32 and F64 accumulate in double: the "wide" accumulator of each element type.
using Accumulator = double;

// Geometry of one spatial axis after attributes and auto_pad are resolved.
struct PoolAxis {
  std::int64_t in = 1, kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0, out = 1;
};

// Full geometry; a 1-D pooling is planned as 2-D with a unit height axis.
struct PoolGeometry {
  std::int64_t batch = 0, channels = 0;
  PoolAxis h, w;
  Shape out_shape;
};

// The name of the op in messages.
const char* op_name(const PoolParams& p) { return p.op == PoolOp::Max ? "MaxPool" : "AveragePool"; }

// a + b, or Error(Shape) naming the op on int64 overflow.
std::int64_t add_checked(const PoolParams& p, std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    throw Error(ErrorKind::Shape, std::string(op_name(p)) + ": pooling geometry overflows int64");
  return r;
}

// a * b, or Error(Shape) naming the op on int64 overflow.
std::int64_t mul_checked(const PoolParams& p, std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    throw Error(ErrorKind::Shape, std::string(op_name(p)) + ": pooling geometry overflows int64");
  return r;
}

// Floor division for a positive divisor (rounds toward negative infinity).
std::int64_t floor_divide(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0 && a < 0) ? 1 : 0); }

// Throws Error(Model) when an attribute list is neither empty nor of the expected length.
void check_attribute_length(const PoolParams& p, const char* name, const std::vector<std::int64_t>& v,
                            std::size_t want, bool required) {
  if ((required || !v.empty()) && v.size() != want)
    throw Error(ErrorKind::Model, std::string(op_name(p)) + ": attribute '" + name + "' expected " +
                                      std::to_string(want) + " values, got " + std::to_string(v.size()));
}

// Attribute value i, or `fallback` when the list is empty.
std::int64_t attribute_at(const std::vector<std::int64_t>& v, std::size_t i, std::int64_t fallback) {
  return v.empty() ? fallback : v[i];
}

// The kernel's extent including dilation: dilation * (kernel - 1) + 1.
std::int64_t kernel_span(const PoolParams& p, const PoolAxis& a) {
  return add_checked(p, mul_checked(p, a.dilation, a.kernel - 1), 1);
}

// Output length under SAME and the padding split (extra at the end for UPPER).
void apply_same_padding(const PoolParams& p, PoolAxis& a) {
  a.out = a.in / a.stride + (a.in % a.stride != 0 ? 1 : 0);
  const std::int64_t covered = add_checked(p, mul_checked(p, a.out - 1, a.stride), kernel_span(p, a));
  const std::int64_t total = std::max<std::int64_t>(0, covered - a.in);
  const std::int64_t small = total / 2;
  a.pad_begin = p.auto_pad == AutoPad::SameUpper ? small : total - small;
  a.pad_end = total - a.pad_begin;
}

// Output length from explicit pads: (in + pads - span) / stride + 1, rounded
// down, or up in ceil mode without a last window that starts in the end padding.
void compute_output_length(const PoolParams& p, PoolAxis& a) {
  const std::int64_t span = kernel_span(p, a);
  const std::int64_t room = add_checked(p, add_checked(p, a.in, a.pad_begin), a.pad_end) - span;
  if (room < 0)
    throw Error(ErrorKind::Shape, std::string(op_name(p)) + ": input length " + std::to_string(a.in) + " plus pads " +
                                      std::to_string(a.pad_begin) + "+" + std::to_string(a.pad_end) +
                                      " is shorter than the kernel span " + std::to_string(span));
  if (!p.ceil_mode) {
    a.out = room / a.stride + 1;
    return;
  }
  a.out = room / a.stride + (room % a.stride != 0 ? 1 : 0) + 1;
  a.out = std::min(a.out, floor_divide(a.in + a.pad_begin - 1, a.stride) + 1);
}

// Resolves spatial axis `i` of `spatial` (input length `in`) from the params.
PoolAxis plan_axis(const PoolParams& p, std::size_t i, std::size_t spatial, std::int64_t in) {
  PoolAxis a;
  a.in = in;
  a.kernel = p.kernel_shape[i];
  a.stride = attribute_at(p.strides, i, 1);
  a.dilation = attribute_at(p.dilations, i, 1);
  if (a.kernel < 1 || a.stride < 1 || a.dilation < 1)
    throw Error(ErrorKind::Model, std::string(op_name(p)) + ": kernel_shape, strides and dilations must be >= 1, got " +
                                      "kernel " + std::to_string(a.kernel) + ", stride " + std::to_string(a.stride) +
                                      ", dilation " + std::to_string(a.dilation));
  if (p.auto_pad == AutoPad::SameUpper || p.auto_pad == AutoPad::SameLower) {
    apply_same_padding(p, a);
    return a;
  }
  if (p.auto_pad == AutoPad::NotSet) {
    a.pad_begin = attribute_at(p.pads, i, 0);
    a.pad_end = attribute_at(p.pads, i + spatial, 0);
    const std::int64_t span = kernel_span(p, a);
    if (a.pad_begin < 0 || a.pad_end < 0 || a.pad_begin >= span || a.pad_end >= span)
      throw Error(ErrorKind::Model, std::string(op_name(p)) + ": pads must be >= 0 and smaller than the kernel span " +
                                        std::to_string(span) + ", got " + std::to_string(a.pad_begin) + " and " +
                                        std::to_string(a.pad_end));
  }
  compute_output_length(p, a);
  return a;
}

// Validates x and the attribute lengths and resolves every axis into a 2-D geometry.
PoolGeometry plan_pool(const PoolParams& p, const Tensor& x) {
  if (x.rank() != 3 && x.rank() != 4)
    throw Error(ErrorKind::Shape, std::string(op_name(p)) + ": input 'X' expected rank 3 or 4, got " +
                                      shape_to_string(x.shape()));
  const std::size_t spatial = static_cast<std::size_t>(x.rank() - 2);
  check_attribute_length(p, "kernel_shape", p.kernel_shape, spatial, true);
  check_attribute_length(p, "strides", p.strides, spatial, false);
  check_attribute_length(p, "dilations", p.dilations, spatial, false);
  check_attribute_length(p, "pads", p.pads, 2 * spatial, false);
  PoolGeometry g;
  g.batch = x.dim(0);
  g.channels = x.dim(1);
  g.out_shape = {g.batch, g.channels};
  if (spatial == 2) {
    g.h = plan_axis(p, 0, spatial, x.dim(2));
    g.out_shape.push_back(g.h.out);
  }
  g.w = plan_axis(p, spatial - 1, spatial, x.dim(x.rank() - 1));
  g.out_shape.push_back(g.w.out);
  return g;
}

// The taps of one window on one axis that land in a half-open position range:
// indices first..last (empty when first > last).
struct TapRange {
  std::int64_t first = 0, last = -1;
  std::int64_t count() const { return last >= first ? last - first + 1 : 0; }
};

// Ceiling division for a positive divisor.
std::int64_t ceil_divide(std::int64_t a, std::int64_t b) { return -floor_divide(-a, b); }

// Taps t in [0, kernel) of window o with lo <= o*stride - pad_begin + t*dilation < hi,
// in closed form. lo >= -pad_begin and hi <= in + pad_end keep every difference in range.
TapRange taps_within(const PoolAxis& a, std::int64_t o, std::int64_t lo, std::int64_t hi) {
  const std::int64_t start = o * a.stride - a.pad_begin;  // in range: (out - 1) * stride <= in + pads
  TapRange r;
  r.first = std::max<std::int64_t>(0, ceil_divide(lo - start, a.dilation));
  r.last = hi - 1 - start < 0 ? -1 : std::min(a.kernel - 1, (hi - 1 - start) / a.dilation);
  return r;
}

// Taps of window o that land on real input elements.
TapRange real_taps(const PoolAxis& a, std::int64_t o) { return taps_within(a, o, 0, a.in); }

// Taps of window o that land inside the input extended by its pads.
TapRange padded_taps(const PoolAxis& a, std::int64_t o) {
  return taps_within(a, o, -a.pad_begin, a.in + a.pad_end);
}

// Input position of output index o and kernel tap k on one axis.
std::int64_t input_position(const PoolAxis& a, std::int64_t o, std::int64_t k) {
  return o * a.stride - a.pad_begin + k * a.dilation;
}

// Max over one window's real elements (-inf when none); NaN propagates.
template <typename T>
Accumulator max_window(const PoolGeometry& g, const T* plane, std::int64_t oh, std::int64_t ow) {
  Accumulator best = -std::numeric_limits<Accumulator>::infinity();
  const TapRange rh = real_taps(g.h, oh), rw = real_taps(g.w, ow);
  for (std::int64_t kh = rh.first; kh <= rh.last; ++kh) {
    const std::int64_t ih = input_position(g.h, oh, kh);
    for (std::int64_t kw = rw.first; kw <= rw.last; ++kw) {
      const Accumulator v = plane[ih * g.w.in + input_position(g.w, ow, kw)];
      if (std::isnan(v) || v > best) best = v;
    }
  }
  return best;
}

// Mean over one window: the sum of real elements divided by their count, or
// by the taps inside the padded input when count_include_pad.
template <typename T>
Accumulator average_window(const PoolParams& p, const PoolGeometry& g, const T* plane, std::int64_t oh,
                           std::int64_t ow) {
  Accumulator sum = 0;
  const TapRange rh = real_taps(g.h, oh), rw = real_taps(g.w, ow);
  for (std::int64_t kh = rh.first; kh <= rh.last; ++kh) {
    const std::int64_t ih = input_position(g.h, oh, kh);
    for (std::int64_t kw = rw.first; kw <= rw.last; ++kw)
      sum += Accumulator(plane[ih * g.w.in + input_position(g.w, ow, kw)]);
  }
  // Counts multiply in the accumulator type: a hostile kernel's padded tap product may exceed int64.
  const Accumulator real = Accumulator(rh.count()) * Accumulator(rw.count());
  const Accumulator padded = Accumulator(padded_taps(g.h, oh).count()) * Accumulator(padded_taps(g.w, ow).count());
  const Accumulator count = p.count_include_pad ? padded : real;
  return count == 0 ? std::numeric_limits<Accumulator>::quiet_NaN() : sum / count;
}

// Fills y for every batch entry, channel and output position.
template <typename T>
void run_pool(const PoolParams& p, const PoolGeometry& g, const Tensor& x, Tensor& y) {
  const T* px = x.data<T>();
  T* py = y.data<T>();
  const std::int64_t plane_size = g.h.in * g.w.in;
  for (std::int64_t nc = 0; nc < g.batch * g.channels; ++nc) {
    const T* plane = px + nc * plane_size;
    for (std::int64_t oh = 0; oh < g.h.out; ++oh)
      for (std::int64_t ow = 0; ow < g.w.out; ++ow)
        *py++ = T(p.op == PoolOp::Max ? max_window(g, plane, oh, ow) : average_window(p, g, plane, oh, ow));
  }
}

// Writes the mean of each of `planes` consecutive runs of `plane_size` elements.
template <typename T>
void run_global_average(const Tensor& x, std::int64_t planes, std::int64_t plane_size, Tensor& y) {
  const T* px = x.data<T>();
  T* py = y.data<T>();
  for (std::int64_t i = 0; i < planes; ++i) {
    Accumulator sum = 0;
    for (std::int64_t k = 0; k < plane_size; ++k) sum += Accumulator(px[i * plane_size + k]);
    py[i] = T(plane_size == 0 ? std::numeric_limits<Accumulator>::quiet_NaN() : sum / Accumulator(plane_size));
  }
}

// Throws Error(Input) unless x is f32 or f64.
void check_float(const char* op, const Tensor& x) {
  if (!is_floating(x.dtype()))
    throw Error(ErrorKind::Input, std::string(op) + ": unsupported dtype " + std::string(dtype_name(x.dtype())) +
                                      " (expected f32 or f64)");
}

}  // namespace

// Max or average pooling of x [N, C, (H,) W].
void pool(const PoolParams& p, const Tensor& x, Tensor& y) {
  if (p.channels_last)
    return detail::through_channels_first(x, y, [&](const Tensor& xf, Tensor& yf) {
      PoolParams first = p;
      first.channels_last = false;
      pool(first, xf, yf);
    });
  check_float(op_name(p), x);
  const PoolGeometry g = plan_pool(p, x);
  y.reset(x.dtype(), g.out_shape);
  if (x.dtype() == DType::F32)
    run_pool<float>(p, g, x, y);
  else
    run_pool<double>(p, g, x, y);
}

// Mean over every spatial axis of x [N, C, spatial...].
void global_average_pool(const Tensor& x, Tensor& y) {
  check_float("GlobalAveragePool", x);
  if (x.rank() < 3)
    throw Error(ErrorKind::Shape, "GlobalAveragePool: input 'X' expected rank >= 3, got " + shape_to_string(x.shape()));
  Shape out(x.shape().size(), 1);
  out[0] = x.dim(0);
  out[1] = x.dim(1);
  const std::int64_t planes = x.dim(0) * x.dim(1);
  const std::int64_t plane_size = planes == 0 ? 0 : x.numel() / planes;
  y.reset(x.dtype(), out);
  if (x.dtype() == DType::F32)
    run_global_average<float>(x, planes, plane_size, y);
  else
    run_global_average<double>(x, planes, plane_size, y);
}

}  // namespace canary::kernels
