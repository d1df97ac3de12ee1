// Tests of the reference shape and data-movement kernels.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/reference.h"
#include "tests/kernels/tensor_checks.h"

using namespace canary;
using namespace canary::kernels;
using canary::test::ints;
using canary::test::require_error;
using canary::test::values_of;

using I64 = std::int64_t;
using V = std::vector<float>;
using VI = std::vector<I64>;

// A [2, 3] f32 tensor holding 0..5.
static Tensor zero_to_five() { return Tensor::from_vector<float>({0, 1, 2, 3, 4, 5}, {2, 3}); }

// An f32 tensor of `shape` holding 0, 1, 2, ...
static Tensor iota(std::initializer_list<I64> shape) {
  Tensor t = Tensor::empty(DType::F32, shape);
  for (I64 i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

TEST_CASE("reshape copies 0 dims, infers -1 and returns a view", "[unit][shape_ops]") {
  Tensor x = iota({2, 3, 4});
  Tensor y;
  reshape(x, ints({0, -1}), false, y);
  CHECK(y.shape() == Shape{2, 12});
  CHECK(y.shares_storage_with(x));
  reshape(x, Tensor::from_vector<std::int32_t>({-1, 4}, {2}), false, y);
  CHECK(y.shape() == Shape{6, 4});
  reshape(Tensor::empty(DType::F32, {0, 4}), ints({0, 7}), true, y);
  CHECK(y.shape() == Shape{0, 7});
}

TEST_CASE("reshape errors name both shapes", "[unit][shape_ops]") {
  Tensor x = iota({2, 3});
  Tensor y;
  require_error([&] { reshape(x, ints({4, 2}), false, y); }, ErrorKind::Shape, {"[2, 3]", "[4, 2]"});
  require_error([&] { reshape(x, ints({-1, -1}), false, y); }, ErrorKind::Shape, {"[2, 3]", "-1"});
  require_error([&] { reshape(x, ints({4, -1}), false, y); }, ErrorKind::Shape, {"[4, -1]"});
  require_error([&] { reshape(x, ints({-2, 3}), false, y); }, ErrorKind::Shape, {"negative"});
  require_error([&] { reshape(x, Tensor::from_vector<float>({6}, {1}), false, y); }, ErrorKind::Input,
                {"Reshape shape", "f32[1]"});
}

TEST_CASE("transpose reverses by default and follows a perm", "[unit][shape_ops]") {
  Tensor y;
  transpose({}, zero_to_five(), y);
  CHECK(y.shape() == Shape{3, 2});
  CHECK(values_of<float>(y) == V{0, 3, 1, 4, 2, 5});
  const std::vector<I64> perm{1, 0, 2};
  transpose(perm, iota({2, 2, 2}), y);
  CHECK(values_of<float>(y) == V{0, 1, 4, 5, 2, 3, 6, 7});
  const std::vector<I64> bad{0, 0};
  require_error([&] { transpose(bad, zero_to_five(), y); }, ErrorKind::Shape, {"Transpose", "[0, 0]", "[2, 3]"});
  const std::vector<I64> short_perm{0};
  require_error([&] { transpose(short_perm, zero_to_five(), y); }, ErrorKind::Shape, {"Transpose"});
}

TEST_CASE("transpose of integers and into its own input", "[unit][shape_ops]") {
  Tensor x = Tensor::from_vector<I64>({1, 2, 3, 4, 5, 6}, {3, 2});
  transpose({}, x, x);
  CHECK(x.shape() == Shape{2, 3});
  CHECK(values_of<I64>(x) == VI{1, 3, 5, 2, 4, 6});
}

TEST_CASE("concat along an axis", "[unit][shape_ops]") {
  Tensor a = Tensor::from_vector<float>({1, 2}, {2, 1});
  Tensor b = Tensor::from_vector<float>({3, 4, 5, 6}, {2, 2});
  Tensor y;
  const std::vector<const Tensor*> ab{&a, &b};
  concat(-1, ab, y);
  CHECK(y.shape() == Shape{2, 3});
  CHECK(values_of<float>(y) == V{1, 3, 4, 2, 5, 6});
  Tensor c = Tensor::from_vector<float>({7, 8}, {1, 2});
  const std::vector<const Tensor*> bc{&b, &c};
  concat(0, bc, y);
  CHECK(values_of<float>(y) == V{3, 4, 5, 6, 7, 8});
  Tensor e = Tensor::empty(DType::F32, {2, 0});
  const std::vector<const Tensor*> ae{&a, &e};
  concat(1, ae, y);
  CHECK(values_of<float>(y) == V{1, 2});
}

TEST_CASE("concat rejects mismatched inputs", "[unit][shape_ops]") {
  Tensor a = Tensor::empty(DType::F32, {2, 1});
  Tensor b = Tensor::empty(DType::F32, {3, 2});
  Tensor i = Tensor::empty(DType::I64, {2, 1});
  Tensor y;
  const std::vector<const Tensor*> ab{&a, &b};
  require_error([&] { concat(1, ab, y); }, ErrorKind::Shape, {"Concat", "[3, 2]", "[2, 1]"});
  const std::vector<const Tensor*> ai{&a, &i};
  require_error([&] { concat(0, ai, y); }, ErrorKind::Input, {"Concat", "i64"});
  const std::vector<const Tensor*> aa{&a, &a};
  require_error([&] { concat(2, aa, y); }, ErrorKind::Shape, {"axis 2"});
  require_error([&] { concat(0, {}, y); }, ErrorKind::Input, {"Concat"});
}

TEST_CASE("slice with positive, negative and clamped bounds", "[unit][shape_ops]") {
  Tensor x = iota({10});
  Tensor y;
  slice(x, ints({2}), ints({7}), nullptr, nullptr, y);
  CHECK(values_of<float>(y) == V{2, 3, 4, 5, 6});
  slice(x, ints({-3}), ints({std::numeric_limits<I64>::max()}), nullptr, nullptr, y);
  CHECK(values_of<float>(y) == V{7, 8, 9});
  slice(x, ints({-100}), ints({3}), nullptr, nullptr, y);
  CHECK(values_of<float>(y) == V{0, 1, 2});
  slice(x, ints({20}), ints({30}), nullptr, nullptr, y);
  CHECK(y.shape() == Shape{0});
  Tensor step = ints({3});
  slice(x, ints({1}), ints({9}), nullptr, &step, y);
  CHECK(values_of<float>(y) == V{1, 4, 7});
}

TEST_CASE("slice with negative steps", "[unit][shape_ops]") {
  Tensor x = iota({10});
  Tensor y;
  Tensor minus_two = ints({-2});
  slice(x, ints({-1}), ints({std::numeric_limits<I64>::min()}), nullptr, &minus_two, y);
  CHECK(values_of<float>(y) == V{9, 7, 5, 3, 1});
  Tensor minus_one = ints({-1});
  slice(x, ints({-1}), ints({std::numeric_limits<I64>::min()}), nullptr, &minus_one, y);
  CHECK(values_of<float>(y) == V{9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  slice(x, ints({100}), ints({6}), nullptr, &minus_one, y);
  CHECK(values_of<float>(y) == V{9, 8, 7});
  slice(x, ints({2}), ints({5}), nullptr, &minus_one, y);
  CHECK(y.numel() == 0);
}

TEST_CASE("slice on chosen axes of a matrix", "[unit][shape_ops]") {
  Tensor x = iota({3, 4});
  Tensor y;
  Tensor axes = ints({-1});
  Tensor steps = ints({2});
  slice(x, ints({1}), ints({4}), &axes, &steps, y);
  CHECK(y.shape() == Shape{3, 2});
  CHECK(values_of<float>(y) == V{1, 3, 5, 7, 9, 11});
  Tensor both = ints({1, 0});
  slice(x, ints({0, 1}), ints({1, 3}), &both, nullptr, y);
  CHECK(y.shape() == Shape{2, 1});
  CHECK(values_of<float>(y) == V{4, 8});
}

TEST_CASE("slice rejects step 0 and bad axes", "[unit][shape_ops]") {
  Tensor x = iota({3, 4});
  Tensor y;
  Tensor zero = ints({0});
  require_error([&] { slice(x, ints({0}), ints({1}), nullptr, &zero, y); }, ErrorKind::Input, {"Slice", "step is 0"});
  Tensor axes = ints({2});
  require_error([&] { slice(x, ints({0}), ints({1}), &axes, nullptr, y); }, ErrorKind::Shape, {"Slice", "axis 2"});
  Tensor dup = ints({0, -2});
  require_error([&] { slice(x, ints({0, 0}), ints({1, 1}), &dup, nullptr, y); }, ErrorKind::Shape, {"twice"});
  require_error([&] { slice(x, ints({0, 0}), ints({1}), nullptr, nullptr, y); }, ErrorKind::Input, {"lengths"});
}

TEST_CASE("gather along axis 0 and 1 with negative indices", "[unit][shape_ops]") {
  Tensor data = iota({3, 2});
  Tensor y;
  gather(0, data, ints({2, -3}), y);
  CHECK(y.shape() == Shape{2, 2});
  CHECK(values_of<float>(y) == V{4, 5, 0, 1});
  gather(-1, data, Tensor::from_vector<std::int32_t>({1, 1, 0, 1}, {2, 2}), y);
  CHECK(y.shape() == Shape{3, 2, 2});
  CHECK(values_of<float>(y) == V{1, 1, 0, 1, 3, 3, 2, 3, 5, 5, 4, 5});
  gather(0, data, Tensor::scalar<I64>(1), y);
  CHECK(y.shape() == Shape{2});
  CHECK(values_of<float>(y) == V{2, 3});
}

TEST_CASE("gather rejects out-of-range indices", "[unit][shape_ops]") {
  Tensor y;
  require_error([&] { gather(0, iota({3, 2}), ints({3}), y); }, ErrorKind::Input, {"Gather", "index 3", "dim 3"});
  require_error([&] { gather(1, iota({3, 2}), ints({-3}), y); }, ErrorKind::Input, {"index -3", "dim 2"});
  require_error([&] { gather(0, iota({3}), Tensor::scalar<float>(0), y); }, ErrorKind::Input, {"Gather", "f32"});
  require_error([&] { gather(2, iota({3}), ints({0}), y); }, ErrorKind::Shape, {"Gather", "axis 2"});
}

TEST_CASE("squeeze and unsqueeze are views", "[unit][shape_ops]") {
  Tensor x = iota({1, 3, 1});
  Tensor y;
  squeeze(x, nullptr, y);
  CHECK(y.shape() == Shape{3});
  CHECK(y.shares_storage_with(x));
  Tensor last = ints({-1});
  squeeze(x, &last, y);
  CHECK(y.shape() == Shape{1, 3});
  Tensor middle = ints({1});
  require_error([&] { squeeze(x, &middle, y); }, ErrorKind::Shape, {"Squeeze", "[1, 3, 1]", "is 3"});
  unsqueeze(iota({2, 3}), ints({0, -1}), y);
  CHECK(y.shape() == Shape{1, 2, 3, 1});
  unsqueeze(Tensor::scalar<float>(1), ints({0}), y);
  CHECK(y.shape() == Shape{1});
  require_error([&] { unsqueeze(iota({2}), ints({1, 1}), y); }, ErrorKind::Shape, {"Unsqueeze", "twice"});
  require_error([&] { unsqueeze(iota({2}), ints({3}), y); }, ErrorKind::Shape, {"Unsqueeze", "axis 3"});
}

TEST_CASE("shape_of with start and end clamping", "[unit][shape_ops]") {
  Tensor x = Tensor::empty(DType::F32, {2, 3, 4});
  Tensor y;
  shape_of(x, 0, std::nullopt, y);
  CHECK(y.dtype() == DType::I64);
  CHECK(values_of<I64>(y) == VI{2, 3, 4});
  shape_of(x, 1, std::nullopt, y);
  CHECK(values_of<I64>(y) == VI{3, 4});
  shape_of(x, -1, std::nullopt, y);
  CHECK(values_of<I64>(y) == VI{4});
  shape_of(x, -10, -1, y);
  CHECK(values_of<I64>(y) == VI{2, 3});
  shape_of(x, 10, std::nullopt, y);
  CHECK(y.shape() == Shape{0});
  shape_of(Tensor::scalar<float>(1), 0, std::nullopt, y);
  CHECK(y.shape() == Shape{0});
}

TEST_CASE("size_of counts the elements of any dtype and rank", "[unit][shape_ops]") {
  Tensor y;
  size_of(Tensor::empty(DType::F32, {2, 3, 4}), y);
  CHECK(y.dtype() == DType::I64);
  CHECK(y.shape() == Shape{});
  CHECK(values_of<I64>(y) == VI{24});
  size_of(Tensor::scalar<bool>(true), y);
  CHECK(values_of<I64>(y) == VI{1});
  size_of(Tensor::empty(DType::I32, {5, 0, 2}), y);
  CHECK(values_of<I64>(y) == VI{0});
  Tensor x = Tensor::empty(DType::F64, {7, 3});
  size_of(x, x);
  CHECK(x.dtype() == DType::I64);
  CHECK(values_of<I64>(x) == VI{21});
}

TEST_CASE("cast between dtypes", "[unit][shape_ops]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Tensor y;
  cast(Tensor::from_vector<float>({-1.7f, 2.9f, nan, inf, -inf}, {5}), DType::I64, y);
  CHECK(y.dtype() == DType::I64);
  CHECK(values_of<I64>(y) == VI{-1, 2, 0, std::numeric_limits<I64>::max(), std::numeric_limits<I64>::min()});
  cast(Tensor::from_vector<bool>({true, false}, {2}), DType::F32, y);
  CHECK(values_of<float>(y) == V{1, 0});
  cast(Tensor::from_vector<float>({0, -0.5f, 3}, {3}), DType::Bool, y);
  CHECK(values_of<bool>(y) == std::vector<bool>{false, true, true});
  cast(Tensor::from_vector<I64>({5, -6}, {2}), DType::I32, y);
  CHECK(values_of<std::int32_t>(y) == std::vector<std::int32_t>{5, -6});
  cast(Tensor::from_vector<double>({0.1}, {1}), DType::F32, y);
  CHECK(values_of<float>(y) == V{0.1f});
  cast(Tensor::from_vector<std::int32_t>({7}, {1}), DType::F64, y);
  CHECK(values_of<double>(y) == std::vector<double>{7.0});
  Tensor x = iota({2});
  cast(x, DType::F32, y);
  CHECK(values_of<float>(y) == V{0, 1});
}

TEST_CASE("expand broadcasts both ways", "[unit][shape_ops]") {
  Tensor y;
  expand(Tensor::from_vector<float>({1, 2, 3}, {3, 1}), ints({2, 1, 2}), y);
  CHECK(y.shape() == Shape{2, 3, 2});
  CHECK(values_of<float>(y) == V{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  expand(Tensor::from_vector<I64>({4, 5}, {2}), ints({1}), y);
  CHECK(y.shape() == Shape{2});
  CHECK(values_of<I64>(y) == VI{4, 5});
  require_error([&] { expand(iota({3}), ints({2}), y); }, ErrorKind::Shape, {"Expand", "[3]", "[2]"});
}

TEST_CASE("flatten, identity and their views", "[unit][shape_ops]") {
  Tensor x = iota({2, 3, 4});
  Tensor y;
  flatten(1, x, y);
  CHECK(y.shape() == Shape{2, 12});
  CHECK(y.shares_storage_with(x));
  flatten(0, x, y);
  CHECK(y.shape() == Shape{1, 24});
  flatten(-1, x, y);
  CHECK(y.shape() == Shape{6, 4});
  flatten(3, x, y);
  CHECK(y.shape() == Shape{24, 1});
  require_error([&] { flatten(4, x, y); }, ErrorKind::Shape, {"Flatten", "axis 4"});
  identity(x, y);
  CHECK(y.shares_storage_with(x));
  CHECK(y.shape() == x.shape());
}

TEST_CASE("read_int_values accepts 1-D and scalar i64/i32 only", "[unit][shape_ops]") {
  CHECK(read_int_values(Tensor::from_vector<std::int32_t>({3, -1}, {2}), "axes") == VI{3, -1});
  CHECK(read_int_values(Tensor::scalar<I64>(9), "axes") == VI{9});
  require_error([] { read_int_values(Tensor::scalar<float>(1), "Slice starts"); }, ErrorKind::Input,
                {"Slice starts", "f32"});
  require_error([] { read_int_values(Tensor::empty(DType::I64, {2, 2}), "pads"); }, ErrorKind::Input, {"pads", "[2, 2]"});
  require_error([] { read_int_values(Tensor(), "shape"); }, ErrorKind::Input, {"shape", "undefined"});
}

TEST_CASE("copying shape ops reuse the output buffer", "[unit][shape_ops]") {
  Tensor x = zero_to_five();
  Tensor y;
  transpose({}, x, y);
  const void* first = y.raw();
  transpose({}, x, y);
  CHECK(y.raw() == first);
  gather(1, x, ints({2, 0, 1}), y);
  CHECK(y.raw() == first);
  CHECK(values_of<float>(y) == V{2, 0, 1, 5, 3, 4});
}

TEST_CASE("slice with extreme steps selects one element without overflow", "[unit][slice]") {
  const Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, {4});
  const I64 big = std::numeric_limits<I64>::max(), small = std::numeric_limits<I64>::min();
  const Tensor axes = ints({0});
  Tensor y;
  const Tensor forward = ints({big});
  slice(x, ints({0}), ints({big}), &axes, &forward, y);
  CHECK(values_of<float>(y) == V{1});
  const Tensor backward = ints({small});
  slice(x, ints({-1}), ints({small}), &axes, &backward, y);
  CHECK(values_of<float>(y) == V{4});
}
