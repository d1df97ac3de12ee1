// Tests of the reference GatherND, ScatterND and ScatterElements: ONNX's
// examples, negative indices, batch_dims, every reduction with repeated
// indices, NaN under max, integer wraparound, bool, empty indices, an output
// that is its own data input, and the errors that name a bad index or shape.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/reference.h"
#include "tests/kernels/tensor_checks.h"

using namespace canary;
using namespace canary::kernels;
using canary::test::check_values;
using canary::test::require_error;
using canary::test::values_of;

namespace {

Tensor idx(const std::vector<std::int64_t>& v, const Shape& shape) { return Tensor::from_vector(v, shape); }
Tensor f32s(const std::vector<float>& v, const Shape& shape) { return Tensor::from_vector(v, shape); }

// [2, 2, 2] i32 holding 0..7, ONNX's GatherND example data.
Tensor cube() { return Tensor::from_vector<std::int32_t>({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2}); }

Tensor gather_nd_of(std::int64_t batch_dims, const Tensor& data, const Tensor& indices) {
  Tensor y;
  gather_nd(batch_dims, data, indices, y);
  return y;
}

Tensor scatter_nd_of(ScatterReduction r, const Tensor& data, const Tensor& indices, const Tensor& updates) {
  Tensor y;
  scatter_nd(r, data, indices, updates, y);
  return y;
}

Tensor scatter_elements_of(std::int64_t axis, ScatterReduction r, const Tensor& data, const Tensor& indices,
                           const Tensor& updates) {
  Tensor y;
  scatter_elements(axis, r, data, indices, updates, y);
  return y;
}

}  // namespace

TEST_CASE("GatherND: ONNX's examples, elements and slices", "[unit][gather_nd]") {
  const Tensor square = Tensor::from_vector<std::int32_t>({0, 1, 2, 3}, {2, 2});
  check_values(gather_nd_of(0, square, idx({0, 0, 1, 1}, {2, 2})), {2}, {0, 3});
  check_values(gather_nd_of(0, square, idx({1, 0}, {2, 1})), {2, 2}, {2, 3, 0, 1});
  check_values(gather_nd_of(0, cube(), idx({0, 1, 1, 0}, {2, 2})), {2, 2}, {2, 3, 4, 5});
  check_values(gather_nd_of(0, cube(), idx({0, 1, 1, 0}, {2, 1, 2})), {2, 1, 2}, {2, 3, 4, 5});
  CHECK(gather_nd_of(0, square, idx({1, 0}, {2, 1})).dtype() == DType::I32);
}

TEST_CASE("GatherND: batch_dims pair each tuple with its batch", "[unit][gather_nd]") {
  // ONNX's example: batch 0 takes row 1, batch 1 takes row 0.
  check_values(gather_nd_of(1, cube(), idx({1, 0}, {2, 1})), {2, 2}, {2, 3, 4, 5});
  // Two tuples per batch, each naming one element.
  check_values(gather_nd_of(1, cube(), idx({0, 1, 1, 1, 1, 0, 0, 0}, {2, 2, 2})), {2, 2}, {1, 3, 6, 4});
  // batch_dims 2 on [2, 2, 2]: the last axis per (i, j).
  check_values(gather_nd_of(2, cube(), idx({1, 0, 0, 1}, {2, 2, 1})), {2, 2}, {1, 2, 4, 7});
}

TEST_CASE("GatherND: negative indices count from the end", "[unit][gather_nd]") {
  check_values(gather_nd_of(0, cube(), idx({-1, -2, 0, -1}, {2, 2})), {2, 2}, {4, 5, 2, 3});
  check_values(gather_nd_of(1, cube(), idx({-2, -1, -1, -2}, {2, 1, 2})), {2, 1}, {1, 6});
}

TEST_CASE("GatherND: f64 and bool data, empty indices", "[unit][gather_nd]") {
  const Tensor d = Tensor::from_vector<double>({0.5, 1.5, 2.5, 3.5}, {2, 2});
  check_values(gather_nd_of(0, d, idx({1, 0}, {1, 2})), {1}, {2.5});
  const Tensor b = Tensor::from_vector<bool>({true, false, false, true}, {2, 2});
  CHECK(values_of<bool>(gather_nd_of(0, b, idx({0, 1, 1, 1}, {2, 2}))) == std::vector<bool>{false, true});
  CHECK(gather_nd_of(0, cube(), idx({}, {0, 2})).shape() == Shape{0, 2});
  CHECK(gather_nd_of(0, Tensor::empty(DType::F32, {3, 0}), idx({2}, {1, 1})).shape() == Shape{1, 0});
}

TEST_CASE("GatherND: errors name the index, the shapes or batch_dims", "[unit][gather_nd]") {
  require_error([] { gather_nd_of(0, cube(), idx({0, 2}, {1, 2})); }, ErrorKind::Input,
                {"GatherND", "index 2", "[0, 1]", "dim 2", "axis 1", "[2, 2, 2]"});
  require_error([] { gather_nd_of(0, cube(), idx({-3}, {1, 1})); }, ErrorKind::Input, {"index -3", "axis 0"});
  require_error([] { gather_nd_of(1, cube(), idx({0, 2}, {2, 1})); }, ErrorKind::Input, {"index 2", "[1, 0]", "axis 1"});
  require_error([] { gather_nd_of(0, cube(), idx({0, 0, 0, 0}, {1, 4})); }, ErrorKind::Shape,
                {"GatherND", "last dim of indices (4)", "[1, 3]"});
  require_error([] { gather_nd_of(0, cube(), idx({}, {2, 0})); }, ErrorKind::Shape, {"last dim of indices (0)"});
  require_error([] { gather_nd_of(2, cube(), idx({0, 0}, {2, 1})); }, ErrorKind::Shape, {"batch_dims 2", "[0, 2)"});
  require_error([] { gather_nd_of(1, cube(), idx({0, 0, 0}, {3, 1})); }, ErrorKind::Shape, {"batch dim 0 differs"});
  require_error([] { gather_nd_of(0, cube(), Tensor::from_vector<std::int32_t>({0}, {1, 1})); }, ErrorKind::Input,
                {"GatherND", "i64"});
}

TEST_CASE("ScatterND: ONNX's examples, elements and slices", "[unit][scatter_nd]") {
  const Tensor data = f32s({1, 2, 3, 4, 5, 6, 7, 8}, {8});
  check_values(scatter_nd_of(ScatterReduction::None, data, idx({4, 3, 1, 7}, {4, 1}), f32s({9, 10, 11, 12}, {4})),
               {8}, {1, 11, 3, 10, 9, 6, 7, 12});
  const Tensor square = f32s({1, 2, 3, 4}, {2, 2});
  check_values(scatter_nd_of(ScatterReduction::None, square, idx({1}, {1, 1}), f32s({5, 6}, {1, 2})), {2, 2},
               {1, 2, 5, 6});
  check_values(scatter_nd_of(ScatterReduction::None, square, idx({0, 1, -1, -2}, {2, 2}), f32s({9, 8}, {2})), {2, 2},
               {1, 9, 8, 4});
}

TEST_CASE("ScatterND: each reduction over a repeated tuple, in order", "[unit][scatter_nd]") {
  const Tensor data = Tensor::from_vector<double>({1, 2, 3, 4}, {4});
  const Tensor at = idx({1, 1, -1}, {3, 1});
  const Tensor upd = Tensor::from_vector<double>({10, 20, 5}, {3});
  check_values(scatter_nd_of(ScatterReduction::None, data, at, upd), {4}, {1, 20, 3, 5});
  check_values(scatter_nd_of(ScatterReduction::Add, data, at, upd), {4}, {1, 32, 3, 9});
  check_values(scatter_nd_of(ScatterReduction::Mul, data, at, upd), {4}, {1, 400, 3, 20});
  check_values(scatter_nd_of(ScatterReduction::Max, data, at, upd), {4}, {1, 20, 3, 5});
  check_values(scatter_nd_of(ScatterReduction::Min, data, at, upd), {4}, {1, 2, 3, 4});
}

TEST_CASE("ScatterND: max keeps a NaN from either side, as NumPy's maximum", "[unit][scatter_nd]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor y = scatter_nd_of(ScatterReduction::Max, f32s({1, nan, 3}, {3}), idx({0, 1}, {2, 1}),
                                 f32s({nan, 5}, {2}));
  const std::vector<float> v = values_of<float>(y);
  CHECK(std::isnan(v[0]));
  CHECK(std::isnan(v[1]));
  CHECK(v[2] == 3);
}

TEST_CASE("ScatterND: integers wrap, bool adds as or and multiplies as and", "[unit][scatter_nd]") {
  const std::int64_t top = std::numeric_limits<std::int64_t>::max();
  const Tensor big = Tensor::from_vector<std::int64_t>({top, 3}, {2});
  const Tensor one = Tensor::from_vector<std::int64_t>({1}, {1});
  CHECK(values_of<std::int64_t>(scatter_nd_of(ScatterReduction::Add, big, idx({0}, {1, 1}), one)) ==
        std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min(), 3});
  const Tensor flags = Tensor::from_vector<bool>({false, true}, {2});
  const Tensor ups = Tensor::from_vector<bool>({true, false}, {2});
  CHECK(values_of<bool>(scatter_nd_of(ScatterReduction::Add, flags, idx({0, 1}, {2, 1}), ups)) ==
        std::vector<bool>{true, true});
  CHECK(values_of<bool>(scatter_nd_of(ScatterReduction::Mul, flags, idx({0, 1}, {2, 1}), ups)) ==
        std::vector<bool>{false, false});
}

TEST_CASE("ScatterND: empty updates copy data; y may be data", "[unit][scatter_nd]") {
  const Tensor data = f32s({1, 2, 3}, {3});
  check_values(scatter_nd_of(ScatterReduction::Add, data, idx({}, {0, 1}), f32s({}, {0})), {3}, {1, 2, 3});
  Tensor y = f32s({1, 2, 3}, {3});
  const Tensor held = y;  // another holder of y's buffer must not see the update
  scatter_nd(ScatterReduction::None, y, idx({2}, {1, 1}), f32s({7}, {1}), y);
  check_values(y, {3}, {1, 2, 7});
  check_values(held, {3}, {1, 2, 3});
}

TEST_CASE("ScatterND: errors name the index or the shapes", "[unit][scatter_nd]") {
  const Tensor data = f32s({1, 2, 3, 4}, {2, 2});
  require_error([&] { scatter_nd_of(ScatterReduction::None, data, idx({0, 2}, {1, 2}), f32s({1}, {1})); },
                ErrorKind::Input, {"ScatterND", "index 2", "[0, 1]", "dim 2", "axis 1"});
  require_error([&] { scatter_nd_of(ScatterReduction::Add, data, idx({-3}, {1, 1}), f32s({1, 1}, {1, 2})); },
                ErrorKind::Input, {"ScatterND", "index -3", "axis 0"});
  require_error([&] { scatter_nd_of(ScatterReduction::None, data, idx({0}, {1, 1}), f32s({1}, {1})); },
                ErrorKind::Shape, {"ScatterND", "updates [1] must be [1, 2]"});
  require_error([&] { scatter_nd_of(ScatterReduction::None, data, idx({0, 0, 0}, {1, 3}), f32s({1}, {1})); },
                ErrorKind::Shape, {"(3) must be in [1, 2]"});
  require_error(
      [&] { scatter_nd_of(ScatterReduction::None, data, idx({0, 0}, {1, 2}), Tensor::from_vector<double>({1}, {1})); },
      ErrorKind::Input, {"ScatterND", "dtype of data"});
  require_error(
      [&] {
        scatter_nd_of(ScatterReduction::None, data, Tensor::from_vector<std::int32_t>({0, 0}, {1, 2}), f32s({1}, {1}));
      },
      ErrorKind::Input, {"ScatterND", "i64"});
}

TEST_CASE("ScatterElements: ONNX's examples along axis 0 and axis 1", "[unit][scatter_elements]") {
  const Tensor zeros = f32s({0, 0, 0, 0, 0, 0, 0, 0, 0}, {3, 3});
  check_values(scatter_elements_of(0, ScatterReduction::None, zeros, idx({1, 0, 2, 0, 2, 1}, {2, 3}),
                                   f32s({1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f}, {2, 3})),
               {3, 3}, {2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2});
  const Tensor row = f32s({1, 2, 3, 4, 5}, {1, 5});
  check_values(scatter_elements_of(1, ScatterReduction::None, row, idx({1, 3}, {1, 2}), f32s({1.1f, 2.1f}, {1, 2})),
               {1, 5}, {1, 1.1, 3, 2.1, 5});
}

TEST_CASE("ScatterElements: negative indices and a negative axis, i32 indices", "[unit][scatter_elements]") {
  const Tensor row = f32s({1, 2, 3, 4, 5}, {1, 5});
  check_values(scatter_elements_of(-1, ScatterReduction::None, row, idx({1, -3}, {1, 2}), f32s({1.1f, 2.1f}, {1, 2})),
               {1, 5}, {1, 1.1, 2.1, 4, 5});
  const Tensor i32 = Tensor::from_vector<std::int32_t>({-1, 0}, {1, 2});
  const Tensor k = Tensor::from_vector<std::int64_t>({10, 20, 30, 40}, {2, 2});
  CHECK(values_of<std::int64_t>(scatter_elements_of(0, ScatterReduction::None, k, i32,
                                                    Tensor::from_vector<std::int64_t>({7, 8}, {1, 2}))) ==
        std::vector<std::int64_t>{10, 8, 7, 40});
}

TEST_CASE("ScatterElements: each reduction over a repeated index, in order", "[unit][scatter_elements]") {
  const Tensor row = Tensor::from_vector<double>({1, 2, 3, 4, 5}, {1, 5});
  const Tensor at = idx({1, 1}, {1, 2});
  const Tensor upd = Tensor::from_vector<double>({1.1, 2.1}, {1, 2});
  check_values(scatter_elements_of(1, ScatterReduction::None, row, at, upd), {1, 5}, {1, 2.1, 3, 4, 5});
  check_values(scatter_elements_of(1, ScatterReduction::Add, row, at, upd), {1, 5}, {1, 5.2, 3, 4, 5}, 1e-12);
  check_values(scatter_elements_of(1, ScatterReduction::Mul, row, at, upd), {1, 5}, {1, 4.62, 3, 4, 5}, 1e-12);
  check_values(scatter_elements_of(1, ScatterReduction::Max, row, at, upd), {1, 5}, {1, 2.1, 3, 4, 5});
  check_values(scatter_elements_of(1, ScatterReduction::Min, row, at, upd), {1, 5}, {1, 1.1, 3, 4, 5});
}

TEST_CASE("ScatterElements: max never lets a NaN in or out, as Python's max", "[unit][scatter_elements]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> v = values_of<float>(
      scatter_elements_of(0, ScatterReduction::Max, f32s({1, nan}, {2}), idx({0, 1}, {2}), f32s({nan, 5}, {2})));
  CHECK(v[0] == 1);
  CHECK(std::isnan(v[1]));
}

TEST_CASE("ScatterElements: smaller indices, empty updates, y may be data", "[unit][scatter_elements]") {
  const Tensor data = f32s({1, 2, 3, 4, 5, 6}, {2, 3});
  check_values(scatter_elements_of(1, ScatterReduction::Add, data, idx({2}, {1, 1}), f32s({10}, {1, 1})), {2, 3},
               {1, 2, 13, 4, 5, 6});
  check_values(scatter_elements_of(0, ScatterReduction::None, data, idx({}, {0, 3}), f32s({}, {0, 3})), {2, 3},
               {1, 2, 3, 4, 5, 6});
  Tensor y = data;
  scatter_elements(0, ScatterReduction::None, y, idx({1}, {1, 1}), f32s({9}, {1, 1}), y);
  check_values(y, {2, 3}, {1, 2, 3, 9, 5, 6});
  check_values(data, {2, 3}, {1, 2, 3, 4, 5, 6});
}

TEST_CASE("ScatterElements: errors name the index, the shapes or the axis", "[unit][scatter_elements]") {
  const Tensor row = f32s({1, 2, 3, 4, 5}, {1, 5});
  require_error([&] { scatter_elements_of(1, ScatterReduction::None, row, idx({1, 5}, {1, 2}), f32s({0, 0}, {1, 2})); },
                ErrorKind::Input, {"ScatterElements", "index 5", "[0, 1]", "dim 5", "axis 1"});
  require_error([&] { scatter_elements_of(1, ScatterReduction::Mul, row, idx({-6}, {1, 1}), f32s({0}, {1, 1})); },
                ErrorKind::Input, {"index -6", "[0, 0]"});
  require_error([&] { scatter_elements_of(1, ScatterReduction::None, row, idx({0, 0}, {2, 1}), f32s({0, 0}, {2, 1})); },
                ErrorKind::Shape, {"ScatterElements", "exceed", "dim 0"});
  require_error([&] { scatter_elements_of(1, ScatterReduction::None, row, idx({0, 0}, {1, 2}), f32s({0}, {1, 1})); },
                ErrorKind::Shape, {"updates [1, 1]", "shape of indices [1, 2]"});
  require_error([&] { scatter_elements_of(2, ScatterReduction::None, row, idx({0}, {1, 1}), f32s({0}, {1, 1})); },
                ErrorKind::Shape, {"ScatterElements", "axis 2"});
  require_error([&] { scatter_elements_of(0, ScatterReduction::None, row, idx({0}, {1}), f32s({0}, {1})); },
                ErrorKind::Shape, {"rank"});
  require_error(
      [&] { scatter_elements_of(0, ScatterReduction::None, row, f32s({0}, {1, 1}), f32s({0}, {1, 1})); },
      ErrorKind::Input, {"i64 or i32"});
}
