// Tests of the reference Conv kernel against hand-computed values.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"
#include "tests/kernels/tensor_checks.h"

using canary::DType;
using canary::Error;
using canary::ErrorKind;
using canary::Shape;
using canary::Tensor;
namespace k = canary::kernels;

namespace {

// x [1, 1, 4, 4] holding 1..16 row by row.
Tensor image_4x4() {
  std::vector<float> v;
  for (int i = 1; i <= 16; ++i) v.push_back(float(i));
  return Tensor::from_vector(v, {1, 1, 4, 4});
}

// x [1, 1, 5] holding 1..5.
Tensor ramp5() { return Tensor::from_vector<float>({1, 2, 3, 4, 5}, {1, 1, 5}); }

}  // namespace

TEST_CASE("conv 1-D with pads and stride", "[unit][conv]") {
  // padded x = [0,1,2,3,4,5,0]; taps at 0,2,4 of w = [1,0,-1].
  k::ConvParams p;
  p.pads = {1, 1};
  p.strides = {2};
  const Tensor w = Tensor::from_vector<float>({1, 0, -1}, {1, 1, 3});
  Tensor y;
  k::conv(p, ramp5(), w, nullptr, y);
  canary::test::check_values(y, {1, 1, 3}, {-2, -2, 4});
  const Tensor b = Tensor::from_vector<float>({0.5f}, {1});
  k::conv(p, ramp5(), w, &b, y);
  canary::test::check_values(y, {1, 1, 3}, {-1.5, -1.5, 4.5});
}

TEST_CASE("conv 1-D with dilation and asymmetric pads", "[unit][conv]") {
  // padded x = [0,0,1,2,3,4,5]; w = [1,2,3] at dilation 2 spans 5 positions.
  // out[o] = p[o] + 2 p[o+2] + 3 p[o+4] = [0+2+9, 0+4+12, 1+6+15].
  k::ConvParams p;
  p.pads = {2, 0};
  p.dilations = {2};
  p.kernel_shape = {3};
  Tensor y;
  k::conv(p, ramp5(), Tensor::from_vector<float>({1, 2, 3}, {1, 1, 3}), nullptr, y);
  canary::test::check_values(y, {1, 1, 3}, {11, 16, 22});
}

TEST_CASE("conv 2-D 3x3 kernel on a 4x4 input", "[unit][conv]") {
  const Tensor ones = Tensor::from_vector<float>(std::vector<float>(9, 1.0f), {1, 1, 3, 3});
  k::ConvParams p;
  Tensor y;
  SECTION("no padding: sums of 3x3 windows") {
    k::conv(p, image_4x4(), ones, nullptr, y);
    canary::test::check_values(y, {1, 1, 2, 2}, {54, 63, 90, 99});
  }
  SECTION("pads 1 keep the size") {
    p.pads = {1, 1, 1, 1};
    k::conv(p, image_4x4(), ones, nullptr, y);
    REQUIRE(y.shape() == Shape{1, 1, 4, 4});
    CHECK(y.element_as_double(0) == 14);   // 1 + 2 + 5 + 6
    CHECK(y.element_as_double(3) == 22);   // 3 + 4 + 7 + 8
    CHECK(y.element_as_double(5) == 54);   // the first full window
    CHECK(y.element_as_double(15) == 54);  // 11 + 12 + 15 + 16
  }
  SECTION("a centre tap with pads 1 is the identity") {
    std::vector<float> centre(9, 0.0f);
    centre[4] = 1.0f;
    p.pads = {1, 1, 1, 1};
    k::conv(p, image_4x4(), Tensor::from_vector(centre, {1, 1, 3, 3}), nullptr, y);
    std::vector<double> want;
    for (int i = 1; i <= 16; ++i) want.push_back(i);
    canary::test::check_values(y, {1, 1, 4, 4}, want);
  }
  SECTION("two input channels, the second doubled") {
    std::vector<double> x;
    for (int c = 1; c <= 2; ++c)
      for (int i = 1; i <= 16; ++i) x.push_back(c * i);
    k::conv(p, Tensor::from_vector(x, {1, 2, 4, 4}),
            Tensor::from_vector<double>(std::vector<double>(18, 1.0), {1, 2, 3, 3}), nullptr, y);
    CHECK(y.dtype() == DType::F64);
    canary::test::check_values(y, {1, 1, 2, 2}, {162, 189, 270, 297}, 0.0);
  }
}

TEST_CASE("conv with groups and depthwise", "[unit][conv]") {
  k::ConvParams p;
  Tensor y;
  SECTION("depthwise with channel multiplier 2") {
    // c0 = [1,2,3] feeds m0, m1; c1 = [10,20,30] feeds m2, m3.
    p.group = 2;
    const Tensor x = Tensor::from_vector<float>({1, 2, 3, 10, 20, 30}, {1, 2, 3});
    const Tensor w = Tensor::from_vector<float>({1, 1, 1, -1, 1, 0, 0, 1}, {4, 1, 2});
    k::conv(p, x, w, nullptr, y);
    canary::test::check_values(y, {1, 4, 2}, {3, 5, -1, -1, 10, 20, 20, 30});
  }
  SECTION("two groups of two channels with bias") {
    // m0 = c0 + 2 c1 + 1; m1 = c2 - c3 - 1.
    p.group = 2;
    const Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 9}, {1, 4, 2});
    const Tensor w = Tensor::from_vector<float>({1, 2, 1, -1}, {2, 2, 1});
    const Tensor b = Tensor::from_vector<float>({1, -1}, {2});
    k::conv(p, x, w, &b, y);
    canary::test::check_values(y, {1, 2, 2}, {8, 11, -3, -4});
  }
  SECTION("depthwise 2-D over a batch of two") {
    // group == C == 2, 1x1 kernels scale each channel: [2, 3].
    p.group = 2;
    const Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 1, 2});
    const Tensor w = Tensor::from_vector<float>({2, 3}, {2, 1, 1, 1});
    k::conv(p, x, w, nullptr, y);
    canary::test::check_values(y, {2, 2, 1, 2}, {2, 4, 9, 12, 10, 12, 21, 24});
  }
}

TEST_CASE("conv auto_pad SAME_UPPER, SAME_LOWER and VALID", "[unit][conv]") {
  k::ConvParams p;
  Tensor y;
  const Tensor ones2 = Tensor::from_vector<float>({1, 1}, {1, 1, 2});
  SECTION("SAME_UPPER puts the extra pad at the end") {
    p.auto_pad = k::AutoPad::SameUpper;
    k::conv(p, ramp5(), ones2, nullptr, y);
    canary::test::check_values(y, {1, 1, 5}, {3, 5, 7, 9, 5});
  }
  SECTION("SAME_LOWER puts the extra pad at the start") {
    p.auto_pad = k::AutoPad::SameLower;
    k::conv(p, ramp5(), ones2, nullptr, y);
    canary::test::check_values(y, {1, 1, 5}, {1, 3, 5, 7, 9});
  }
  SECTION("SAME_UPPER with stride 2 gives ceil(in / stride) outputs") {
    // total pad (3-1)*2 + 3 - 5 = 2, one each side: [0,1,2,3,4,5,0].
    p.auto_pad = k::AutoPad::SameUpper;
    p.strides = {2};
    k::conv(p, ramp5(), Tensor::from_vector<float>({1, 1, 1}, {1, 1, 3}), nullptr, y);
    canary::test::check_values(y, {1, 1, 3}, {3, 9, 9});
  }
  SECTION("SAME_UPPER 2-D with stride 2") {
    // in 4, k 3, s 2: out 2, total pad 1 at the end of each axis.
    p.auto_pad = k::AutoPad::SameUpper;
    p.strides = {2, 2};
    k::conv(p, image_4x4(), Tensor::from_vector<float>(std::vector<float>(9, 1.0f), {1, 1, 3, 3}), nullptr, y);
    canary::test::check_values(y, {1, 1, 2, 2}, {54, 45, 72, 54});
  }
  SECTION("VALID ignores pads") {
    p.auto_pad = k::AutoPad::Valid;
    p.pads = {3, 3};
    k::conv(p, ramp5(), ones2, nullptr, y);
    canary::test::check_values(y, {1, 1, 4}, {3, 5, 7, 9});
  }
}

TEST_CASE("conv of an empty batch gives an empty output", "[unit][conv]") {
  Tensor y;
  k::conv(k::ConvParams{}, Tensor::empty(DType::F32, {0, 1, 5}), Tensor::empty(DType::F32, {2, 1, 3}), nullptr, y);
  CHECK(y.shape() == Shape{0, 2, 3});
  CHECK(y.numel() == 0);
}

TEST_CASE("conv rejects bad channels, groups, kernels and sizes", "[unit][conv]") {
  k::ConvParams p;
  Tensor y;
  const Tensor x3 = Tensor::empty(DType::F32, {1, 3, 5});
  canary::test::require_error(
      [&] {
        k::conv(p, x3, Tensor::empty(DType::F32, {1, 2, 3}), nullptr, y);
      },
      ErrorKind::Shape, {"Conv", "[1, 3, 5]", "[1, 2, 3]"});
  p.group = 2;
  canary::test::require_error(
      [&] {
        k::conv(p, Tensor::empty(DType::F32, {1, 2, 5}), Tensor::empty(DType::F32, {3, 1, 3}), nullptr, y);
      },
      ErrorKind::Shape, {"group 2"});
  p.group = 1;
  p.kernel_shape = {2};
  canary::test::require_error(
      [&] {
        k::conv(p, ramp5(), Tensor::empty(DType::F32, {1, 1, 3}), nullptr, y);
      },
      ErrorKind::Shape, {"kernel_shape", "[2]", "[1, 1, 3]"});
  p.kernel_shape = {};
  canary::test::require_error(
      [&] {
        k::conv(p, Tensor::empty(DType::F32, {1, 1, 2}), Tensor::empty(DType::F32, {1, 1, 3}), nullptr, y);
      },
      ErrorKind::Shape, {"input length 2", "kernel 3", "pads 0+0"});
  const Tensor b_bad = Tensor::empty(DType::F32, {2});
  canary::test::require_error(
      [&] {
        k::conv(p, ramp5(), Tensor::empty(DType::F32, {1, 1, 3}), &b_bad, y);
      },
      ErrorKind::Shape, {"'B'", "[1]", "[2]"});
  canary::test::require_error(
      [&] {
        k::conv(p, Tensor::empty(DType::F32, {1, 5}), Tensor::empty(DType::F32, {1, 3}), nullptr, y);
      },
      ErrorKind::Shape, {"rank"});
  canary::test::require_error(
      [&] {
        k::conv(p, Tensor::empty(DType::I64, {1, 1, 5}), Tensor::empty(DType::I64, {1, 1, 3}), nullptr, y);
      },
      ErrorKind::Input, {"Conv", "i64"});
  p.pads = {1};
  canary::test::require_error(
      [&] {
        k::conv(p, ramp5(), Tensor::empty(DType::F32, {1, 1, 3}), nullptr, y);
      },
      ErrorKind::Model, {"pads"});
}

TEST_CASE("conv with int64-overflowing pads, dilations, strides or groups is a shape error", "[unit][conv]") {
  const Tensor w = Tensor::from_vector<float>({1, 0, -1}, {1, 1, 3});
  const std::int64_t huge = std::int64_t{1} << 62;
  Tensor y;
  k::ConvParams pads;
  pads.pads = {huge, huge};
  canary::test::require_error([&] { k::conv(pads, ramp5(), w, nullptr, y); }, ErrorKind::Shape, {"overflows"});
  k::ConvParams dilation;
  dilation.dilations = {huge};
  canary::test::require_error([&] { k::conv(dilation, ramp5(), w, nullptr, y); }, ErrorKind::Shape, {"overflows"});
  k::ConvParams same;
  same.auto_pad = k::AutoPad::SameUpper;
  same.strides = {huge};
  same.dilations = {huge};
  canary::test::require_error([&] { k::conv(same, ramp5(), w, nullptr, y); }, ErrorKind::Shape, {"overflows"});
  k::ConvParams groups;
  groups.group = huge;
  canary::test::require_error([&] { k::conv(groups, ramp5(), w, nullptr, y); }, ErrorKind::Shape, {"channels"});
}

namespace {

// One output element as a per-point loop: channels, kernel rows, kernel
// columns in order, products summed in double, bias added last.
double conv_point(const std::vector<float>& x, const std::vector<float>& w, std::int64_t channels,
                  std::int64_t in_h, std::int64_t in_w, std::int64_t kh, std::int64_t kw, std::int64_t c_begin,
                  std::int64_t m, std::int64_t cpg, std::int64_t oh, std::int64_t ow, std::int64_t n,
                  const std::int64_t stride[2], const std::int64_t dilation[2], const std::int64_t pad[2]) {
  double acc = 0;
  for (std::int64_t c = 0; c < cpg; ++c)
    for (std::int64_t i = 0; i < kh; ++i) {
      const std::int64_t ih = oh * stride[0] - pad[0] + i * dilation[0];
      if (ih < 0 || ih >= in_h) continue;
      for (std::int64_t j = 0; j < kw; ++j) {
        const std::int64_t iw = ow * stride[1] - pad[1] + j * dilation[1];
        if (iw < 0 || iw >= in_w) continue;
        const double xv = x[static_cast<std::size_t>(((n * channels + c_begin + c) * in_h + ih) * in_w + iw)];
        const double wv = w[static_cast<std::size_t>(((m * cpg + c) * kh + i) * kw + j)];
        acc += xv * wv;
      }
    }
  return acc;
}

}  // namespace

TEST_CASE("conv sums each output in double in per-point order, bit for bit, over random geometries",
          "[unit][conv][differential]") {
  // The kernel adds one kernel tap to a whole output row at a time (the
  // vectorised loop); every element must still see the per-point order.
  std::mt19937 rng(2024);
  std::uniform_int_distribution<std::int64_t> small(1, 3), length(1, 19), pad(0, 3);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (int trial = 0; trial < 200; ++trial) {
    const std::int64_t group = small(rng), cpg = small(rng), mpg = small(rng), n = small(rng);
    const std::int64_t in_h = trial % 2 ? length(rng) : 1, in_w = length(rng);
    const std::int64_t kh = in_h == 1 ? 1 : small(rng), kw = small(rng);
    const std::int64_t stride[2] = {small(rng), small(rng)}, dilation[2] = {small(rng), small(rng)};
    const std::int64_t pads[2] = {in_h == 1 ? 0 : pad(rng), pad(rng)};
    const std::int64_t pads_end[2] = {in_h == 1 ? 0 : pad(rng), pad(rng)};
    // Padded length minus the kernel's span: the output length is room / stride + 1.
    const std::int64_t room_h = in_h + pads[0] + pads_end[0] - (kh - 1) * dilation[0] - 1;
    const std::int64_t room_w = in_w + pads[1] + pads_end[1] - (kw - 1) * dilation[1] - 1;
    if (room_h < 0 || room_w < 0) continue;
    const std::int64_t channels = group * cpg, out_channels = group * mpg;
    const bool two_d = in_h > 1 || trial % 2;
    std::vector<float> xv(static_cast<std::size_t>(n * channels * in_h * in_w)),
        wv(static_cast<std::size_t>(out_channels * cpg * kh * kw)), bv(static_cast<std::size_t>(out_channels));
    for (float& v : xv) v = value(rng);
    for (float& v : wv) v = value(rng);
    for (float& v : bv) v = value(rng);
    k::ConvParams p;
    p.group = group;
    Shape xs{n, channels}, ws{out_channels, cpg};
    if (two_d) {
      xs.push_back(in_h), ws.push_back(kh);
      p.strides = {stride[0], stride[1]}, p.dilations = {dilation[0], dilation[1]};
      p.pads = {pads[0], pads[1], pads_end[0], pads_end[1]};
    } else {
      p.strides = {stride[1]}, p.dilations = {dilation[1]}, p.pads = {pads[1], pads_end[1]};
    }
    xs.push_back(in_w), ws.push_back(kw);
    const Tensor x = Tensor::from_vector(xv, xs), w = Tensor::from_vector(wv, ws);
    const Tensor b = Tensor::from_vector(bv, {out_channels});
    Tensor y;
    k::conv(p, x, w, &b, y);
    const std::int64_t oh_count = two_d ? room_h / stride[0] + 1 : 1, ow_count = room_w / stride[1] + 1;
    CAPTURE(trial, group, cpg, mpg, in_h, in_w, kh, kw, stride[0], stride[1], dilation[0], dilation[1]);
    REQUIRE(y.numel() == n * out_channels * oh_count * ow_count);
    const std::int64_t s2[2] = {two_d ? stride[0] : 1, stride[1]}, d2[2] = {two_d ? dilation[0] : 1, dilation[1]};
    const std::int64_t p2[2] = {two_d ? pads[0] : 0, pads[1]};
    std::int64_t k_out = 0;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t m = 0; m < out_channels; ++m)
        for (std::int64_t oh = 0; oh < oh_count; ++oh)
          for (std::int64_t ow = 0; ow < ow_count; ++ow, ++k_out) {
            const double want = conv_point(xv, wv, channels, in_h, in_w, two_d ? kh : 1, kw, (m / mpg) * cpg, m, cpg,
                                           oh, ow, i, s2, d2, p2) + double(bv[static_cast<std::size_t>(m)]);
            REQUIRE(y.data<float>()[k_out] == static_cast<float>(want));
          }
  }
}
