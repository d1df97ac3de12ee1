// Reference ConvTranspose: each output element gathers the input elements
// that reach it (o = i * stride + k * dilation - pad_begin on every axis),
// summed in double, plus the bias. Geometry: kernels/conv_transpose_geometry.h.
#include <array>
#include <string>
#include <vector>

#include "canary/error.h"
#include "kernels/conv_transpose_geometry.h"
#include "kernels/reference.h"
#include "kernels/reference/element_dispatch.h"

namespace canary::kernels {
namespace {

// For one axis, the input position each (output position, kernel tap) pair
// reads, or -1 where that tap does not land on an input element.
std::vector<std::int64_t> tap_sources(const ConvTransposeAxis& a) {
  std::vector<std::int64_t> sources(static_cast<std::size_t>(a.out * a.kernel), -1);
  for (std::int64_t o = 0; o < a.out; ++o)
    for (std::int64_t k = 0; k < a.kernel; ++k) {
      const std::int64_t scaled = o + a.pad_begin - k * a.dilation;  // i * stride
      if (scaled < 0 || scaled % a.stride != 0 || scaled / a.stride >= a.in) continue;
      sources[static_cast<std::size_t>(o * a.kernel + k)] = scaled / a.stride;
    }
  return sources;
}

// The geometry as exactly three spatial axes, unit ones in front of the real ones.
std::array<ConvTransposeAxis, 3> three_axes(const ConvTransposeGeometry& g) {
  std::array<ConvTransposeAxis, 3> axes{};
  const std::size_t lead = 3 - g.spatial;
  for (std::size_t i = 0; i < g.spatial; ++i) axes[lead + i] = g.axes[i];
  return axes;
}

template <typename T>
void run_conv_transpose(const ConvTransposeGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y) {
  const std::array<ConvTransposeAxis, 3> ax = three_axes(g);
  std::array<std::vector<std::int64_t>, 3> src;
  for (std::size_t i = 0; i < 3; ++i) src[i] = tap_sources(ax[i]);
  const std::int64_t cpg = g.in_channels / g.group, mpg = g.out_channels / g.group;
  const std::int64_t in_plane = ax[0].in * ax[1].in * ax[2].in;
  const std::int64_t taps = ax[0].kernel * ax[1].kernel * ax[2].kernel;
  const T* px = x.data<T>();
  const T* pw = w.data<T>();
  const T* pb = b ? b->data<T>() : nullptr;
  T* py = y.data<T>();
  for (std::int64_t n = 0; n < g.batch; ++n)
    for (std::int64_t m = 0; m < g.out_channels; ++m) {
      const std::int64_t group = m / mpg, m_in_group = m % mpg;
      const T* x_group = px + (n * g.in_channels + group * cpg) * in_plane;
      // W [C, M/group, k...]: channel c of the group, output channel m_in_group.
      const T* w_group = pw + (group * cpg * mpg + m_in_group) * taps;
      for (std::int64_t od = 0; od < ax[0].out; ++od)
        for (std::int64_t oh = 0; oh < ax[1].out; ++oh)
          for (std::int64_t ow = 0; ow < ax[2].out; ++ow) {
            double acc = pb ? double(pb[m]) : 0.0;
            for (std::int64_t kd = 0; kd < ax[0].kernel; ++kd) {
              const std::int64_t id = src[0][static_cast<std::size_t>(od * ax[0].kernel + kd)];
              if (id < 0) continue;
              for (std::int64_t kh = 0; kh < ax[1].kernel; ++kh) {
                const std::int64_t ih = src[1][static_cast<std::size_t>(oh * ax[1].kernel + kh)];
                if (ih < 0) continue;
                for (std::int64_t kw = 0; kw < ax[2].kernel; ++kw) {
                  const std::int64_t iw = src[2][static_cast<std::size_t>(ow * ax[2].kernel + kw)];
                  if (iw < 0) continue;
                  const std::int64_t at = (id * ax[1].in + ih) * ax[2].in + iw;
                  const std::int64_t tap = (kd * ax[1].kernel + kh) * ax[2].kernel + kw;
                  for (std::int64_t c = 0; c < cpg; ++c)
                    acc += double(x_group[c * in_plane + at]) * double(w_group[c * mpg * taps + tap]);
                }
              }
            }
            *py++ = T(acc);
          }
    }
}

}  // namespace

void conv_transpose(const ConvTransposeParams& p, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y) {
  if (x.dtype() != w.dtype() || (b && b->dtype() != x.dtype()))
    throw Error(ErrorKind::Input, "ConvTranspose: inputs have different dtypes: X " + x.type_string() + ", W " +
                                      w.type_string() + (b ? ", B " + b->type_string() : std::string()));
  const ConvTransposeGeometry g = plan_conv_transpose(p, x.shape(), w.shape(), b);
  detail::dispatch_float(x.dtype(), "ConvTranspose", [&](auto zero) {
    using T = decltype(zero);
    y.reset(x.dtype(), g.out_shape);
    run_conv_transpose<T>(g, x, w, b, y);
  });
}

}  // namespace canary::kernels
