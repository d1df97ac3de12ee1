// Tests of the reference GatherElements: ONNX's examples, negative indices
// and axes, indices smaller than data off the axis, size-1 and empty dims,
// dtypes, and the errors that name a bad index or shape.
#include <catch2/catch.hpp>

#include <cstdint>
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

// [3, 3] f32 holding 1..9.
Tensor one_to_nine() { return Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3}); }

Tensor gathered(std::int64_t axis, const Tensor& data, const Tensor& indices) {
  Tensor y;
  gather_elements(axis, data, indices, y);
  return y;
}

}  // namespace

TEST_CASE("GatherElements: ONNX's examples along axis 1 and axis 0", "[unit][gather_elements]") {
  const Tensor two_by_two = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  check_values(gathered(1, two_by_two, idx({0, 0, 1, 0}, {2, 2})), {2, 2}, {1, 1, 4, 3});
  check_values(gathered(0, one_to_nine(), idx({1, 2, 0, 2, 0, 0}, {2, 3})), {2, 3}, {4, 8, 3, 7, 2, 3});
}

TEST_CASE("GatherElements: negative indices and a negative axis", "[unit][gather_elements]") {
  check_values(gathered(0, one_to_nine(), idx({-1, -2, 0, -2, 0, 0}, {2, 3})), {2, 3}, {7, 5, 3, 4, 2, 3});
  check_values(gathered(-1, one_to_nine(), idx({-1, 0, -3}, {3, 1})), {3, 1}, {3, 4, 7});
}

TEST_CASE("GatherElements: indices smaller off the axis, longer on it, size-1 and empty", "[unit][gather_elements]") {
  check_values(gathered(1, one_to_nine(), idx({2, 0}, {2, 1})), {2, 1}, {3, 4});
  const Tensor row = Tensor::from_vector<float>({1, 2, 3}, {1, 3});
  check_values(gathered(1, row, idx({2, 2, 0, 1}, {1, 4})), {1, 4}, {3, 3, 1, 2});
  // 3-D along the last axis: data[a][b][c] = 4a + 2b + c.
  const Tensor cube = Tensor::from_vector<double>({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2});
  const Tensor y = gathered(2, cube, idx({1, 0, 0, 0, 1, 1, 0, 1}, {2, 2, 2}));
  CHECK(y.dtype() == DType::F64);
  check_values(y, {2, 2, 2}, {1, 0, 2, 2, 5, 5, 6, 7});
  CHECK(gathered(0, one_to_nine(), idx({}, {0, 3})).shape() == Shape{0, 3});
  CHECK(gathered(1, Tensor::empty(DType::F32, {2, 0}), idx({}, {2, 0})).shape() == Shape{2, 0});
}

TEST_CASE("GatherElements: i32 indices, integer and bool data", "[unit][gather_elements]") {
  const Tensor k = Tensor::from_vector<std::int64_t>({10, 20, 30, 40}, {2, 2});
  const Tensor i32 = Tensor::from_vector<std::int32_t>({1, 1, 0, -1}, {2, 2});
  CHECK(values_of<std::int64_t>(gathered(0, k, i32)) == std::vector<std::int64_t>{30, 40, 10, 40});
  const Tensor b = Tensor::from_vector<bool>({true, false}, {2});
  CHECK(values_of<bool>(gathered(0, b, idx({1, 1, 0}, {3}))) == std::vector<bool>{false, false, true});
}

TEST_CASE("GatherElements: errors name the index, the shapes or the axis", "[unit][gather_elements]") {
  require_error([] { gathered(1, one_to_nine(), idx({0, 3}, {2, 1})); }, ErrorKind::Input,
                {"GatherElements", "index 3", "[1, 0]", "dim 3", "axis 1"});
  require_error([] { gathered(0, one_to_nine(), idx({-4}, {1, 1})); }, ErrorKind::Input, {"index -4", "[0, 0]"});
  require_error([] { gathered(1, Tensor::empty(DType::F32, {2, 0}), idx({0}, {1, 1})); }, ErrorKind::Input,
                {"index 0", "dim 0"});
  require_error([] { gathered(0, one_to_nine(), idx({0, 1, 2}, {3})); }, ErrorKind::Shape, {"rank", "[3, 3]"});
  require_error([] { gathered(0, one_to_nine(), idx({0, 0, 0, 0}, {1, 4})); }, ErrorKind::Shape,
                {"[1, 4]", "exceed", "dim 1"});
  require_error([] { gathered(2, one_to_nine(), idx({0}, {1, 1})); }, ErrorKind::Shape, {"GatherElements", "axis 2"});
  require_error([] { gathered(0, Tensor::scalar<float>(1), idx({0}, {1})); }, ErrorKind::Shape, {"scalar"});
  require_error([] { gathered(0, one_to_nine(), Tensor::from_vector<float>({0}, {1, 1})); }, ErrorKind::Input,
                {"i64 or i32"});
}
