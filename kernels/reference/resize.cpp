// Reference Resize (opset 13): nearest, linear and cubic interpolation with
// every coordinate transformation mode, as the ONNX operator's reference
// implementation computes it.
//
// That reference interpolates one axis at a time (the n-linear and n-cubic
// forms are products of 1-D weights), so this kernel does too: for each axis
// whose 1-D resampling is not the identity, every output position o gets its
// taps, n input indices and weights (n = 2 for nearest and linear, 4 for
// cubic), and one pass gathers them along that axis. The taps follow the
// reference exactly: the input coordinate x of o from the coordinate mode,
// ratio = x - floor(x) in (0, 1] (1 when x is whole, so the left neighbour
// is preferred), the n indices nearest x in the input padded by ceil(n/2)
// edge copies on each side, and with exclude_outside the weights of
// indices outside the input dropped and the rest renormalised. Under
// tf_crop_and_resize an output whose coordinate on any axis falls outside
// the input is the extrapolation value.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"
#include "kernels/reference/element_dispatch.h"

namespace canary::kernels {
namespace {

constexpr int kMaxTaps = 4;
// The bytes of one output position's taps: kMaxTaps indices and weights.
constexpr std::size_t kTapBytes = kMaxTaps * (sizeof(std::int64_t) + sizeof(double));

// One axis's resampling: output position o reads idx[o][k] with weight w[o][k].
struct AxisTaps {
  std::int64_t in = 0, out = 0;
  int n = 2;
  std::vector<std::array<std::int64_t, kMaxTaps>> idx;
  std::vector<std::array<double, kMaxTaps>> w;
  std::vector<bool> outside;  // tf_crop_and_resize: the coordinate is past the input
  bool identity = false;
};

// The weights of the n = 2 or 4 taps at `ratio` (in (0, 1]).
std::array<double, kMaxTaps> coefficients(const ResizeParams& p, double ratio, bool whole) {
  switch (p.mode) {
    case ResizeMode::Nearest: {
      bool right = true;  // a whole coordinate: the tap at x itself (the right one)
      if (!whole) {
        switch (p.nearest_mode) {
          case ResizeNearestMode::RoundPreferFloor: right = ratio > 0.5; break;
          case ResizeNearestMode::RoundPreferCeil: right = ratio >= 0.5; break;
          case ResizeNearestMode::Floor: right = false; break;
          case ResizeNearestMode::Ceil: right = true; break;
        }
      }
      return {right ? 0.0 : 1.0, right ? 1.0 : 0.0, 0.0, 0.0};
    }
    case ResizeMode::Linear: return {1.0 - ratio, ratio, 0.0, 0.0};
    case ResizeMode::Cubic: {
      const double a = p.cubic_coeff_a, r = ratio, s = 1.0 - ratio;
      return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
              ((a + 2) * r - (a + 3)) * r * r + 1,
              ((a + 2) * s - (a + 3)) * s * s + 1,
              ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
    }
  }
  return {};
}

// The input coordinate of output position o; `outside` set for a
// tf_crop_and_resize coordinate past the input. `scale` is the axis's scale
// and `width` = scale * in, both as the reference computes them.
double input_coordinate(const ResizeParams& p, std::int64_t o, std::int64_t in, double scale, double width,
                        double roi_start, double roi_end, bool& outside) {
  const double x = static_cast<double>(o), last = static_cast<double>(in - 1);
  outside = false;
  switch (p.coordinate_mode) {
    case ResizeCoordinateMode::HalfPixel: return (x + 0.5) / scale - 0.5;
    case ResizeCoordinateMode::PytorchHalfPixel: return width == 1.0 ? -0.5 : (x + 0.5) / scale - 0.5;
    case ResizeCoordinateMode::AlignCorners: return width == 1.0 ? 0.0 : x * last / (width - 1.0);
    case ResizeCoordinateMode::Asymmetric: return x / scale;
    case ResizeCoordinateMode::TfHalfPixelForNearest: return (x + 0.5) / scale;
    case ResizeCoordinateMode::TfCropAndResize: {
      const double c = (width == 1.0 ? (roi_end - roi_start) * last / 2.0
                                     : x * (roi_end - roi_start) * last / (width - 1.0)) +
                       roi_start * last;
      outside = !(c >= 0.0 && c <= last);  // a NaN roi is outside too
      return outside ? 0.0 : c;
    }
  }
  return x;
}

AxisTaps axis_taps(const ResizeParams& p, std::int64_t in, std::int64_t out, double scale, double roi_start,
                   double roi_end) {
  AxisTaps t;
  t.in = in;
  t.out = out;
  t.n = p.mode == ResizeMode::Cubic ? 4 : 2;
  t.idx.resize(static_cast<std::size_t>(out));
  t.w.resize(static_cast<std::size_t>(out));
  t.outside.assign(static_cast<std::size_t>(out), false);
  const double width = scale * static_cast<double>(in);
  const std::int64_t pad = t.n / 2;  // ceil(n / 2) edge copies each side
  bool identity = in == out && p.coordinate_mode != ResizeCoordinateMode::TfCropAndResize;
  for (std::int64_t o = 0; o < out; ++o) {
    bool outside = false;
    const double x = input_coordinate(p, o, in, scale, width, roi_start, roi_end, outside);
    t.outside[o] = outside;
    const bool whole = std::floor(x) == x;
    const double left = whole ? x - 1.0 : std::floor(x);  // the tap before x (ratio in (0, 1])
    std::array<double, kMaxTaps> w = coefficients(p, x - left, whole);
    // The n taps nearest x in the padded input: from left - (n/2 - 1), the
    // window kept inside the padded range [-pad, in + pad).
    std::int64_t first = static_cast<std::int64_t>(left) - (t.n / 2 - 1);
    first = std::clamp<std::int64_t>(first, -pad, in + pad - t.n);
    double total = 0.0;
    for (int k = 0; k < t.n; ++k) {
      const std::int64_t i = first + k;
      if (p.exclude_outside && (i < 0 || i >= in)) w[k] = 0.0;
      total += w[k];
      t.idx[o][k] = std::clamp<std::int64_t>(i, 0, in - 1);  // edge padding
    }
    if (p.exclude_outside && total != 0.0)
      for (int k = 0; k < t.n; ++k) w[k] /= total;
    t.w[o] = w;
    // The identity: each output reads its own position with weight 1.
    for (int k = 0; k < t.n && identity; ++k) identity = w[k] == 0.0 || (w[k] == 1.0 && t.idx[o][k] == o);
  }
  t.identity = identity;
  return t;
}

// y = x resampled along `axis` by the taps; x is [outer, in, inner].
template <typename T>
Tensor resample_axis(const Tensor& x, std::size_t axis, const AxisTaps& t) {
  Shape shape = x.shape();
  std::int64_t outer = 1, inner = 1;
  for (std::size_t k = 0; k < axis; ++k) outer *= shape[k];
  for (std::size_t k = axis + 1; k < shape.size(); ++k) inner *= shape[k];
  shape[axis] = t.out;
  Tensor y = Tensor::empty(x.dtype(), shape);
  const T* px = x.data<T>();
  T* py = y.data<T>();
  for (std::int64_t a = 0; a < outer; ++a) {
    const T* src = px + a * t.in * inner;
    T* dst = py + a * t.out * inner;
    for (std::int64_t o = 0; o < t.out; ++o) {
      const auto& idx = t.idx[o];
      const auto& w = t.w[o];
      for (std::int64_t j = 0; j < inner; ++j) {
        double sum = 0.0;
        for (int k = 0; k < t.n; ++k) sum += w[k] * static_cast<double>(src[idx[k] * inner + j]);
        dst[o * inner + j] = static_cast<T>(sum);
      }
    }
  }
  return y;
}

// Sets every element of y whose coordinate on any axis is outside to `value`.
template <typename T>
void extrapolate(Tensor& y, const std::vector<AxisTaps>& axes, double value) {
  const Shape& shape = y.shape();
  std::vector<std::int64_t> at(shape.size(), 0);
  T* py = y.data<T>();
  for (std::int64_t e = 0; e < y.numel(); ++e) {
    bool outside = false;
    for (std::size_t k = 0; k < shape.size() && !outside; ++k) outside = axes[k].outside[at[k]];
    if (outside) py[e] = static_cast<T>(value);
    for (std::size_t k = shape.size(); k-- > 0;) {
      if (++at[k] < shape[k]) break;
      at[k] = 0;
    }
  }
}

// A 1-D parameter tensor given and not empty.
bool given(const Tensor* t) { return t != nullptr && t->defined() && t->numel() > 0; }

// Reads a 1-D parameter of `length` entries as doubles.
std::vector<double> parameter(const Tensor& t, std::size_t length, const char* what) {
  if (t.rank() != 1 || static_cast<std::size_t>(t.numel()) != length)
    throw Error(ErrorKind::Shape, std::string("Resize: ") + what + " must be 1-D with " + std::to_string(length) +
                                      " entries, got " + t.type_string());
  std::vector<double> v(length);
  for (std::size_t k = 0; k < length; ++k) v[k] = t.element_as_double(static_cast<std::int64_t>(k));
  return v;
}

}  // namespace

void resize(const ResizeParams& p, const Tensor& x_in, const Tensor* roi, const Tensor* scales, const Tensor* sizes,
            Tensor& y) {
  const Tensor x = x_in;  // shared, so y may be x
  const std::size_t rank = x.shape().size();
  if (rank == 0) throw Error(ErrorKind::Shape, "Resize: X is a scalar; Resize needs at least one dim");
  if (given(scales) == given(sizes))
    throw Error(ErrorKind::Input, given(scales) ? "Resize: both scales and sizes are given; give one"
                                                : "Resize: neither scales nor sizes is given; give one");
  std::vector<std::int64_t> out(rank);
  std::vector<double> scale(rank);
  if (given(sizes)) {
    if (sizes->dtype() != DType::I64) throw Error(ErrorKind::Input, "Resize: sizes must be i64, got " + sizes->type_string());
    const std::vector<double> s = parameter(*sizes, rank, "sizes");
    for (std::size_t k = 0; k < rank; ++k) {
      out[k] = sizes->data<std::int64_t>()[k];
      if (out[k] < 0) throw Error(ErrorKind::Input, "Resize: size " + std::to_string(out[k]) + " of dim " +
                                                        std::to_string(k) + " is negative");
      scale[k] = x.shape()[k] == 0 ? 1.0 : s[k] / static_cast<double>(x.shape()[k]);
    }
  } else {
    // f32 as ONNX declares them; f64 once the fp64 reference mode has widened them (exactly).
    if (scales->dtype() != DType::F32 && scales->dtype() != DType::F64)
      throw Error(ErrorKind::Input, "Resize: scales must be f32, got " + scales->type_string());
    scale = parameter(*scales, rank, "scales");
    for (std::size_t k = 0; k < rank; ++k) {
      if (!(scale[k] > 0) || !std::isfinite(scale[k]))
        throw Error(ErrorKind::Input, "Resize: scale " + std::to_string(scale[k]) + " of dim " + std::to_string(k) +
                                          " is not positive");
      const double n = std::floor(scale[k] * static_cast<double>(x.shape()[k]));
      if (n > 9007199254740992.0)
        throw Error(ErrorKind::Input, "Resize: dim " + std::to_string(k) + " scaled by " + std::to_string(scale[k]) +
                                          " is too large");
      out[k] = static_cast<std::int64_t>(n);
    }
  }
  // The output must fit the tensor limit, and so must each axis's taps
  // (kTapBytes per output position): a hostile size is an error here,
  // before anything is allocated.
  const std::int64_t total = checked_numel(out);
  const std::size_t limit = tensor_allocation_limit();
  for (std::size_t k = 0; k < rank; ++k)
    if (static_cast<std::size_t>(out[k]) > limit / kTapBytes)
      throw Error(ErrorKind::Resource, "Resize: dim " + std::to_string(k) + " of " + std::to_string(out[k]) +
                                           " needs more interpolation taps than the tensor limit allows");
  if (total == 0) {
    y.reset(x.dtype(), out);
    return;
  }
  std::vector<double> box;  // roi: starts then ends
  if (p.coordinate_mode == ResizeCoordinateMode::TfCropAndResize) {
    if (!given(roi)) throw Error(ErrorKind::Input, "Resize: tf_crop_and_resize needs roi (input 1)");
    box = parameter(*roi, 2 * rank, "roi");
  }
  std::vector<AxisTaps> axes;
  for (std::size_t k = 0; k < rank; ++k) {
    const std::int64_t in = x.shape()[k];
    if ((in == 0 || out[k] == 0) && in != out[k])
      throw Error(ErrorKind::Input, "Resize: dim " + std::to_string(k) + " of " + std::to_string(in) +
                                        " cannot be resized to " + std::to_string(out[k]));
    axes.push_back(axis_taps(p, in, out[k], scale[k], box.empty() ? 0.0 : box[k], box.empty() ? 1.0 : box[rank + k]));
  }
  detail::dispatch_float(x.dtype(), "Resize", [&](auto tag) {
    using T = decltype(tag);
    Tensor cur = x;
    for (std::size_t k = 0; k < rank; ++k)
      if (!axes[k].identity) cur = resample_axis<T>(cur, k, axes[k]);
    // tf_crop_and_resize axes are never the identity, so cur is a fresh tensor here.
    if (p.coordinate_mode == ResizeCoordinateMode::TfCropAndResize) extrapolate<T>(cur, axes, p.extrapolation_value);
    y = std::move(cur);
  });
}

}  // namespace canary::kernels
