// Small-map convolutions as one product of gathered patches
// (kernels/onednn/conv_patches.h): which shapes take the path, its error
// against the fp64 reference in both layouts, with strides, dilations,
// bias and an epilogue, and that a batch size of its own creates nothing.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "canary/tensor.h"
#include "kernels/onednn.h"
#include "kernels/onednn/conv_patches.h"
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

// Calls that ran on a shape-class product (the patch path is one of them).
std::uint64_t class_calls() { return k::onednn_cache_stats().shape_class_calls; }
std::uint64_t class_misses() { return k::onednn_cache_stats().misses; }

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

struct Case {
  std::int64_t n, c, m, hw, stride, dilation;
};

k::ConvParams params_of(const Case& t, bool channels_last) {
  k::ConvParams p;
  p.pads = {t.dilation, t.dilation, t.dilation, t.dilation};
  p.strides = {t.stride, t.stride};
  p.dilations = {t.dilation, t.dilation};
  p.channels_last = channels_last;
  return p;
}

}  // namespace

TEST_CASE("the patch product suits small maps with large weights", "[unit][onednn]") {
  CHECK(o::patch_product_suits(shape_of(2, 512, 512, 3, 3, 1)));   // a ResNet's last stage at 96x96
  CHECK(o::patch_product_suits(shape_of(8, 512, 512, 4, 3, 1)));   // 16 points per image
  CHECK(o::patch_product_suits(shape_of(2, 256, 512, 6, 3, 2)));   // 4.5 MiB, onto 3x3
  CHECK_FALSE(o::patch_product_suits(shape_of(2, 256, 256, 4, 3, 1)));  // 2.25 MiB of weights
  CHECK_FALSE(o::patch_product_suits(shape_of(2, 512, 512, 5, 3, 1)));  // 25 points per image
  CHECK_FALSE(o::patch_product_suits(shape_of(2, 512, 512, 7, 3, 1)));
  o::BlockedConvShape grouped = shape_of(2, 512, 512, 3, 3, 1);
  grouped.weights = {2, 256, 256, 3, 3};
  CHECK_FALSE(o::patch_product_suits(grouped));
}

TEST_CASE("patch products match the fp64 reference in both layouts", "[unit][differential][onednn]") {
  std::mt19937 rng(93);
  k::Epilogue relu;
  relu.append({k::EpilogueOp::Relu});
  for (const bool channels_last : {false, true}) {
    for (const Case& t : {Case{2, 512, 512, 3, 1, 1}, Case{3, 256, 512, 6, 2, 1}, Case{1, 512, 512, 4, 1, 2}}) {
      INFO((channels_last ? "channels-last" : "channels-first") << ", N " << t.n << " C " << t.c << " " << t.hw
                                                                << "x" << t.hw << " stride " << t.stride
                                                                << " dilation " << t.dilation);
      const Shape x_shape = channels_last ? Shape{t.n, t.hw, t.hw, t.c} : Shape{t.n, t.c, t.hw, t.hw};
      const Tensor x = normal_tensor(rng, x_shape, 1.0);
      const Tensor w = normal_tensor(rng, {t.m, t.c, 3, 3}, 1.0 / std::sqrt(9.0 * static_cast<double>(t.c)));
      const Tensor b = normal_tensor(rng, {t.m}, 0.5);
      const k::ConvParams p = params_of(t, channels_last);
      Tensor want;
      const Tensor b64 = as_f64(b);
      k::conv(p, as_f64(x), as_f64(w), &b64, want);
      for (std::int64_t i = 0; i < want.numel(); ++i) want.data<double>()[i] = std::max(0.0, want.data<double>()[i]);
      Tensor got;
      const std::uint64_t before = class_calls();
      REQUIRE(k::onednn_conv(p, x, w, &b, got, true, relu));
      CHECK(class_calls() == before + 1);
      CHECK(error_of_scale(want, got) < 2e-6);
    }
  }
}

TEST_CASE("a patch product serves a new batch size without creating a primitive", "[unit][onednn]") {
  std::mt19937 rng(94);
  const std::int64_t c = 512, m = 512, hw = 3;
  const Tensor w = normal_tensor(rng, {m, c, 3, 3}, 0.02);
  const Case t{2, c, m, hw, 1, 1};
  const k::ConvParams p = params_of(t, false);
  Tensor y;
  REQUIRE(k::onednn_conv(p, normal_tensor(rng, {2, c, hw, hw}, 1.0), w, nullptr, y, true));
  const std::uint64_t misses = class_misses();
  for (const std::int64_t n : {1, 5, 3}) {
    const Tensor x = normal_tensor(rng, {n, c, hw, hw}, 1.0);
    Tensor want;
    k::conv(p, as_f64(x), as_f64(w), nullptr, want);
    REQUIRE(k::onednn_conv(p, x, w, nullptr, y, true));
    CHECK(error_of_scale(want, y) < 2e-6);
  }
  CHECK(class_misses() == misses);
}

TEST_CASE("a non-finite input or non-constant weights take the direct kernel", "[unit][differential][onednn]") {
  std::mt19937 rng(95);
  const std::int64_t n = 2, c = 512, m = 512, hw = 3;
  Tensor x = normal_tensor(rng, {n, c, hw, hw}, 1.0);
  const Tensor w = normal_tensor(rng, {m, c, 3, 3}, 0.02);
  const k::ConvParams p = params_of(Case{n, c, m, hw, 1, 1}, false);
  Tensor want, got;
  // Non-constant weights: their transposed copy could not be kept.
  std::uint64_t before = class_calls();
  k::conv(p, as_f64(x), as_f64(w), nullptr, want);
  REQUIRE(k::onednn_conv(p, x, w, nullptr, got, false));
  CHECK(class_calls() == before);
  CHECK(error_of_scale(want, got) < 2e-6);
  // An Inf: the gathered zeros of the padding would meet it in the product's sums.
  x.data<float>()[4] = std::numeric_limits<float>::infinity();
  k::conv(p, x, w, nullptr, want);
  before = class_calls();
  REQUIRE(k::onednn_conv(p, x, w, nullptr, got, true));
  CHECK(class_calls() == before);
  std::int64_t mismatches = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    const double a = want.element_as_double(i), g = got.element_as_double(i);
    if (std::isnan(a) != std::isnan(g) || (std::isfinite(a) && !(std::fabs(a - g) <= 1e-4 * std::fabs(a) + 1e-5)))
      ++mismatches;
  }
  CHECK(mismatches == 0);
  // The same convolution on finite input takes the patch path (the checks above are not vacuous).
  x.data<float>()[4] = 1.0f;
  before = class_calls();
  REQUIRE(k::onednn_conv(p, x, w, nullptr, got, true));
  CHECK(class_calls() == before + 1);
}
