// Tests of ConvTranspose: the reference kernel on hand-computed 1-D cases
// (strides, pads, output_padding, output_shape, auto_pad, dilations,
// groups, bias, f64), the errors it reports for bad input, and the oneDNN
// deconvolution against the reference on random 1-D to 3-D geometries,
// including batches run as power-of-two chunks and a derived negative end
// padding.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "canary/error.h"
#include "canary/tensor.h"
#include "kernels/onednn.h"
#include "kernels/reference.h"
#include "tests/kernels/random_tensors.h"
#include "tests/kernels/tensor_checks.h"

using namespace canary;
using namespace canary::kernels;
using canary::test::check_values;
using canary::test::make;
using canary::test::require_error;

namespace {

// x = [1, 2, 3] as [1, 1, 3] and w = [1, 10] as [1, 1, 2]: each input
// element writes itself and ten times itself, `stride` apart.
const Tensor& x123() {
  static const Tensor x = make<float>({1, 2, 3}, {1, 1, 3});
  return x;
}
const Tensor& w1_10() {
  static const Tensor w = make<float>({1, 10}, {1, 1, 2});
  return w;
}

ConvTransposeParams strided(std::int64_t stride) {
  ConvTransposeParams p;
  p.strides = {stride};
  return p;
}

}  // namespace

TEST_CASE("ConvTranspose: each input element scatters its kernel, stride apart", "[unit][conv_transpose]") {
  Tensor y;
  // o = i + k: overlapping taps add up.
  conv_transpose(strided(1), x123(), w1_10(), nullptr, y);
  check_values(y, {1, 1, 4}, {1, 12, 23, 30}, 0);
  // o = 2i + k: no overlap.
  conv_transpose(strided(2), x123(), w1_10(), nullptr, y);
  check_values(y, {1, 1, 6}, {1, 10, 2, 20, 3, 30}, 0);
  // o = 3i + k: a gap of one between images of the kernel.
  conv_transpose(strided(3), x123(), w1_10(), nullptr, y);
  check_values(y, {1, 1, 8}, {1, 10, 0, 2, 20, 0, 3, 30}, 0);
}

TEST_CASE("ConvTranspose: pads crop the natural output, output_padding extends its end", "[unit][conv_transpose]") {
  Tensor y;
  ConvTransposeParams p = strided(2);
  p.pads = {1, 2};
  conv_transpose(p, x123(), w1_10(), nullptr, y);
  check_values(y, {1, 1, 3}, {10, 2, 20}, 0);
  p = strided(2);
  p.output_padding = {1};
  const Tensor b = make<float>({0.5}, {1});
  conv_transpose(p, x123(), w1_10(), &b, y);
  check_values(y, {1, 1, 7}, {1.5, 10.5, 2.5, 20.5, 3.5, 30.5, 0.5}, 0);
}

TEST_CASE("ConvTranspose: output_shape and auto_pad SAME derive the pads", "[unit][conv_transpose]") {
  Tensor y;
  // Natural length 6; 7 asked: total padding -1 splits as 0 at the start and
  // -1 at the end, so the extra position is at the end.
  ConvTransposeParams p = strided(2);
  p.output_shape = {7};
  conv_transpose(p, x123(), w1_10(), nullptr, y);
  check_values(y, {1, 1, 7}, {1, 10, 2, 20, 3, 30, 0}, 0);
  // 4 asked: total 2, one cropped at each end; explicit pads are ignored.
  p.output_shape = {4};
  p.pads = {0, 2};
  conv_transpose(p, x123(), w1_10(), nullptr, y);
  check_values(y, {1, 1, 4}, {10, 2, 20, 3}, 0);
  // SAME: length in * stride = 6 of a natural 7 (kernel 3, o = 2i + k):
  // natural [1, 10, 102, 20, 203, 30, 300]; UPPER crops the end, LOWER the start.
  const Tensor w3 = make<float>({1, 10, 100}, {1, 1, 3});
  p = strided(2);
  p.auto_pad = AutoPad::SameUpper;
  conv_transpose(p, x123(), w3, nullptr, y);
  check_values(y, {1, 1, 6}, {1, 10, 102, 20, 203, 30}, 0);
  p.auto_pad = AutoPad::SameLower;
  conv_transpose(p, x123(), w3, nullptr, y);
  check_values(y, {1, 1, 6}, {10, 102, 20, 203, 30, 300}, 0);
}

TEST_CASE("ConvTranspose: dilation spreads the taps", "[unit][conv_transpose]") {
  Tensor y;
  ConvTransposeParams p;
  p.dilations = {2};
  // o = i + 2k: length 3 + 2 = 5.
  conv_transpose(p, x123(), w1_10(), nullptr, y);
  check_values(y, {1, 1, 5}, {1, 2, 13, 20, 30}, 0);
}

TEST_CASE("ConvTranspose: groups keep their channels apart; W is [C, M/group, k]", "[unit][conv_transpose]") {
  Tensor y;
  // C = 2, group 2, M/group = 2: input channel 0 feeds outputs 0 and 1,
  // channel 1 feeds outputs 2 and 3.
  const Tensor x = make<double>({1, 2, 3, 4}, {1, 2, 2});
  const Tensor w = make<double>({1, 2, 3, 4}, {2, 2, 1});
  const Tensor b = make<double>({0, 100, 200, 300}, {4});
  ConvTransposeParams p;
  p.group = 2;
  conv_transpose(p, x, w, &b, y);
  REQUIRE(y.dtype() == DType::F64);
  check_values(y, {1, 4, 2}, {1, 2, 102, 104, 209, 212, 312, 316}, 0);
  // Without groups the same W maps C = 2 to M = 2: y[m] = sum_c x[c] w[c, m].
  const Tensor w2 = make<double>({1, 2, 3, 4}, {2, 2, 1});
  p.group = 1;
  conv_transpose(p, x, w2, nullptr, y);
  check_values(y, {1, 2, 2}, {1 * 1 + 3 * 3, 2 * 1 + 4 * 3, 1 * 2 + 3 * 4, 2 * 2 + 4 * 4}, 0);
}

TEST_CASE("ConvTranspose: bad input is a typed error naming the problem", "[unit][conv_transpose][errors]") {
  Tensor y;
  const Tensor x = make<float>({1, 2, 3, 4}, {1, 2, 2});
  require_error([&] { conv_transpose({}, x, make<float>({1, 2, 3}, {3, 1, 1}), nullptr, y); }, ErrorKind::Shape,
                {"ConvTranspose", "channels do not match"});
  ConvTransposeParams grouped;
  grouped.group = 3;
  require_error([&] { conv_transpose(grouped, x, make<float>({1, 2}, {2, 1, 1}), nullptr, y); }, ErrorKind::Shape,
                {"group 3"});
  ConvTransposeParams negative;
  negative.pads = {-1, 0};
  require_error([&] { conv_transpose(negative, x, make<float>({1, 2}, {2, 1, 1}), nullptr, y); }, ErrorKind::Model,
                {"pads must be >= 0"});
  ConvTransposeParams cropped;
  cropped.pads = {1, 1};
  require_error([&] { conv_transpose(cropped, x, make<float>({1, 2}, {2, 1, 1}), nullptr, y); }, ErrorKind::Shape,
                {"output length <= 0"});
  ConvTransposeParams empty_shape;
  empty_shape.output_shape = {0};
  require_error([&] { conv_transpose(empty_shape, x, make<float>({1, 2}, {2, 1, 1}), nullptr, y); },
                ErrorKind::Model, {"output_shape"});
  ConvTransposeParams lengths;
  lengths.strides = {1, 1};
  require_error([&] { conv_transpose(lengths, x, make<float>({1, 2}, {2, 1, 1}), nullptr, y); }, ErrorKind::Model,
                {"'strides' expected 1 values, got 2"});
  require_error([&] { conv_transpose({}, x, make<double>({1, 2}, {2, 1, 1}), nullptr, y); }, ErrorKind::Input,
                {"different dtypes"});
  require_error([&] { conv_transpose({}, x, make<float>({1, 2}, {2, 1, 1}), &x, y); }, ErrorKind::Shape,
                {"input 'B' expected shape [1]"});
  const Tensor ix = Tensor::from_vector<std::int64_t>({1, 2}, {1, 1, 2});
  require_error([&] { conv_transpose({}, ix, ix, nullptr, y); }, ErrorKind::Input, {"unsupported dtype"});
  require_error([&] { conv_transpose({}, make<float>({1, 2}, {1, 2}), make<float>({1, 2}, {1, 2}), nullptr, y); },
                ErrorKind::Shape, {"expected rank 3, 4 or 5"});
}

namespace {

std::int64_t pick(std::mt19937& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

// A random geometry of `spatial` axes; x, w and b filled to match.
struct Case {
  ConvTransposeParams p;
  Tensor x, w, b;
};

Case random_case(std::mt19937& rng, std::size_t spatial) {
  Case c;
  const std::int64_t group = pick(rng, 1, 3), cpg = pick(rng, 1, 4), mpg = pick(rng, 1, 5);
  Shape x_shape{pick(rng, 1, 5), group * cpg}, w_shape{group * cpg, mpg};
  const std::int64_t mode = pick(rng, 0, 5);
  for (std::size_t i = 0; i < spatial; ++i) {
    const std::int64_t in = pick(rng, 1, spatial == 3 ? 5 : 9), k = pick(rng, 1, 4);
    const std::int64_t stride = pick(rng, 1, 3), dilation = pick(rng, 1, 2);
    x_shape.push_back(in);
    w_shape.push_back(k);
    c.p.strides.push_back(stride);
    c.p.dilations.push_back(dilation);
    c.p.output_padding.push_back(pick(rng, 0, stride - 1));
    const std::int64_t natural = stride * (in - 1) + (k - 1) * dilation + 1 + c.p.output_padding.back();
    // Requested lengths around the natural one: crops at either end or
    // positions past it (a negative derived end padding).
    c.p.output_shape.push_back(std::max<std::int64_t>(1, natural + pick(rng, -2, 2)));
    c.p.pads.push_back(pick(rng, 0, 1));
  }
  for (std::size_t i = 0; i < spatial; ++i) {
    c.p.pads.push_back(pick(rng, 0, 1));
    // Keep explicit pads within the natural extent.
    const std::int64_t natural = c.p.strides[i] * (x_shape[i + 2] - 1) + (w_shape[i + 2] - 1) * c.p.dilations[i] +
                                 1 + c.p.output_padding[i];
    if (natural - c.p.pads[i] - c.p.pads[i + spatial] < 1) c.p.pads[i] = c.p.pads[i + spatial] = 0;
  }
  if (mode != 0) c.p.output_shape.clear();
  c.p.auto_pad = mode == 1 ? AutoPad::SameUpper : mode == 2 ? AutoPad::SameLower : mode == 3 ? AutoPad::Valid
                                                                                               : AutoPad::NotSet;
  c.p.group = group;
  c.x = canary::test::random_tensor(rng, x_shape);
  c.w = canary::test::random_tensor(rng, w_shape);
  c.b = canary::test::random_tensor(rng, {group * mpg});
  return c;
}

}  // namespace

TEST_CASE("ConvTranspose: oneDNN's deconvolution matches the reference", "[unit][conv_transpose][onednn]") {
  std::mt19937 rng(11);
  int ran = 0;
  for (std::size_t spatial = 1; spatial <= 3; ++spatial)
    for (int trial = 0; trial < 40; ++trial) {
      Case c = random_case(rng, spatial);
      const bool with_bias = trial % 2 == 0;
      INFO("spatial " << spatial << ", trial " << trial << ", x " << shape_to_string(c.x.shape()) << ", w "
                      << shape_to_string(c.w.shape()));
      Tensor want, got;
      conv_transpose(c.p, c.x, c.w, with_bias ? &c.b : nullptr, want);
      if (onednn_conv_transpose(c.p, c.x, c.w, with_bias ? &c.b : nullptr, got)) {
        canary::test::check_close(want, got);
        ++ran;
      }
    }
  // Only a negative begin padding is left to the reference: most cases ran on oneDNN.
  CHECK(ran >= 100);
}

TEST_CASE("ConvTranspose: batches run as chunks give the whole batch's result", "[unit][conv_transpose][onednn]") {
  std::mt19937 rng(5);
  ConvTransposeParams p;
  p.strides = {2, 2};
  p.pads = {1, 1, 1, 1};
  p.output_padding = {1, 1};
  const Tensor w = canary::test::random_tensor(rng, {4, 3, 3, 3});
  for (std::int64_t batch : {1, 3, 7, 13}) {
    INFO("batch " << batch);
    const Tensor x = canary::test::random_tensor(rng, {batch, 4, 5, 6});
    Tensor want, got;
    conv_transpose(p, x, w, nullptr, want);
    REQUIRE(onednn_conv_transpose(p, x, w, nullptr, got));
    REQUIRE(got.shape() == Shape{batch, 3, 10, 12});
    canary::test::check_close(want, got);
  }
}

TEST_CASE("ConvTranspose: oneDNN leaves what it cannot run to the reference", "[unit][conv_transpose][onednn]") {
  Tensor y;
  const Tensor xd = make<double>({1, 2, 3}, {1, 1, 3});
  CHECK_FALSE(onednn_conv_transpose({}, xd, make<double>({1, 10}, {1, 1, 2}), nullptr, y));
  // Natural length 4, 2 asked: total 2 splits as 1 and 1 ...
  ConvTransposeParams p;
  p.output_shape = {2};
  CHECK(onednn_conv_transpose(p, x123(), w1_10(), nullptr, y));
  check_values(y, {1, 1, 2}, {12, 23}, 1e-6);
  // ... and 1 asked, total 3, starts with a begin padding of 2; 7 asked
  // (total -3) with one of -1, which oneDNN does not take.
  p.output_shape = {7};
  CHECK_FALSE(onednn_conv_transpose(p, x123(), w1_10(), nullptr, y));
  conv_transpose(p, x123(), w1_10(), nullptr, y);
  check_values(y, {1, 1, 7}, {0, 1, 12, 23, 30, 0, 0}, 0);
  // Bad input is the reference's to report.
  CHECK_FALSE(onednn_conv_transpose({}, x123(), make<float>({1, 2}, {2, 1, 1}), nullptr, y));
}
