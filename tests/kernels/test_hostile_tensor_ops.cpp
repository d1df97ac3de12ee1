// Tests of Pad, Tile, Split, Concat, Gather, Slice, Range, MatMul and
// ConstantOfShape kernels against hostile run-time operands: int64 overflow in
// pads, repeats, split sizes, concatenated lengths, slice steps and range
// values, huge dims of empty tensors, and shape inputs longer than the rank limit.
#include <catch2/catch.hpp>

#include <cstdint>
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

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kQuarter = std::int64_t{1} << 62;

// f32[1, 2, 3, 4, 5].
Tensor one_to_five() { return Tensor::from_vector<float>({1, 2, 3, 4, 5}, {5}); }

}  // namespace

TEST_CASE("Pad rejects pads whose padded length or source index overflows int64", "[unit][hostile_ops]") {
  Tensor y;
  const Tensor x = one_to_five();
  require_error([&] { pad(PadMode::Reflect, x, ints({kMin, kMin}), nullptr, y); }, ErrorKind::Shape, {"Pad", "f32[5]"});
  require_error([&] { pad(PadMode::Edge, x, ints({kMax, 0}), nullptr, y); }, ErrorKind::Shape, {"overflows"});
  // 5 + INT64_MIN + INT64_MAX = 4 does not overflow, but o - INT64_MIN does.
  require_error([&] { pad(PadMode::Constant, x, ints({kMin, kMax}), nullptr, y); }, ErrorKind::Shape,
                {"source index overflows"});
  require_error([&] { pad(PadMode::Edge, x, ints({kMax, kMin}), nullptr, y); }, ErrorKind::Shape, {"overflows"});
}

TEST_CASE("Reflect pads must stay inside the dim in both directions", "[unit][hostile_ops]") {
  Tensor y;
  const Tensor x = one_to_five();
  // Cropping 9 and reflecting 5 gives one element that would reflect from index 9 to -1.
  require_error([&] { pad(PadMode::Reflect, x, ints({-9, 5}), nullptr, y); }, ErrorKind::Shape,
                {"reflect", "[-9, 5]", "both directions"});
  require_error([&] { pad(PadMode::Reflect, x, ints({5, -9}), nullptr, y); }, ErrorKind::Shape, {"reflect"});
  // A crop smaller than the dim next to a reflect still works: [1..5] reflected by 2 at the end is
  // [1, 2, 3, 4, 5, 4, 3]; cropping one at the start leaves [2, 3, 4, 5, 4, 3].
  pad(PadMode::Reflect, x, ints({-1, 2}), nullptr, y);
  check_values(y, {6}, {2, 3, 4, 5, 4, 3});
  // Pure cropping of the whole dim is still an empty result.
  pad(PadMode::Reflect, x, ints({-5, 0}), nullptr, y);
  CHECK(y.shape() == Shape{0});
}

TEST_CASE("Pad with a huge padded dim but an empty output allocates nothing", "[unit][hostile_ops]") {
  Tensor y;
  const Tensor x = Tensor::empty(DType::F32, {0, 1});
  const std::int64_t huge = std::int64_t{1} << 32;
  pad(PadMode::Constant, x, ints({0, huge, 0, 0}), nullptr, y);
  CHECK(y.shape() == Shape{0, huge + 1});
  CHECK(y.numel() == 0);
}

TEST_CASE("Pad checks the allocation limit before building index tables", "[unit][hostile_ops]") {
  Tensor y;
  const Tensor x = Tensor::from_vector<float>({7}, {1, 1});
  ScopedTensorAllocationLimit limit(1 << 20);
  require_error([&] { pad(PadMode::Constant, x, ints({0, std::int64_t{1} << 40, 0, 0}), nullptr, y); },
                ErrorKind::Resource, {});
  // Within the limit the same shape of call still pads: [[7]] with one row above and one column after.
  pad(PadMode::Constant, x, ints({1, 0, 0, 1}), nullptr, y);
  check_values(y, {2, 2}, {0, 0, 7, 0});
}

TEST_CASE("Tile rejects repeats whose product overflows and negative repeats", "[unit][hostile_ops]") {
  Tensor y;
  const Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, {4});
  // 4 * (2^62 + 1) wraps to 4 in int64.
  const std::int64_t reps = (std::int64_t{1} << 62) + 1;
  require_error([&] { tile(x, ints({reps}), y); }, ErrorKind::Resource,
                {"Tile", "f32[4]", "[" + std::to_string(reps) + "]"});
  require_error([&] { tile(x, ints({-1}), y); }, ErrorKind::Input, {"Tile", "negative"});
  tile(x, ints({2}), y);
  check_values(y, {8}, {1, 2, 3, 4, 1, 2, 3, 4});
}

TEST_CASE("Split rejects sizes whose sum overflows and negative sizes", "[unit][hostile_ops]") {
  const Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, {4});
  Tensor a, b, c;
  Tensor* three[] = {&a, &b, &c};
  // INT64_MAX + INT64_MAX + 6 wraps to 4, the dim.
  const Tensor wrapping = ints({kMax, kMax, 6});
  require_error([&] { split(0, x, &wrapping, three); }, ErrorKind::Shape, {"Split", "summing to 4"});
  const Tensor negative = ints({-2, 3, 3});
  require_error([&] { split(0, x, &negative, three); }, ErrorKind::Input, {"Split", "negative"});
  const Tensor good = ints({1, 0, 3});
  split(0, x, &good, three);
  check_values(a, {1}, {1});
  check_values(b, {0}, {});
  check_values(c, {3}, {2, 3, 4});
}

TEST_CASE("ConstantOfShape rejects a shape input longer than the rank limit", "[unit][hostile_ops]") {
  Tensor y;
  const Tensor long_shape = ints(std::vector<std::int64_t>(kMaxTensorRank + 1, 1));
  require_error([&] { constant_of_shape(long_shape, Tensor(), y); }, ErrorKind::Shape,
                {"ConstantOfShape", "i64[65]", "rank"});
}

TEST_CASE("Tile of an empty tensor by huge repeats gives the empty result without walking them",
          "[unit][hostile_ops]") {
  // [1, 0] by [2^62, 4]: the output [2^62, 0] is empty, but the view
  // [2^62, 1, 4, 0] it was copied through multiplies to 2^64 before the 0.
  Tensor y;
  tile(Tensor::empty(DType::F32, {1, 0}), ints({kQuarter, 4}), y);
  CHECK(y.shape() == Shape{kQuarter, 0});
}

TEST_CASE("Concat rejects lengths along the axis whose sum overflows int64", "[unit][hostile_ops]") {
  // Empty tensors hold no data, so their lengths along the axis can be anything.
  Tensor y;
  const Tensor longest = Tensor::empty(DType::F32, {0, kMax});
  const Tensor one = Tensor::empty(DType::F32, {0, 1});
  const Tensor* wrapping[] = {&longest, &one};
  require_error([&] { concat(1, wrapping, y); }, ErrorKind::Resource, {"Concat", "axis 1", "overflows int64"});
  const Tensor rest = Tensor::empty(DType::F32, {0, kMax - kQuarter});
  const Tensor quarter = Tensor::empty(DType::F32, {0, kQuarter});
  const Tensor* fitting[] = {&quarter, &rest};
  concat(1, fitting, y);
  CHECK(y.shape() == Shape{0, kMax});
}

TEST_CASE("Concat and Gather of empty tensors with 2^62 rows return without walking the rows", "[unit][hostile_ops]") {
  Tensor y;
  // 2^62 rows of nothing: no loop over the rows.
  const Tensor rows = Tensor::empty(DType::F32, {kQuarter, 0});
  const Tensor* twice[] = {&rows, &rows};
  concat(1, twice, y);
  CHECK(y.shape() == Shape{kQuarter, 0});
  gather(1, rows, Tensor::empty(DType::I64, {0}), y);
  CHECK(y.shape() == Shape{kQuarter, 0});
}

TEST_CASE("Slice steps of INT64_MAX and INT64_MIN on a dim of INT64_MAX select one element", "[unit][hostile_ops]") {
  Tensor y;
  const Tensor x = Tensor::empty(DType::F32, {0, kMax});
  const Tensor axis = ints({1});
  const Tensor forward = ints({kMax});
  slice(x, ints({0}), ints({kMax}), &axis, &forward, y);
  CHECK(y.shape() == Shape{0, 1});
  const Tensor backward = ints({kMin});
  slice(x, ints({-1}), ints({kMin}), &axis, &backward, y);
  CHECK(y.shape() == Shape{0, 1});
  // On an ordinary dim the same steps still pick the first (or last) element.
  const Tensor five = one_to_five();
  const Tensor axis0 = ints({0});
  slice(five, ints({0}), ints({kMax}), &axis0, &forward, y);
  check_values(y, {1}, {1});
  slice(five, ints({-1}), ints({kMin}), &axis0, &backward, y);
  check_values(y, {1}, {5});
}

TEST_CASE("Range computes values whose offset from start overflows the integer type", "[unit][hostile_ops]") {
  // start + i * delta fits at every i, but i * delta alone does not from i = 2.
  Tensor y;
  range(Tensor::scalar<std::int64_t>(kMin), Tensor::scalar<std::int64_t>(kMax), Tensor::scalar<std::int64_t>(kQuarter),
        y);
  REQUIRE(y.shape() == Shape{4});
  CHECK(values_of<std::int64_t>(y) == std::vector<std::int64_t>{kMin, -kQuarter, 0, kQuarter});
  constexpr std::int32_t kMin32 = std::numeric_limits<std::int32_t>::min();
  constexpr std::int32_t kMax32 = std::numeric_limits<std::int32_t>::max();
  range(Tensor::scalar<std::int32_t>(kMin32), Tensor::scalar<std::int32_t>(kMax32),
        Tensor::scalar<std::int32_t>(std::int32_t{1} << 30), y);
  REQUIRE(y.shape() == Shape{4});
  CHECK(values_of<std::int32_t>(y) == std::vector<std::int32_t>{kMin32, -(1 << 30), 0, 1 << 30});
}

TEST_CASE("MatMul with an empty result and 2^62 batches returns at once", "[unit][hostile_ops]") {
  Tensor y;
  matmul(Tensor::empty(DType::F32, {kQuarter, 0, 1}), Tensor::from_vector<float>({2}, {1, 1}), y);
  CHECK(y.shape() == Shape{kQuarter, 0, 1});
}
