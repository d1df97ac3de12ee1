// Tests of the reference LRN kernel: windows worked out by hand for odd and
// even sizes (clipped at the first and last channel), a window wider than
// the channels, beta and bias, ranks 3 to 5 with several samples, f32
// against f64, and the errors of bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"
#include "tests/kernels/tensor_checks.h"

using canary::DType;
using canary::ErrorKind;
using canary::Shape;
using canary::Tensor;
using canary::test::check_close;
using canary::test::make;
using canary::test::require_error;
using canary::test::values;
using canary::test::wave;
namespace k = canary::kernels;

namespace {

// LRN with the given window size; alpha = size makes alpha / size 1 and beta = 1
// makes the divisor bias + the sum of squares itself.
k::LrnParams unit_scale(std::int64_t size) {
  k::LrnParams p;
  p.size = size;
  p.alpha = static_cast<double>(size);
  p.beta = 1.0;
  p.bias = 1.0;
  return p;
}

// Runs the kernel.
Tensor run(const k::LrnParams& p, const Tensor& x) {
  Tensor y;
  k::lrn(p, x, y);
  return y;
}

}  // namespace

TEST_CASE("lrn odd size: the window is centred and clipped at the channel edges", "[unit][lrn]") {
  // x = 1, 2, 3, 4 over C = 4; size 3 sums channels c-1..c+1:
  // c0: 1 + 4 = 5, c1: 1 + 4 + 9 = 14, c2: 4 + 9 + 16 = 29, c3: 9 + 16 = 25.
  const Tensor y = run(unit_scale(3), make<double>({1, 2, 3, 4}, {1, 4, 1, 1}));
  CHECK(y.shape() == Shape{1, 4, 1, 1});
  check_close(values(y), {1.0 / 6, 2.0 / 15, 3.0 / 30, 4.0 / 26}, 1e-15);
}

TEST_CASE("lrn even size: the window reaches one channel further up than down", "[unit][lrn]") {
  // size 2 sums channels c..c+1 (floor(1/2) = 0 below, ceil(1/2) = 1 above):
  // c0: 1 + 4 = 5, c1: 4 + 9 = 13, c2: 9 + 16 = 25, c3: 16.
  check_close(values(run(unit_scale(2), make<double>({1, 2, 3, 4}, {1, 4, 1}))),
              {1.0 / 6, 2.0 / 14, 3.0 / 26, 4.0 / 17}, 1e-15);
  // size 4 sums c-1..c+2: c0: 1 + 4 + 9 = 14, c1: 30, c2: 29, c3: 25.
  check_close(values(run(unit_scale(4), make<double>({1, 2, 3, 4}, {1, 4, 1}))),
              {1.0 / 15, 2.0 / 31, 3.0 / 30, 4.0 / 26}, 1e-15);
}

TEST_CASE("lrn window wider than the channels covers all of them", "[unit][lrn]") {
  // size 7 over C = 3: every window is 1 + 4 + 9 = 14; alpha / size = 0.5, bias 2, beta 0.5.
  k::LrnParams p;
  p.size = 7;
  p.alpha = 3.5;
  p.beta = 0.5;
  p.bias = 2.0;
  check_close(values(run(p, make<double>({1, -2, 3}, {1, 3, 1}))),
              {1 / std::sqrt(9.0), -2 / std::sqrt(9.0), 3 / std::sqrt(9.0)}, 1e-15);
}

TEST_CASE("lrn with the default alpha, beta and bias", "[unit][lrn]") {
  // size 1: each element alone, y = x / (1 + 1e-4 x^2)^0.75.
  k::LrnParams p;
  p.size = 1;
  const std::vector<double> xs{10, -20};
  check_close(values(run(p, make<double>(xs, {1, 1, 2}))),
              {10 / std::pow(1.01, 0.75), -20 / std::pow(1.04, 0.75)}, 1e-12);
}

TEST_CASE("lrn keeps samples and spatial positions apart in ranks 3 to 5", "[unit][lrn]") {
  // Two samples, C = 2, size 2: c0 sums c0 and c1, c1 sums itself. Each position of the
  // plane has its own window; the second sample is twice the first.
  const std::vector<double> plane0{1, 2}, plane1{3, 0};  // channel 0 and 1 of sample 0
  auto expect = [](double a, double b) { return std::vector<double>{a / (1 + a * a + b * b), b / (1 + b * b)}; };
  const Shape shape = GENERATE(Shape{2, 2, 2}, Shape{2, 2, 2, 1}, Shape{2, 2, 1, 2, 1});
  std::vector<double> x{1, 2, 3, 0, 2, 4, 6, 0};
  std::vector<double> want;
  for (double scale : {1.0, 2.0}) {
    for (std::size_t c = 0; c < 2; ++c)
      for (std::size_t i = 0; i < 2; ++i) {
        const std::vector<double> e = expect(scale * plane0[i], scale * plane1[i]);
        want.push_back(e[c]);
      }
  }
  const Tensor y = run(unit_scale(2), make<double>(x, shape));
  CHECK(y.shape() == shape);
  check_close(values(y), want, 1e-15);
}

TEST_CASE("lrn f32 agrees with f64 and keeps its dtype", "[unit][lrn]") {
  const std::vector<double> x = wave(2 * 5 * 3 * 4, 0.7);
  k::LrnParams p;
  p.size = 3;
  p.alpha = 0.5;
  const Tensor y32 = run(p, make<float>(x, {2, 5, 3, 4})), y64 = run(p, make<double>(x, {2, 5, 3, 4}));
  CHECK(y32.dtype() == DType::F32);
  CHECK(y64.dtype() == DType::F64);
  check_close(values(y32), values(y64), 1e-6);
}

TEST_CASE("lrn handles an empty batch", "[unit][lrn]") {
  const Tensor y = run(unit_scale(3), Tensor::from_vector<float>({}, {0, 3, 2}));
  CHECK(y.shape() == Shape{0, 3, 2});
}

TEST_CASE("lrn rejects a low rank, a bad size and integer input", "[unit][lrn]") {
  require_error([] { run(unit_scale(3), make<double>({1, 2}, {1, 2})); }, ErrorKind::Shape,
                {"LRN", "'X'", "rank >= 3", "[1, 2]"});
  require_error([] { run(unit_scale(0), make<double>({1, 2}, {1, 2, 1})); }, ErrorKind::Model,
                {"LRN", "size must be >= 1, got 0"});
  require_error([] { run(unit_scale(3), Tensor::from_vector<std::int64_t>({1, 2}, {1, 2, 1})); }, ErrorKind::Input,
                {"LRN", "unsupported dtype i64"});
}
