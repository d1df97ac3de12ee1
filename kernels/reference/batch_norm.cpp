// Reference BatchNormalization kernel, inference form: per-channel affine
// normalisation with the running mean and variance.
#include <cmath>
#include <string>

#include "canary/error.h"
#include "kernels/reference.h"

namespace canary::kernels {
namespace {

// Both F32 and F64 compute in double: the "wide" accumulator of each element type.
using Accumulator = double;

// Throws Error(Input) or (Shape) unless a per-channel input is x's dtype and shape [C].
void check_channel_input(const char* name, const Tensor& t, const Tensor& x) {
  if (t.dtype() != x.dtype())
    throw Error(ErrorKind::Input, std::string("BatchNormalization: input '") + name + "' expected dtype " +
                                      std::string(dtype_name(x.dtype())) + ", got " + t.type_string());
  if (t.rank() != 1 || t.dim(0) != x.dim(1))
    throw Error(ErrorKind::Shape, std::string("BatchNormalization: input '") + name + "' expected shape [" +
                                      std::to_string(x.dim(1)) + "] (channels of X " + shape_to_string(x.shape()) +
                                      "), got " + shape_to_string(t.shape()));
}

// y[n, c, i] = (x - mean[c]) * scale[c] / sqrt(var[c] + epsilon) + bias[c].
template <typename T>
void run_batch_norm(double epsilon, const Tensor& x, const Tensor& scale, const Tensor& bias, const Tensor& mean,
                    const Tensor& var, Tensor& y) {
  const std::int64_t batch = x.dim(0), channels = x.dim(1);
  const std::int64_t plane = channels == 0 || batch == 0 ? 0 : x.numel() / (batch * channels);
  const T *px = x.data<T>(), *ps = scale.data<T>(), *pb = bias.data<T>(), *pm = mean.data<T>(), *pv = var.data<T>();
  T* py = y.data<T>();
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t c = 0; c < channels; ++c) {
      const Accumulator factor = Accumulator(ps[c]) / std::sqrt(Accumulator(pv[c]) + epsilon);
      const Accumulator shift = Accumulator(pb[c]) - Accumulator(pm[c]) * factor;
      const std::int64_t base = (n * channels + c) * plane;
      for (std::int64_t i = 0; i < plane; ++i) py[base + i] = T(Accumulator(px[base + i]) * factor + shift);
    }
}

}  // namespace

// Normalises x [N, C, ...] per channel with the given statistics.
void batch_norm(const BatchNormParams& p, const Tensor& x, const Tensor& scale, const Tensor& bias,
                const Tensor& mean, const Tensor& var, Tensor& y) {
  if (!is_floating(x.dtype()))
    throw Error(ErrorKind::Input, "BatchNormalization: unsupported dtype " + std::string(dtype_name(x.dtype())) +
                                      " (expected f32 or f64)");
  if (x.rank() < 2)
    throw Error(ErrorKind::Shape,
                "BatchNormalization: input 'X' expected rank >= 2 [N, C, ...], got " + shape_to_string(x.shape()));
  check_channel_input("scale", scale, x);
  check_channel_input("B", bias, x);
  check_channel_input("input_mean", mean, x);
  check_channel_input("input_var", var, x);
  y.reset(x.dtype(), x.shape());
  if (x.dtype() == DType::F32)
    run_batch_norm<float>(p.epsilon, x, scale, bias, mean, var, y);
  else
    run_batch_norm<double>(p.epsilon, x, scale, bias, mean, var, y);
}

}  // namespace canary::kernels
