// Tests of the reference kernels for ops exporters emit: Sign, Reciprocal,
// Floor, Ceil, Round, Softplus, LeakyRelu, HardSigmoid, Not, And, Or, Mod,
// Dropout, ConstantOfShape, Range, Tile, Pad and Split, against hand-computed
// values, in f32 and f64, with their error cases.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "canary/error.h"
#include "canary/tensor.h"
#include "kernels/reference.h"
#include "tests/kernels/tensor_checks.h"

using namespace canary;
using namespace canary::kernels;
using canary::test::check_values;
using canary::test::ints;
using canary::test::require_error;
using canary::test::values_of;

namespace {

Tensor f32(const std::vector<float>& v, std::initializer_list<std::int64_t> shape) {
  return Tensor::from_vector<float>(v, shape);
}
Tensor f64(const std::vector<double>& v, std::initializer_list<std::int64_t> shape) {
  return Tensor::from_vector<double>(v, shape);
}
Tensor i64(const std::vector<std::int64_t>& v, std::initializer_list<std::int64_t> shape) {
  return Tensor::from_vector<std::int64_t>(v, shape);
}
Tensor bools(const std::vector<bool>& v, std::initializer_list<std::int64_t> shape) {
  return Tensor::from_vector<bool>(v, shape);
}

}  // namespace

TEST_CASE("Sign, Reciprocal, Floor and Ceil", "[unit][exporter_ops]") {
  Tensor y;
  unary(UnaryOp::Sign, f32({-2.0f, 0.0f, 3.5f}, {3}), y);
  check_values(y, {3}, {-1, 0, 1});
  unary(UnaryOp::Sign, i64({-5, 0, 7}, {3}), y);
  CHECK(values_of<std::int64_t>(y) == std::vector<std::int64_t>{-1, 0, 1});
  unary(UnaryOp::Reciprocal, f64({2, -4, 0.5}, {3}), y);
  CHECK(y.dtype() == DType::F64);
  check_values(y, {3}, {0.5, -0.25, 2}, 0);
  unary(UnaryOp::Floor, f32({-1.5f, 1.5f, 2.0f}, {1, 3}), y);
  check_values(y, {1, 3}, {-2, 1, 2}, 0);
  unary(UnaryOp::Ceil, f32({-1.5f, 1.5f, 2.0f}, {1, 3}), y);
  check_values(y, {1, 3}, {-1, 2, 2}, 0);
}

TEST_CASE("Round rounds half to even in f32 and f64", "[unit][exporter_ops]") {
  const std::vector<double> in = {0.5, 1.5, 2.5, -2.5, -0.5, 2.4, 2.6, -1.5};
  const std::vector<double> want = {0, 2, 2, -2, 0, 2, 3, -2};
  Tensor y;
  unary(UnaryOp::Round, f64(in, {8}), y);
  check_values(y, {8}, want, 0);
  unary(UnaryOp::Round, f32(std::vector<float>(in.begin(), in.end()), {2, 4}), y);
  check_values(y, {2, 4}, want, 0);
}

TEST_CASE("Softplus, LeakyRelu and HardSigmoid", "[unit][exporter_ops]") {
  Tensor y;
  unary(UnaryOp::Softplus, f64({0, 1, 100, -100}, {4}), y);
  check_values(y, {4}, {std::log(2.0), std::log(1.0 + std::exp(1.0)), 100, 0}, 1e-12);
  unary(UnaryOp::Softplus, f32({0.0f, 100.0f}, {2}), y);
  check_values(y, {2}, {0.693147, 100}, 1e-5);
  unary(UnaryOp::LeakyRelu, f32({-2.0f, 0.0f, 3.0f}, {3}), y, {0.01});
  check_values(y, {3}, {-0.02, 0, 3}, 1e-7);
  unary(UnaryOp::LeakyRelu, f64({-3, 4}, {2}), y, {0.5});
  check_values(y, {2}, {-1.5, 4}, 0);
  unary(UnaryOp::HardSigmoid, f32({-5.0f, -1.0f, 0.0f, 1.0f, 5.0f}, {5}), y, {0.2, 0.5});
  check_values(y, {5}, {0, 0.3, 0.5, 0.7, 1}, 1e-6);
}

TEST_CASE("float-only math ops reject integer tensors", "[unit][exporter_ops]") {
  Tensor y;
  require_error([&] { unary(UnaryOp::Reciprocal, i64({2}, {1}), y); }, ErrorKind::Input, {"Reciprocal", "i64"});
  require_error([&] { unary(UnaryOp::LeakyRelu, i64({2}, {1}), y, {0.01}); }, ErrorKind::Input, {"LeakyRelu"});
}

TEST_CASE("Xor, IsNaN and IsInf", "[unit][exporter_ops]") {
  Tensor y;
  logical(LogicalOp::Xor, bools({true, false, true, true}, {2, 2}), bools({true, false}, {2}), y);
  REQUIRE(y.shape() == Shape{2, 2});
  CHECK(values_of<bool>(y) == std::vector<bool>{false, false, false, true});
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = f64({nan, inf, -inf, 0.0, -2.0}, {5});
  float_test(true, true, true, x, y);
  CHECK(y.dtype() == DType::Bool);
  CHECK(values_of<bool>(y) == std::vector<bool>{true, false, false, false, false});
  float_test(false, true, true, x, y);
  CHECK(values_of<bool>(y) == std::vector<bool>{false, true, true, false, false});
  float_test(false, true, false, x, y);
  CHECK(values_of<bool>(y) == std::vector<bool>{false, false, true, false, false});
  float_test(false, false, true, f32({std::numeric_limits<float>::infinity(), 1.0f}, {2}), y);
  CHECK(values_of<bool>(y) == std::vector<bool>{true, false});
  require_error([&] { float_test(true, true, true, i64({1}, {1}), y); }, ErrorKind::Input, {"IsNaN", "i64"});
}

TEST_CASE("PRelu with a per-channel slope, and variadic Sum and Mean", "[unit][exporter_ops]") {
  Tensor y;
  binary(BinaryOp::PRelu, f32({-2.0f, 3.0f, -4.0f, 5.0f}, {2, 2}), f32({0.5f, 0.25f}, {2, 1}), y);
  check_values(y, {2, 2}, {-1, 3, -1, 5}, 0);
  binary(BinaryOp::PRelu, i64({-6, 7}, {2}), i64({2}, {1}), y);
  CHECK(values_of<std::int64_t>(y) == std::vector<std::int64_t>{-12, 7});
  // The slope broadcasts to x one way only.
  require_error([&] { binary(BinaryOp::PRelu, f32({1, -2, 3}, {3}), f32({1, 1, 1, 1, 1, 1}, {2, 3}), y); },
                ErrorKind::Shape, {"PRelu", "slope [2, 3]", "x [3]"});
  const Tensor a = f64({1, 2, 3, 4}, {2, 2}), b = f64({10, 20}, {2}), c = f64({100}, {1});
  const Tensor* three[] = {&a, &b, &c};
  sum_of(three, false, y);
  check_values(y, {2, 2}, {111, 122, 113, 124}, 0);
  sum_of(three, true, y);
  check_values(y, {2, 2}, {37, 122.0 / 3, 113.0 / 3, 124.0 / 3}, 1e-12);
  const Tensor* one[] = {&a};
  sum_of(one, true, y);
  check_values(y, {2, 2}, {1, 2, 3, 4}, 0);
  const Tensor ints = i64({1}, {1});
  const Tensor* mixed[] = {&a, &ints};
  require_error([&] { sum_of(mixed, false, y); }, ErrorKind::Input, {"Sum", "input 1"});
  const Tensor* int_mean[] = {&ints, &ints};
  require_error([&] { sum_of(int_mean, true, y); }, ErrorKind::Input, {"Mean", "i64"});
  const Tensor bad = f64({1, 2, 3}, {3});
  const Tensor* unbroadcastable[] = {&a, &bad};
  require_error([&] { sum_of(unbroadcastable, false, y); }, ErrorKind::Shape, {"[2, 2]", "[3]"});
}

TEST_CASE("Not, And and Or on bool tensors with broadcasting", "[unit][exporter_ops]") {
  Tensor y;
  logical_not(bools({true, false}, {2}), y);
  CHECK(values_of<bool>(y) == std::vector<bool>{false, true});
  const Tensor a = bools({true, false, true, true}, {2, 2});
  logical(LogicalOp::And, a, bools({true, false}, {2}), y);
  REQUIRE(y.shape() == Shape{2, 2});
  CHECK(values_of<bool>(y) == std::vector<bool>{true, false, true, false});
  logical(LogicalOp::Or, a, bools({false, true}, {2, 1}), y);
  CHECK(values_of<bool>(y) == std::vector<bool>{true, false, true, true});
  logical(LogicalOp::Or, bools({false}, {}), bools({false, true, false}, {3, 1}), y);
  REQUIRE(y.shape() == Shape{3, 1});
  CHECK(values_of<bool>(y) == std::vector<bool>{false, true, false});
  require_error([&] { logical(LogicalOp::And, a, bools({true, true, true}, {3}), y); }, ErrorKind::Shape,
                {"And", "[2, 2]", "[3]"});
  require_error([&] { logical_not(f32({1.0f}, {1}), y); }, ErrorKind::Input, {"Not", "f32"});
}

TEST_CASE("Mod with fmod 0 takes the divisor's sign, fmod 1 the dividend's", "[unit][exporter_ops]") {
  const Tensor a = i64({-7, 7, -7, 7}, {4});
  const Tensor b = i64({3, -3, -3, 3}, {4});
  Tensor y;
  mod(false, a, b, y);
  CHECK(values_of<std::int64_t>(y) == std::vector<std::int64_t>{2, -2, -1, 1});
  mod(true, a, b, y);
  CHECK(values_of<std::int64_t>(y) == std::vector<std::int64_t>{-1, 1, -1, 1});
  mod(true, f64({-7.5, 7.5}, {2}), f64({2, -2}, {2}), y);
  check_values(y, {2}, {-1.5, 1.5}, 0);
  mod(false, f32({-7.5f, 7.5f}, {2}), f32({2.0f, -2.0f}, {2}), y);
  check_values(y, {2}, {0.5, -0.5}, 0);
  // Broadcasting: [2, 2] mod [2] column-wise.
  mod(false, Tensor::from_vector<std::int32_t>({5, -5, 9, -9}, {2, 2}), Tensor::from_vector<std::int32_t>({4, 4}, {2}),
      y);
  REQUIRE(y.shape() == Shape{2, 2});
  CHECK(values_of<std::int32_t>(y) == std::vector<std::int32_t>{1, 3, 1, 3});
}

TEST_CASE("Mod errors: integer modulo by zero and mismatched dtypes", "[unit][exporter_ops]") {
  Tensor y;
  require_error([&] { mod(false, i64({4}, {1}), i64({0}, {1}), y); }, ErrorKind::Input, {"Mod", "zero"});
  require_error([&] { mod(true, i64({4}, {1}), i64({0}, {1}), y); }, ErrorKind::Input, {"zero"});
  require_error([&] { mod(false, i64({4}, {1}), f32({1.0f}, {1}), y); }, ErrorKind::Input, {"Mod", "dtypes"});
}

TEST_CASE("Dropout passes values through and gives an all-true mask", "[unit][exporter_ops]") {
  const Tensor x = f32({1.0f, -2.0f, 3.0f, 4.0f}, {2, 2});
  Tensor y, mask;
  const Tensor off = Tensor::scalar<bool>(false);
  dropout(x, &off, y, &mask);
  check_values(y, {2, 2}, {1, -2, 3, 4}, 0);
  REQUIRE(mask.shape() == Shape{2, 2});
  CHECK(values_of<bool>(mask) == std::vector<bool>{true, true, true, true});
  dropout(x, nullptr, y, nullptr);
  check_values(y, {2, 2}, {1, -2, 3, 4}, 0);
  const Tensor on = Tensor::scalar<bool>(true);
  require_error([&] { dropout(x, &on, y, &mask); }, ErrorKind::Input, {"Dropout", "training mode is not supported"});
}

TEST_CASE("ConstantOfShape fills the given shape with the value", "[unit][exporter_ops]") {
  Tensor y;
  constant_of_shape(ints({2, 3}), Tensor::from_vector<std::int64_t>({7}, {1}), y);
  REQUIRE(y.dtype() == DType::I64);
  REQUIRE(y.shape() == Shape{2, 3});
  CHECK(values_of<std::int64_t>(y) == std::vector<std::int64_t>(6, 7));
  constant_of_shape(ints({2}), Tensor(), y);
  REQUIRE(y.dtype() == DType::F32);
  check_values(y, {2}, {0, 0}, 0);
  constant_of_shape(ints({}), Tensor::scalar<double>(2.5), y);
  check_values(y, {}, {2.5}, 0);
  constant_of_shape(ints({0, 4}), Tensor::scalar<double>(2.5), y);
  CHECK(y.shape() == Shape{0, 4});
  require_error([&] { constant_of_shape(ints({2, -1}), Tensor(), y); }, ErrorKind::Input,
                {"ConstantOfShape", "negative"});
  require_error([&] { constant_of_shape(ints({2}), f32({1.0f, 2.0f}, {2}), y); }, ErrorKind::Input, {"one element"});
}

TEST_CASE("Range with positive, negative and fractional deltas", "[unit][exporter_ops]") {
  Tensor y;
  auto s = [](std::int64_t v) { return Tensor::scalar<std::int64_t>(v); };
  range(s(1), s(10), s(3), y);
  CHECK(values_of<std::int64_t>(y) == std::vector<std::int64_t>{1, 4, 7});
  range(s(10), s(4), s(-2), y);
  CHECK(values_of<std::int64_t>(y) == std::vector<std::int64_t>{10, 8, 6});
  range(s(10), s(3), s(-2), y);
  CHECK(values_of<std::int64_t>(y) == std::vector<std::int64_t>{10, 8, 6, 4});
  range(s(5), s(1), s(1), y);
  CHECK(y.shape() == Shape{0});
  range(Tensor::scalar<float>(0.0f), Tensor::scalar<float>(1.0f), Tensor::scalar<float>(0.25f), y);
  check_values(y, {4}, {0, 0.25, 0.5, 0.75}, 0);
  range(Tensor::scalar<double>(1.0), Tensor::scalar<double>(0.0), Tensor::scalar<double>(-0.4), y);
  check_values(y, {3}, {1, 0.6, 0.2}, 1e-15);
  require_error([&] { range(s(0), s(4), s(0), y); }, ErrorKind::Input, {"Range", "delta is 0"});
  require_error([&] { range(s(0), Tensor::scalar<float>(4.0f), s(1), y); }, ErrorKind::Input, {"limit", "i64"});
}

TEST_CASE("Tile repeats along each dim", "[unit][exporter_ops]") {
  const Tensor x = f32({1, 2, 3, 4}, {2, 2});
  Tensor y;
  tile(x, ints({1, 2}), y);
  check_values(y, {2, 4}, {1, 2, 1, 2, 3, 4, 3, 4}, 0);
  tile(x, ints({2, 1}), y);
  check_values(y, {4, 2}, {1, 2, 3, 4, 1, 2, 3, 4}, 0);
  tile(f64({5, 6}, {2}), ints({0}), y);
  CHECK(y.shape() == Shape{0});
  require_error([&] { tile(x, ints({2}), y); }, ErrorKind::Shape, {"Tile", "[2]", "f32[2, 2]"});
}

TEST_CASE("Pad in constant mode, with a value and with negative pads", "[unit][exporter_ops]") {
  const Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y;
  const Tensor nine = Tensor::scalar<float>(9.0f);
  pad(PadMode::Constant, x, ints({0, 1, 1, 0}), &nine, y);
  check_values(y, {3, 4}, {9, 1, 2, 3, 9, 4, 5, 6, 9, 9, 9, 9}, 0);
  // Crop the first column, add a zero column at the end.
  pad(PadMode::Constant, x, ints({0, -1, 0, 1}), nullptr, y);
  check_values(y, {2, 3}, {2, 3, 0, 5, 6, 0}, 0);
  // Output aliasing the input.
  Tensor same = f64({1, 2}, {2});
  pad(PadMode::Constant, same, ints({1, 1}), nullptr, same);
  check_values(same, {4}, {0, 1, 2, 0}, 0);
}

TEST_CASE("Pad in reflect and edge modes", "[unit][exporter_ops]") {
  Tensor y;
  pad(PadMode::Reflect, f32({1, 2, 3, 4}, {4}), ints({2, 1}), nullptr, y);
  check_values(y, {7}, {3, 2, 1, 2, 3, 4, 3}, 0);
  pad(PadMode::Reflect, f64({1, 2, 3, 4, 5, 6}, {2, 3}), ints({1, 0, 0, 0}), nullptr, y);
  check_values(y, {3, 3}, {4, 5, 6, 1, 2, 3, 4, 5, 6}, 0);
  pad(PadMode::Edge, f32({1, 2, 3}, {3}), ints({2, 1}), nullptr, y);
  check_values(y, {6}, {1, 1, 1, 2, 3, 3}, 0);
  pad(PadMode::Edge, f32({1, 2, 3, 4}, {2, 2}), ints({0, 1, 1, 0}), nullptr, y);
  check_values(y, {3, 3}, {1, 1, 2, 3, 3, 4, 3, 3, 4}, 0);
}

TEST_CASE("Pad errors name the pads and the input", "[unit][exporter_ops]") {
  const Tensor x = f32({1, 2, 3}, {3});
  Tensor y;
  require_error([&] { pad(PadMode::Reflect, x, ints({3, 0}), nullptr, y); }, ErrorKind::Shape, {"reflect", "[3, 0]"});
  require_error([&] { pad(PadMode::Constant, x, ints({1, 1, 1, 1}), nullptr, y); }, ErrorKind::Shape,
                {"Pad", "2 * rank", "f32[3]"});
  require_error([&] { pad(PadMode::Constant, x, ints({-2, -2}), nullptr, y); }, ErrorKind::Shape, {"crops"});
  require_error([&] { pad(PadMode::Edge, f32({}, {0}), ints({1, 0}), nullptr, y); }, ErrorKind::Shape, {"empty"});
  const Tensor wrong = Tensor::scalar<double>(1.0);
  require_error([&] { pad(PadMode::Constant, x, ints({1, 1}), &wrong, y); }, ErrorKind::Input, {"constant_value"});
}

TEST_CASE("Split into equal parts and by explicit sizes", "[unit][exporter_ops]") {
  const Tensor x = f32({0, 1, 2, 3, 4, 5, 6, 7}, {2, 4});
  Tensor a, b, c;
  std::vector<Tensor*> two = {&a, &b};
  split(1, x, nullptr, two);
  check_values(a, {2, 2}, {0, 1, 4, 5}, 0);
  check_values(b, {2, 2}, {2, 3, 6, 7}, 0);
  const Tensor sizes = ints({1, 3});
  split(-1, x, &sizes, two);
  check_values(a, {2, 1}, {0, 4}, 0);
  check_values(b, {2, 3}, {1, 2, 3, 5, 6, 7}, 0);
  std::vector<Tensor*> three = {&a, &b, &c};
  const Tensor with_empty = ints({1, 0, 1});
  split(0, x, &with_empty, three);
  check_values(a, {1, 4}, {0, 1, 2, 3}, 0);
  CHECK(b.shape() == Shape{0, 4});
  check_values(c, {1, 4}, {4, 5, 6, 7}, 0);
}

TEST_CASE("Split errors: parts that do not divide, sizes that do not sum", "[unit][exporter_ops]") {
  const Tensor x = f64({0, 1, 2, 3, 4, 5}, {2, 3});
  Tensor a, b;
  std::vector<Tensor*> two = {&a, &b};
  require_error([&] { split(1, x, nullptr, two); }, ErrorKind::Shape, {"Split", "3", "2 equal parts"});
  const Tensor sizes = ints({1, 1});
  require_error([&] { split(1, x, &sizes, two); }, ErrorKind::Shape, {"[1, 1]", "summing to 3"});
  require_error([&] { split(2, x, nullptr, two); }, ErrorKind::Shape, {"axis 2"});
}

TEST_CASE("Pad copies rows in one piece and agrees with an element-by-element pad in every mode",
          "[unit][exporter_ops]") {
  // Element by element: each output index maps back to an input index per dim.
  const auto naive = [](PadMode mode, const Tensor& x, const std::vector<std::int64_t>& pads, float fill) {
    const std::size_t rank = x.shape().size();
    Shape out(rank);
    for (std::size_t k = 0; k < rank; ++k) out[k] = x.shape()[k] + pads[k] + pads[k + rank];
    std::vector<float> v;
    std::vector<std::int64_t> at(rank, 0);
    for (std::int64_t o = 0; o < checked_numel(out); ++o) {
      std::int64_t flat = 0;
      bool constant = false;
      for (std::size_t k = 0; k < rank; ++k) {
        const std::int64_t dim = x.shape()[k];
        std::int64_t i = at[k] - pads[k];
        if (i < 0 || i >= dim) {
          if (mode == PadMode::Constant) constant = true;
          else if (mode == PadMode::Edge) i = i < 0 ? 0 : dim - 1;
          else i = i < 0 ? -i : 2 * (dim - 1) - i;
        }
        flat = flat * dim + i;
      }
      v.push_back(constant ? fill : x.data<float>()[flat]);
      for (std::size_t k = rank; k-- > 0;) {
        if (++at[k] < out[k]) break;
        at[k] = 0;
      }
    }
    return v;
  };
  std::vector<float> values(3 * 4 * 5 * 6);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f - 7;
  const Tensor x = Tensor::from_vector<float>(values, {3, 4, 5, 6});
  const std::vector<std::vector<std::int64_t>> cases = {
      {0, 0, 0, 2, 0, 0, 0, 1}, {1, 0, 2, 0, 0, 1, 0, 3}, {0, 1, 1, 1, 1, 0, 1, 1},
      {0, 0, -1, -2, 0, 0, 1, -1}, {0, 0, 0, 0, 0, 0, 0, 0}, {0, 2, 0, 0, 0, 0, 0, 0}};
  const Tensor nine = Tensor::scalar<float>(9.0f);
  for (PadMode mode : {PadMode::Constant, PadMode::Edge, PadMode::Reflect})
    for (const auto& pads : cases) {
      INFO("mode " << static_cast<int>(mode) << ", pads " << shape_to_string(pads));
      Tensor y;
      pad(mode, x, ints(pads), mode == PadMode::Constant ? &nine : nullptr, y);
      CHECK(values_of<float>(y) == naive(mode, x, pads, 9.0f));
    }
}
