// Tests of the reference Resize against the values of ONNX's operator
// documentation and hand-computed ones: nearest (each nearest mode),
// linear and cubic under the coordinate modes, exclude_outside,
// tf_crop_and_resize with its extrapolation value, sizes, f64, and the
// errors.
#include <catch2/catch.hpp>

#include <limits>
#include <vector>

#include "canary/error.h"
#include "canary/tensor.h"
#include "kernels/reference.h"
#include "tests/kernels/tensor_checks.h"

using namespace canary;
using namespace canary::kernels;
using canary::test::check_values;
using canary::test::require_error;

namespace {

const Tensor k2x2 = Tensor::from_vector<float>({1, 2, 3, 4}, {1, 1, 2, 2});

Tensor f32s(const std::vector<float>& v) { return Tensor::from_vector<float>(v, {static_cast<std::int64_t>(v.size())}); }
Tensor i64s(const std::vector<std::int64_t>& v) {
  return Tensor::from_vector<std::int64_t>(v, {static_cast<std::int64_t>(v.size())});
}

ResizeParams params(ResizeMode mode, ResizeCoordinateMode coord = ResizeCoordinateMode::HalfPixel) {
  ResizeParams p;
  p.mode = mode;
  p.coordinate_mode = coord;
  return p;
}

}  // namespace

TEST_CASE("Resize nearest: up and down by scales, and the nearest modes", "[unit][resize]") {
  Tensor y;
  const Tensor up = f32s({1, 1, 2, 3});
  resize(params(ResizeMode::Nearest), k2x2, nullptr, &up, nullptr, y);
  check_values(y, {1, 1, 4, 6}, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}, 0);
  const Tensor x2x4 = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 4});
  const Tensor down = f32s({1, 1, 0.6f, 0.6f});
  resize(params(ResizeMode::Nearest), x2x4, nullptr, &down, nullptr, y);
  check_values(y, {1, 1, 1, 2}, {1, 3}, 0);
  // 1-D [0, 1, 2, 3] to 8 under asymmetric: x = o / 2; ties (x.5) go by the mode.
  const Tensor line = Tensor::from_vector<float>({0, 1, 2, 3}, {4});
  const Tensor eight = i64s({8});
  ResizeParams p = params(ResizeMode::Nearest, ResizeCoordinateMode::Asymmetric);
  p.nearest_mode = ResizeNearestMode::RoundPreferFloor;
  resize(p, line, nullptr, nullptr, &eight, y);
  check_values(y, {8}, {0, 0, 1, 1, 2, 2, 3, 3}, 0);
  p.nearest_mode = ResizeNearestMode::RoundPreferCeil;
  resize(p, line, nullptr, nullptr, &eight, y);
  check_values(y, {8}, {0, 1, 1, 2, 2, 3, 3, 3}, 0);  // clamped at the last element
  p.nearest_mode = ResizeNearestMode::Ceil;
  resize(p, line, nullptr, nullptr, &eight, y);
  check_values(y, {8}, {0, 1, 1, 2, 2, 3, 3, 3}, 0);
  p.nearest_mode = ResizeNearestMode::Floor;
  resize(p, line, nullptr, nullptr, &eight, y);
  check_values(y, {8}, {0, 0, 1, 1, 2, 2, 3, 3}, 0);
}

TEST_CASE("Resize linear: half_pixel, align_corners and pytorch_half_pixel", "[unit][resize]") {
  Tensor y;
  const Tensor two = f32s({1, 1, 2, 2});
  resize(params(ResizeMode::Linear), k2x2, nullptr, &two, nullptr, y);
  check_values(y, {1, 1, 4, 4},
               {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4}, 1e-6);
  resize(params(ResizeMode::Linear, ResizeCoordinateMode::AlignCorners), k2x2, nullptr, &two, nullptr, y);
  const double t = 1.0 / 3;
  check_values(y, {1, 1, 4, 4},
               {1, 1 + t, 2 - t, 2, 1 + 2 * t, 2, 2 + t, 2 + 2 * t, 3 - 2 * t, 3 - t, 3, 3 + t, 3, 3 + t, 4 - t, 4},
               1e-6);
  // pytorch_half_pixel to a length of 1 reads x = -0.5: the first element.
  const Tensor col = Tensor::from_vector<float>({1, 2, 3, 4}, {4, 1});
  const Tensor sizes = i64s({3, 1});
  resize(params(ResizeMode::Linear, ResizeCoordinateMode::PytorchHalfPixel), col, nullptr, nullptr, &sizes, y);
  // x = (o + 0.5) * 4/3 - 0.5: 0.1667, 1.5, 2.8333
  check_values(y, {3, 1}, {1 + 1.0 / 6, 2.5, 3 + 5.0 / 6}, 1e-6);
}

TEST_CASE("Resize cubic: the coefficients, exclude_outside, and the identity", "[unit][resize]") {
  // [0, 1, 2, 3] upsampled twice under align_corners (x = o * 3/7): the
  // values of ONNX's reference implementation (a = -0.75 bends the line).
  const Tensor line = Tensor::from_vector<double>({0, 1, 2, 3}, {4});
  const Tensor two = f32s({2});
  Tensor y;
  ResizeParams p = params(ResizeMode::Cubic, ResizeCoordinateMode::AlignCorners);
  resize(p, line, nullptr, &two, nullptr, y);
  CHECK(y.dtype() == DType::F64);
  check_values(y, {8}, {0, 0.34110787, 0.80029155, 1.32944606, 1.67055394, 2.19970845, 2.65889213, 3}, 1e-8);
  // A scale of 1 under half_pixel is the identity for every mode.
  const Tensor one = f32s({1});
  resize(params(ResizeMode::Cubic), line, nullptr, &one, nullptr, y);
  check_values(y, {4}, {0, 1, 2, 3}, 0);
  // exclude_outside renormalises the weights inside: a constant stays constant at the edges.
  const Tensor flat = Tensor::from_vector<float>({5, 5, 5, 5}, {4});
  p = params(ResizeMode::Cubic);
  p.exclude_outside = true;
  p.cubic_coeff_a = -0.5;
  resize(p, flat, nullptr, &two, nullptr, y);
  check_values(y, {8}, {5, 5, 5, 5, 5, 5, 5, 5}, 1e-6);
}

TEST_CASE("Resize tf_crop_and_resize: the roi box and the extrapolation value", "[unit][resize]") {
  const Tensor line = Tensor::from_vector<float>({0, 10, 20, 30, 40}, {5});
  const Tensor three = i64s({3});
  ResizeParams p = params(ResizeMode::Linear, ResizeCoordinateMode::TfCropAndResize);
  p.extrapolation_value = -1;
  Tensor y;
  const Tensor inside = f32s({0.25f, 0.75f});  // x from 1 to 3
  resize(p, line, &inside, nullptr, &three, y);
  check_values(y, {3}, {10, 20, 30}, 1e-5);
  const Tensor past = f32s({0.5f, 1.5f});  // x from 2 to 6: 6 is past the end
  resize(p, line, &past, nullptr, &three, y);
  check_values(y, {3}, {20, 40, -1}, 1e-5);
  // Outside on one axis is outside: the whole output row takes the value.
  const Tensor grid = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  const Tensor box = f32s({0, 0, 2, 1});
  const Tensor sizes = i64s({2, 2});
  resize(p, grid, &box, nullptr, &sizes, y);
  check_values(y, {2, 2}, {1, 2, -1, -1}, 1e-6);
  require_error([&] { resize(p, line, nullptr, nullptr, &three, y); }, ErrorKind::Input, {"roi"});
  const Tensor nan_box = f32s({std::numeric_limits<float>::quiet_NaN(), 0.5f});
  resize(p, line, &nan_box, nullptr, &three, y);
  check_values(y, {3}, {-1, -1, -1}, 0);
}

TEST_CASE("Resize: errors name what was wrong", "[unit][resize]") {
  Tensor y;
  const Tensor s = f32s({1, 1, 2, 2});
  const Tensor z = i64s({1, 1, 4, 4});
  const ResizeParams p = params(ResizeMode::Nearest);
  require_error([&] { resize(p, k2x2, nullptr, &s, &z, y); }, ErrorKind::Input, {"Resize", "both"});
  require_error([&] { resize(p, k2x2, nullptr, nullptr, nullptr, y); }, ErrorKind::Input, {"Resize", "neither"});
  const Tensor zero = f32s({1, 1, 0, 2});
  require_error([&] { resize(p, k2x2, nullptr, &zero, nullptr, y); }, ErrorKind::Input, {"not positive"});
  const Tensor short_scales = f32s({2, 2});
  require_error([&] { resize(p, k2x2, nullptr, &short_scales, nullptr, y); }, ErrorKind::Shape, {"scales", "4"});
  const Tensor negative = i64s({1, 1, -2, 2});
  require_error([&] { resize(p, k2x2, nullptr, nullptr, &negative, y); }, ErrorKind::Input, {"negative"});
  const Tensor huge = i64s({1, 1, 2, std::int64_t{1} << 50});
  require_error([&] { resize(p, k2x2, nullptr, nullptr, &huge, y); }, ErrorKind::Resource, {"Resize", "dim 3"});
  const Tensor emptied = i64s({1, 1, 0, std::int64_t{1} << 40});
  require_error([&] { resize(p, k2x2, nullptr, nullptr, &emptied, y); }, ErrorKind::Resource, {"Resize"});
  const Tensor ints = Tensor::from_vector<std::int64_t>({1, 2}, {2});
  const Tensor two = f32s({2});
  require_error([&] { resize(p, ints, nullptr, &two, nullptr, y); }, ErrorKind::Input, {"Resize", "i64"});
}
