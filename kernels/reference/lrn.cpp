// Reference LRN kernel: local response normalisation across channels, each
// element divided by a power of the scaled sum of squares in its channel window.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"

namespace canary::kernels {
namespace {

// Both F32 and F64 sum the squares in double: the "wide" accumulator of each element type.
using Accumulator = double;

// The channels of x [N, C, spatial...] and the elements of one channel's plane.
struct LrnDims {
  std::int64_t batch = 0, channels = 0, plane = 0;
};

// Throws Error(Input), (Shape) or (Model) unless x and the window fit; returns the dims.
LrnDims check_lrn(const LrnParams& p, const Tensor& x) {
  if (!is_floating(x.dtype()))
    throw Error(ErrorKind::Input,
                "LRN: unsupported dtype " + std::string(dtype_name(x.dtype())) + " (expected f32 or f64)");
  if (x.rank() < 3)
    throw Error(ErrorKind::Shape,
                "LRN: input 'X' expected rank >= 3 [N, C, spatial...], got " + shape_to_string(x.shape()));
  if (p.size < 1) throw Error(ErrorKind::Model, "LRN: size must be >= 1, got " + std::to_string(p.size));
  LrnDims d{x.dim(0), x.dim(1), 0};
  d.plane = d.batch == 0 || d.channels == 0 ? 0 : x.numel() / (d.batch * d.channels);
  return d;
}

// y[n, c, i] = x[n, c, i] / (bias + alpha / size * sum of x[n, k, i]^2 over the window of c)^beta.
// The window [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] is clipped to the channels,
// so an even size reaches one channel further up than down.
template <typename T>
void run_lrn(const LrnParams& p, const LrnDims& d, const T* x, T* y) {
  const std::int64_t below = (p.size - 1) / 2, above = p.size / 2;
  const Accumulator scale = p.alpha / static_cast<Accumulator>(p.size);
  std::vector<Accumulator> sums(static_cast<std::size_t>(d.plane));
  for (std::int64_t n = 0; n < d.batch; ++n)
    for (std::int64_t c = 0; c < d.channels; ++c) {
      std::fill(sums.begin(), sums.end(), Accumulator(0));
      const std::int64_t first = std::max<std::int64_t>(0, c - below);
      const std::int64_t last = std::min(d.channels - 1, c + above);
      for (std::int64_t k = first; k <= last; ++k) {
        const T* xk = x + (n * d.channels + k) * d.plane;
        for (std::int64_t i = 0; i < d.plane; ++i) sums[i] += Accumulator(xk[i]) * Accumulator(xk[i]);
      }
      const std::int64_t base = (n * d.channels + c) * d.plane;
      for (std::int64_t i = 0; i < d.plane; ++i)
        y[base + i] = T(Accumulator(x[base + i]) / std::pow(p.bias + scale * sums[i], p.beta));
    }
}

}  // namespace

// Normalises x [N, C, spatial...] across channels.
void lrn(const LrnParams& p, const Tensor& x, Tensor& y) {
  const LrnDims d = check_lrn(p, x);
  y.reset(x.dtype(), x.shape());
  if (x.dtype() == DType::F32)
    run_lrn(p, d, x.data<float>(), y.data<float>());
  else
    run_lrn(p, d, x.data<double>(), y.data<double>());
}

}  // namespace canary::kernels
