// Winograd convolutions on oneDNN's blocked path (kernels/onednn/conv_blocked.h):
// which shapes take them, their error against the fp64 reference, and that a
// non-finite input never reaches them.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "canary/tensor.h"
#include "kernels/onednn.h"
#include "kernels/onednn/conv_blocked.h"
#include "kernels/reference.h"

using canary::DType;
using canary::Shape;
using canary::Tensor;
namespace k = canary::kernels;
namespace o = canary::kernels::onednn;

namespace {

Tensor normal_tensor(std::mt19937& rng, const Shape& shape, double scale) {
  std::normal_distribution<double> dist(0.0, scale);
  Tensor t = Tensor::empty(DType::F32, shape);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(dist(rng));
  return t;
}

Tensor as_f64(const Tensor& t) {
  std::vector<double> v(static_cast<std::size_t>(t.numel()));
  for (std::int64_t i = 0; i < t.numel(); ++i) v[static_cast<std::size_t>(i)] = t.element_as_double(i);
  return Tensor::from_vector<double>(v, t.shape());
}

// Largest |got - want| over the largest |want|.
double error_of_scale(const Tensor& want, const Tensor& got) {
  REQUIRE(got.shape() == want.shape());
  double err = 0, scale = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    err = std::max(err, std::fabs(got.element_as_double(i) - want.element_as_double(i)));
    scale = std::max(scale, std::fabs(want.element_as_double(i)));
  }
  return err / scale;
}

std::uint64_t winograd_calls() { return k::onednn_cache_stats().winograd_conv_calls; }

k::ConvParams same_3x3(bool channels_last) {
  k::ConvParams p;
  p.pads = {1, 1, 1, 1};
  p.channels_last = channels_last;
  return p;
}

o::BlockedConvShape shape_of(std::int64_t n, std::int64_t c, std::int64_t m, std::int64_t hw, std::int64_t k,
                             std::int64_t stride) {
  o::BlockedConvShape s;
  const std::int64_t out = (hw + 2 * (k / 2) - k) / stride + 1;
  s.src = {n, c, hw, hw};
  s.weights = {m, c, k, k};
  s.dst = {n, m, out, out};
  s.strides = {stride, stride};
  s.dilations = {0, 0};
  s.pad_l = s.pad_r = {k / 2, k / 2};
  return s;
}

}  // namespace

TEST_CASE("Winograd suits 3x3 stride-1 convolutions with enough channels and output points", "[unit][onednn]") {
  CHECK(o::winograd_suits(shape_of(8, 32, 64, 32, 3, 1)));
  CHECK(o::winograd_suits(shape_of(2, 64, 64, 24, 3, 1)));
  CHECK(o::winograd_suits(shape_of(2, 16, 64, 24, 3, 1)));
  CHECK_FALSE(o::winograd_suits(shape_of(8, 3, 32, 64, 3, 1)));    // a first layer: 3 input channels
  CHECK_FALSE(o::winograd_suits(shape_of(8, 16, 32, 32, 3, 1)));   // 512 channel pairs
  CHECK_FALSE(o::winograd_suits(shape_of(8, 64, 16, 32, 3, 1)));   // 16 output channels
  CHECK_FALSE(o::winograd_suits(shape_of(2, 256, 256, 6, 3, 1)));  // 72 output points over the batch
  CHECK_FALSE(o::winograd_suits(shape_of(64, 64, 64, 3, 3, 1)));   // a 3x3 output per image
  CHECK_FALSE(o::winograd_suits(shape_of(8, 32, 64, 32, 3, 2)));   // stride 2
  CHECK_FALSE(o::winograd_suits(shape_of(8, 32, 64, 32, 5, 1)));   // 5x5
  o::BlockedConvShape dilated = shape_of(8, 32, 64, 32, 3, 1);
  dilated.dilations = {1, 1};
  CHECK_FALSE(o::winograd_suits(dilated));
}

TEST_CASE("Winograd convolutions stay within a few f32 roundings of the fp64 reference",
          "[unit][differential][onednn]") {
  std::mt19937 rng(91);
  for (const bool channels_last : {false, true}) {
    for (const std::int64_t channels : {32, 64}) {
      INFO((channels_last ? "channels-last" : "channels-first") << ", " << channels << " input channels");
      const std::int64_t n = 2, m = 32, hw = 16;
      const Shape x_shape = channels_last ? Shape{n, hw, hw, channels} : Shape{n, channels, hw, hw};
      const Tensor x = normal_tensor(rng, x_shape, 1.0);
      const Tensor w = normal_tensor(rng, {m, channels, 3, 3}, 1.0 / std::sqrt(9.0 * static_cast<double>(channels)));
      const Tensor b = normal_tensor(rng, {m}, 0.1);
      const k::ConvParams p = same_3x3(channels_last);
      Tensor want, got;
      const Tensor b64 = as_f64(b);
      k::conv(p, as_f64(x), as_f64(w), &b64, want);
      const std::uint64_t before = winograd_calls();
      REQUIRE(k::onednn_conv(p, x, w, &b, got, true));
      CHECK(winograd_calls() == before + 1);
      // Direct f32 kernels measure 4e-7..9e-7 here, Winograd up to 2x that.
      CHECK(error_of_scale(want, got) < 4e-6);
    }
  }
}

TEST_CASE("a non-finite input runs on the direct kernel and matches the reference", "[unit][differential][onednn]") {
  std::mt19937 rng(92);
  const std::int64_t n = 2, c = 32, m = 32, hw = 16;
  Tensor x = normal_tensor(rng, {n, c, hw, hw}, 1.0);
  const Tensor w = normal_tensor(rng, {m, c, 3, 3}, 0.05);
  // One Inf: in Winograd's tile transforms it would make NaN of the outputs
  // around it that do not read it.
  x.data<float>()[5 * hw + 5] = std::numeric_limits<float>::infinity();
  const k::ConvParams p = same_3x3(false);
  Tensor want, got;
  k::conv(p, x, w, nullptr, want);
  const std::uint64_t before = winograd_calls();
  REQUIRE(k::onednn_conv(p, x, w, nullptr, got, true));
  CHECK(winograd_calls() == before);
  std::int64_t nan_mismatches = 0, finite_mismatches = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    const double a = want.element_as_double(i), g = got.element_as_double(i);
    if (std::isnan(a) != std::isnan(g)) ++nan_mismatches;
    else if (std::isfinite(a) && !(std::fabs(a - g) <= 1e-4 * std::fabs(a) + 1e-5)) ++finite_mismatches;
  }
  CHECK(nan_mismatches == 0);
  CHECK(finite_mismatches == 0);
  // The same convolution on finite input does take Winograd (the check above is not vacuous).
  x.data<float>()[5 * hw + 5] = 1.0f;
  REQUIRE(k::onednn_conv(p, x, w, nullptr, got, true));
  CHECK(winograd_calls() == before + 1);
}
