// Tests of the reductions beyond Sum/Mean/Max: ReduceMin, ReduceProd,
// ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum and ReduceLogSumExp, with
// hand-computed values, empty reductions as ONNX defines them, integer and
// NaN behaviour, and errors.
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

constexpr double kInf = std::numeric_limits<double>::infinity();

// A [2, 3] f32 tensor holding 1..6.
Tensor one_to_six() { return Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}); }

// [2, 3, 2] f32 with x[a][b][c] = 1 + 6a + 2b + c.
Tensor one_to_twelve() {
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i + 1);
  return Tensor::from_vector<float>(v, {2, 3, 2});
}

Tensor reduced(ReduceOp op, std::vector<std::int64_t> axes, bool keepdims, const Tensor& x) {
  Tensor y;
  reduce({op, std::move(axes), keepdims, false}, x, y);
  return y;
}

}  // namespace

TEST_CASE("ReduceMin and ReduceProd over one axis, negative axes, keepdims 0 and 1", "[unit][reduce]") {
  check_values(reduced(ReduceOp::Min, {1}, true, one_to_six()), {2, 1}, {1, 4});
  check_values(reduced(ReduceOp::Min, {-2}, false, one_to_six()), {3}, {1, 2, 3});
  check_values(reduced(ReduceOp::Prod, {0}, false, one_to_six()), {3}, {4, 10, 18});
  check_values(reduced(ReduceOp::Prod, {-1}, true, one_to_six()), {2, 1}, {6, 120});
  check_values(reduced(ReduceOp::Prod, {}, false, one_to_six()), {}, {720});
  check_values(reduced(ReduceOp::Min, {}, true, one_to_six()), {1, 1}, {1});
}

TEST_CASE("the norms and the sum of squares", "[unit][reduce]") {
  const Tensor signs = Tensor::from_vector<float>({1, -2, 3, -4, 5, -6}, {2, 3});
  check_values(reduced(ReduceOp::L1, {-1}, false, signs), {2}, {6, 15});
  check_values(reduced(ReduceOp::L1, {0}, true, signs), {1, 3}, {5, 7, 9});
  const Tensor pythagoras = Tensor::from_vector<float>({3, 4, 6, 8}, {2, 2});
  check_values(reduced(ReduceOp::L2, {1}, false, pythagoras), {2}, {5, 10});
  check_values(reduced(ReduceOp::SumSquare, {1}, true, one_to_six()), {2, 1}, {14, 77});
  check_values(reduced(ReduceOp::SumSquare, {}, false, signs), {}, {91});
}

TEST_CASE("ReduceLogSum and ReduceLogSumExp", "[unit][reduce]") {
  check_values(reduced(ReduceOp::LogSum, {1}, false, one_to_six()), {2}, {std::log(6.0), std::log(15.0)});
  check_values(reduced(ReduceOp::LogSumExp, {0}, false, one_to_six()), {3},
               {std::log(std::exp(1.0) + std::exp(4.0)), std::log(std::exp(2.0) + std::exp(5.0)),
                std::log(std::exp(3.0) + std::exp(6.0))});
  // exp(1000) overflows even a double: the max is taken out first.
  const Tensor big = Tensor::from_vector<float>({0, 0, 1000, 1000}, {2, 2});
  check_values(reduced(ReduceOp::LogSumExp, {-1}, false, big), {2}, {std::log(2.0), 1000 + std::log(2.0)}, 1e-3);
  // fp64 in, fp64 arithmetic out.
  const Tensor halves = Tensor::from_vector<double>({0.25, 0.25}, {2});
  const Tensor y = reduced(ReduceOp::LogSum, {0}, false, halves);
  CHECK(y.dtype() == DType::F64);
  CHECK(y.data<double>()[0] == Approx(std::log(0.5)).epsilon(1e-15));
}

TEST_CASE("several axes: one contiguous run and a strided walk agree with hand values", "[unit][reduce]") {
  // Axes {0, 2} of [2, 3, 2] are not one run: the generic walk.
  check_values(reduced(ReduceOp::Min, {0, 2}, false, one_to_twelve()), {3}, {1, 3, 5});
  check_values(reduced(ReduceOp::Prod, {2, 0}, true, one_to_twelve()), {1, 3, 1}, {112, 1080, 3960});
  check_values(reduced(ReduceOp::L1, {0, -1}, false, one_to_twelve()), {3}, {18, 26, 34});
  // A size-1 dim between the reduced ones still makes one run.
  const Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 1, 2});
  check_values(reduced(ReduceOp::SumSquare, {0, 2}, false, x), {1}, {30});
  check_values(reduced(ReduceOp::Prod, {1}, false, x), {2, 2}, {1, 2, 3, 4});
}

TEST_CASE("empty reductions give ONNX's identities", "[unit][reduce]") {
  const Tensor empty = Tensor::empty(DType::F32, {2, 0});
  CHECK(values_of<float>(reduced(ReduceOp::Min, {1}, false, empty)) == std::vector<float>{INFINITY, INFINITY});
  CHECK(values_of<float>(reduced(ReduceOp::Max, {1}, false, empty)) == std::vector<float>{-INFINITY, -INFINITY});
  check_values(reduced(ReduceOp::Prod, {1}, true, empty), {2, 1}, {1, 1});
  check_values(reduced(ReduceOp::L1, {1}, false, empty), {2}, {0, 0});
  check_values(reduced(ReduceOp::L2, {1}, false, empty), {2}, {0, 0});
  check_values(reduced(ReduceOp::SumSquare, {-1}, false, empty), {2}, {0, 0});
  CHECK(values_of<float>(reduced(ReduceOp::LogSum, {1}, false, empty)) == std::vector<float>{-INFINITY, -INFINITY});
  CHECK(values_of<float>(reduced(ReduceOp::LogSumExp, {1}, false, empty)) == std::vector<float>{-INFINITY, -INFINITY});
  // Reducing the non-empty axis of [0, 3] gives an empty output.
  CHECK(reduced(ReduceOp::Min, {1}, false, Tensor::empty(DType::F32, {0, 3})).shape() == Shape{0});
  CHECK(reduced(ReduceOp::LogSumExp, {1}, true, Tensor::empty(DType::F32, {0, 3})).shape() == Shape{0, 1});
  // Integers have no infinities: the extremes of the type.
  const Tensor empty_i32 = Tensor::empty(DType::I32, {0});
  CHECK(values_of<std::int32_t>(reduced(ReduceOp::Min, {0}, false, empty_i32)) ==
        std::vector<std::int32_t>{std::numeric_limits<std::int32_t>::max()});
  CHECK(values_of<std::int32_t>(reduced(ReduceOp::Max, {0}, false, empty_i32)) ==
        std::vector<std::int32_t>{std::numeric_limits<std::int32_t>::lowest()});
}

TEST_CASE("NaN and infinities through Min and LogSumExp", "[unit][reduce]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(std::isnan(reduced(ReduceOp::Min, {0}, false, Tensor::from_vector<float>({1, nan, -3}, {3})).data<float>()[0]));
  CHECK(std::isnan(reduced(ReduceOp::Min, {0}, false, Tensor::from_vector<float>({nan, -3}, {2})).data<float>()[0]));
  CHECK(std::isnan(
      reduced(ReduceOp::LogSumExp, {0}, false, Tensor::from_vector<float>({1, nan}, {2})).data<float>()[0]));
  const Tensor with_inf = Tensor::from_vector<double>({1, kInf, -kInf, -kInf}, {2, 2});
  CHECK(values_of<double>(reduced(ReduceOp::LogSumExp, {1}, false, with_inf)) == std::vector<double>{kInf, -kInf});
}

TEST_CASE("integer reductions", "[unit][reduce]") {
  const Tensor k = Tensor::from_vector<std::int64_t>({2, -3, 4, 5}, {2, 2});
  CHECK(values_of<std::int64_t>(reduced(ReduceOp::Prod, {}, false, k)) == std::vector<std::int64_t>{-120});
  CHECK(values_of<std::int64_t>(reduced(ReduceOp::Min, {0}, false, k)) == std::vector<std::int64_t>{2, -3});
  CHECK(values_of<std::int64_t>(reduced(ReduceOp::L1, {1}, false, k)) == std::vector<std::int64_t>{5, 9});
  CHECK(values_of<std::int64_t>(reduced(ReduceOp::SumSquare, {1}, false, k)) == std::vector<std::int64_t>{13, 41});
  // sqrt(2) truncates to 1, as NumPy's astype does.
  const Tensor j = Tensor::from_vector<std::int32_t>({3, 4, 1, 1}, {2, 2});
  CHECK(values_of<std::int32_t>(reduced(ReduceOp::L2, {1}, false, j)) == std::vector<std::int32_t>{5, 1});
  CHECK(values_of<std::int32_t>(reduced(ReduceOp::LogSumExp, {1}, false, j)) == std::vector<std::int32_t>{4, 1});
  // log(0) has no integer value.
  require_error([&] { reduced(ReduceOp::LogSum, {0}, false, Tensor::from_vector<std::int64_t>({0, 0}, {2})); },
                ErrorKind::Input, {"ReduceLogSum", "-inf", "i64"});
}

TEST_CASE("the new reductions reject bad axes and dtypes, naming the op", "[unit][reduce]") {
  require_error([&] { reduced(ReduceOp::Min, {2}, true, one_to_six()); }, ErrorKind::Shape,
                {"ReduceMin", "axis 2", "[2, 3]"});
  require_error([&] { reduced(ReduceOp::LogSumExp, {-3}, true, one_to_six()); }, ErrorKind::Shape,
                {"ReduceLogSumExp", "axis -3"});
  require_error([&] { reduced(ReduceOp::L2, {0, -2}, true, one_to_six()); }, ErrorKind::Shape,
                {"ReduceL2", "twice"});
  require_error([&] { reduced(ReduceOp::Prod, {0}, false, Tensor::from_vector<bool>({true}, {1})); },
                ErrorKind::Input, {"ReduceProd", "bool"});
}
