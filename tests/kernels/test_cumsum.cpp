// Tests of the reference CumSum: ONNX's examples (inclusive, exclusive,
// reverse, both), axes given as i64 or i32 scalars and from the end, a
// middle axis, dtypes, wrapping integers, double accumulation of f32, empty
// dims, running in place, and the errors that name a bad axis.
#include <catch2/catch.hpp>

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

Tensor axis64(std::int64_t a) { return Tensor::scalar<std::int64_t>(a); }

Tensor summed(const Tensor& x, const Tensor& axis, bool exclusive = false, bool reverse = false) {
  Tensor y;
  cumsum(CumSumParams{exclusive, reverse}, x, axis, y);
  return y;
}

Tensor one_to_five() { return Tensor::from_vector<float>({1, 2, 3, 4, 5}, {5}); }

// [[1, 2, 3], [4, 5, 6]] in f64.
Tensor two_by_three() { return Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}); }

}  // namespace

TEST_CASE("CumSum: ONNX's 1-D examples, exclusive and reverse", "[unit][cumsum]") {
  check_values(summed(one_to_five(), axis64(0)), {5}, {1, 3, 6, 10, 15});
  check_values(summed(one_to_five(), axis64(0), true), {5}, {0, 1, 3, 6, 10});
  check_values(summed(one_to_five(), axis64(0), false, true), {5}, {15, 14, 12, 9, 5});
  check_values(summed(one_to_five(), axis64(0), true, true), {5}, {14, 12, 9, 5, 0});
}

TEST_CASE("CumSum: 2-D along either axis, negative axes, i32 axis", "[unit][cumsum]") {
  check_values(summed(two_by_three(), axis64(0)), {2, 3}, {1, 2, 3, 5, 7, 9});
  check_values(summed(two_by_three(), axis64(1)), {2, 3}, {1, 3, 6, 4, 9, 15});
  check_values(summed(two_by_three(), axis64(-1)), {2, 3}, {1, 3, 6, 4, 9, 15});
  check_values(summed(two_by_three(), Tensor::scalar<std::int32_t>(-2)), {2, 3}, {1, 2, 3, 5, 7, 9});
  CHECK(summed(two_by_three(), axis64(0)).dtype() == DType::F64);
}

TEST_CASE("CumSum: a middle axis with elements after it", "[unit][cumsum]") {
  // x[o][k][i] = 4o + 2k + i.
  const Tensor x = Tensor::from_vector<float>({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2});
  check_values(summed(x, axis64(1)), {2, 2, 2}, {0, 1, 2, 4, 4, 5, 10, 12});
  check_values(summed(x, axis64(1), true, true), {2, 2, 2}, {2, 3, 0, 0, 6, 7, 0, 0});
  check_values(summed(x, axis64(1), true), {2, 2, 2}, {0, 0, 0, 1, 0, 0, 4, 5});
}

TEST_CASE("CumSum: integers wrap, f32 sums in double", "[unit][cumsum]") {
  constexpr std::int64_t kMax64 = std::numeric_limits<std::int64_t>::max();
  const Tensor big = Tensor::from_vector<std::int64_t>({kMax64, 1, 2}, {3});
  CHECK(values_of<std::int64_t>(summed(big, axis64(0))) ==
        std::vector<std::int64_t>{kMax64, std::numeric_limits<std::int64_t>::min(),
                                  std::numeric_limits<std::int64_t>::min() + 2});
  constexpr std::int32_t kMax32 = std::numeric_limits<std::int32_t>::max();
  const Tensor i32 = Tensor::from_vector<std::int32_t>({-5, 1, kMax32}, {3});
  CHECK(values_of<std::int32_t>(summed(i32, axis64(0), false, true)) ==
        std::vector<std::int32_t>{kMax32 - 4, std::numeric_limits<std::int32_t>::min(), kMax32});
  // An f32 running sum would lose the 1 against 1e8 and end at 0.
  const Tensor f = Tensor::from_vector<float>({1e8f, 1, -1e8f}, {3});
  CHECK(values_of<float>(summed(f, axis64(0))) == std::vector<float>{1e8f, 1e8f, 1});
}

TEST_CASE("CumSum: empty dims and size-1 axes", "[unit][cumsum]") {
  CHECK(summed(Tensor::empty(DType::F32, {0, 3}), axis64(0)).shape() == Shape{0, 3});
  CHECK(summed(Tensor::empty(DType::I64, {2, 0}), axis64(1)).shape() == Shape{2, 0});
  CHECK(summed(Tensor::empty(DType::F32, {2, 0}), axis64(0)).shape() == Shape{2, 0});
  const Tensor column = Tensor::from_vector<float>({3, 4}, {2, 1});
  check_values(summed(column, axis64(1)), {2, 1}, {3, 4});
  check_values(summed(column, axis64(1), true), {2, 1}, {0, 0});
}

TEST_CASE("CumSum: the output may be the input", "[unit][cumsum]") {
  Tensor x = one_to_five();
  cumsum(CumSumParams{true, true}, x, axis64(0), x);
  check_values(x, {5}, {14, 12, 9, 5, 0});
}

TEST_CASE("CumSum: errors name the axis, its shape or the dtype", "[unit][cumsum]") {
  require_error([] { summed(two_by_three(), axis64(2)); }, ErrorKind::Shape, {"CumSum", "axis 2", "[2, 3]"});
  require_error([] { summed(two_by_three(), axis64(-3)); }, ErrorKind::Shape, {"CumSum", "axis -3"});
  require_error([] { summed(Tensor::scalar<float>(1), axis64(0)); }, ErrorKind::Shape, {"CumSum", "axis 0", "[]"});
  require_error([] { summed(two_by_three(), Tensor::from_vector<std::int64_t>({0}, {1})); }, ErrorKind::Shape,
                {"CumSum", "scalar", "i64[1]"});
  require_error([] { summed(two_by_three(), Tensor::scalar<float>(0)); }, ErrorKind::Input, {"CumSum", "i64 or i32"});
  require_error([] { summed(Tensor::from_vector<bool>({true}, {1}), axis64(0)); }, ErrorKind::Input,
                {"CumSum", "bool"});
}
