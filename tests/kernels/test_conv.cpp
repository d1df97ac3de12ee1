// Tests of the reference Conv kernel against hand-computed values.
#include <catch2/catch.hpp>
#include <cmath>
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
