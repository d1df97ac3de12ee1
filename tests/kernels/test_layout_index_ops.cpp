// Tests of the reference DepthToSpace and SpaceToDepth (both modes, the
// inverse pair), EyeLike (diagonals above, below and past the matrix,
// dtypes), OneHot (negative and out-of-range indices, axes, dtypes) and TopK
// (largest and smallest, ties, NaN, k = 0, axes) with hand-computed values,
// and the errors each reports for bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
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

namespace {

// 0, 1, ..., n - 1 as f32 of the given shape.
Tensor iota(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return Tensor::from_vector<float>(v, shape);
}

TopKParams topk(std::int64_t axis, bool largest) {
  TopKParams p;
  p.axis = axis;
  p.largest = largest;
  return p;
}

}  // namespace

TEST_CASE("DepthToSpace: DCR and CRD read the block offset from different channel bits", "[unit][layout]") {
  Tensor y;
  // Eight 1x1 channels, b = 2, C' = 2: DCR takes channel (i*2 + j)*2 + c,
  // CRD channel c*4 + i*2 + j.
  depth_to_space(2, false, iota({1, 8, 1, 1}), y);
  check_values(y, {1, 2, 2, 2}, {0, 2, 4, 6, 1, 3, 5, 7}, 0);
  depth_to_space(2, true, iota({1, 8, 1, 1}), y);
  check_values(y, {1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}, 0);
  // Four 2x2 channels into one 4x4: out(r, s) = x[(r%2)*2 + s%2][r/2][s/2].
  depth_to_space(2, false, iota({1, 4, 2, 2}), y);
  check_values(y, {1, 1, 4, 4}, {0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15}, 0);
}

TEST_CASE("SpaceToDepth: the inverse of DepthToSpace in DCR mode", "[unit][layout]") {
  Tensor space, depth;
  std::vector<double> ramp(24);
  for (std::size_t k = 0; k < ramp.size(); ++k) ramp[k] = static_cast<double>(k);
  const Tensor x = Tensor::from_vector<double>(ramp, {2, 6, 1, 2});
  depth_to_space(1, false, x, space);  // b = 1 is the identity
  check_values(space, {2, 6, 1, 2}, test::values(x), 0);
  const Tensor c4 = iota({1, 4, 2, 2});
  depth_to_space(2, false, c4, space);
  space_to_depth(2, space, depth);
  check_values(depth, {1, 4, 2, 2}, test::values(c4), 0);
  // One 2x4 image into four 1x2 channels: channel i*2 + j holds pixels (i, 2w + j).
  space_to_depth(2, iota({1, 1, 2, 4}), depth);
  check_values(depth, {1, 4, 1, 2}, {0, 2, 1, 3, 4, 6, 5, 7}, 0);
  // Integers move as they are; an empty batch gives an empty output.
  space_to_depth(2, Tensor::from_vector<std::int64_t>({1, 2, 3, 4}, {1, 1, 2, 2}), depth);
  check_values(depth, {1, 4, 1, 1}, {1, 2, 3, 4}, 0);
  depth_to_space(2, true, Tensor::empty(DType::F32, {0, 4, 3, 3}), space);
  CHECK(space.shape() == Shape{0, 1, 6, 6});
}

TEST_CASE("DepthToSpace and SpaceToDepth: bad input is an Error(Shape)", "[unit][layout]") {
  Tensor y;
  const Tensor x = iota({1, 8, 2, 2});
  require_error([&] { depth_to_space(3, false, x, y); }, ErrorKind::Shape, {"DepthToSpace", "multiple of", "9"});
  require_error([&] { depth_to_space(0, false, x, y); }, ErrorKind::Shape, {"DepthToSpace", "blocksize 0"});
  require_error([&] { depth_to_space(-2, true, x, y); }, ErrorKind::Shape, {"DepthToSpace", "blocksize -2"});
  require_error([&] { depth_to_space(std::numeric_limits<std::int64_t>::max(), false, x, y); }, ErrorKind::Shape,
                {"DepthToSpace", "blocksize"});
  require_error([&] { depth_to_space(2, false, iota({8, 2, 2}), y); }, ErrorKind::Shape, {"DepthToSpace", "rank 4"});
  require_error([&] { space_to_depth(3, x, y); }, ErrorKind::Shape, {"SpaceToDepth", "multiples of blocksize 3"});
  require_error([&] { space_to_depth(-1, x, y); }, ErrorKind::Shape, {"SpaceToDepth", "blocksize -1"});
  require_error([&] { space_to_depth(2, iota({2, 2}), y); }, ErrorKind::Shape, {"SpaceToDepth", "rank 4"});
}

TEST_CASE("EyeLike: ones on diagonal k of the input's shape", "[unit][eye_like]") {
  Tensor y;
  const Tensor x34 = iota({3, 4});
  eye_like(std::nullopt, 0, x34, y);
  check_values(y, {3, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}, 0);
  CHECK(y.dtype() == DType::F32);
  eye_like(DType::I64, 1, x34, y);
  CHECK(y.dtype() == DType::I64);
  check_values(y, {3, 4}, {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, 0);
  eye_like(DType::F64, -1, iota({3, 2}), y);
  check_values(y, {3, 2}, {0, 0, 1, 0, 0, 1}, 0);
  eye_like(DType::Bool, 0, iota({2, 2}), y);
  CHECK(test::values_of<bool>(y) == std::vector<bool>{true, false, false, true});
  // Diagonals past the matrix, either way, leave it all zeros.
  for (std::int64_t k : {std::int64_t{4}, std::int64_t{-3}, std::numeric_limits<std::int64_t>::max(),
                         std::numeric_limits<std::int64_t>::min()}) {
    INFO("k = " << k);
    eye_like(std::nullopt, k, x34, y);
    check_values(y, {3, 4}, std::vector<double>(12, 0.0), 0);
  }
  eye_like(std::nullopt, 0, Tensor::empty(DType::I32, {0, 5}), y);
  CHECK(y.shape() == Shape{0, 5});
  require_error([&] { eye_like(std::nullopt, 0, iota({2, 2, 2}), y); }, ErrorKind::Shape, {"EyeLike", "2-D"});
}

TEST_CASE("OneHot: negative indices from the end, out-of-range ones all off", "[unit][one_hot]") {
  Tensor y;
  const Tensor idx = ints({0, 2, -1, 5, -4});
  const Tensor depth = Tensor::scalar<float>(3.0f);
  const Tensor values = Tensor::from_vector<float>({0, 1}, {2});
  one_hot(-1, idx, depth, values, y);
  check_values(y, {5, 3}, {1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0}, 0);
  one_hot(0, idx, depth, values, y);
  check_values(y, {3, 5}, {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0}, 0);
  // The values' dtype, a 1-D depth and float indices (truncated toward zero).
  one_hot(1, Tensor::from_vector<double>({1.7, -0.5, 0}, {3, 1}), ints({2}),
          Tensor::from_vector<std::int64_t>({-1, 5}, {2}), y);
  CHECK(y.dtype() == DType::I64);
  check_values(y, {3, 2, 1}, {-1, 5, 5, -1, 5, -1}, 0);
}

TEST_CASE("OneHot: bad depth, values and axis are errors", "[unit][one_hot]") {
  Tensor y;
  const Tensor idx = ints({0, 1});
  const Tensor values = Tensor::from_vector<float>({0, 1}, {2});
  require_error([&] { one_hot(-1, idx, Tensor::scalar<std::int64_t>(0), values, y); }, ErrorKind::Input,
                {"OneHot", "depth 0"});
  require_error([&] { one_hot(-1, idx, Tensor::scalar<std::int64_t>(-3), values, y); }, ErrorKind::Input,
                {"OneHot", "depth -3"});
  require_error([&] { one_hot(-1, idx, ints({2, 3}), values, y); }, ErrorKind::Shape, {"OneHot", "depth"});
  require_error([&] { one_hot(-1, idx, Tensor::scalar<float>(std::numeric_limits<float>::quiet_NaN()), values, y); },
                ErrorKind::Input, {"OneHot", "depth"});
  const Tensor three = Tensor::from_vector<float>({0, 1, 2}, {3});
  require_error([&] { one_hot(-1, idx, Tensor::scalar<std::int64_t>(3), three, y); }, ErrorKind::Shape,
                {"OneHot", "[off, on]"});
  require_error([&] { one_hot(2, idx, Tensor::scalar<std::int64_t>(3), values, y); }, ErrorKind::Shape,
                {"OneHot", "axis 2"});
  require_error([&] { one_hot(-1, idx, Tensor::scalar<bool>(true), values, y); }, ErrorKind::Input,
                {"OneHot", "bool"});
}

TEST_CASE("TopK: largest and smallest along an axis, ties by lower index", "[unit][top_k]") {
  Tensor v, i;
  const Tensor x = Tensor::from_vector<float>({1, 3, 3, 2, 4, -1, 0, 4}, {2, 4});
  top_k(topk(-1, true), x, ints({2}), v, i);
  check_values(v, {2, 2}, {3, 3, 4, 4}, 0);
  check_values(i, {2, 2}, {1, 2, 0, 3}, 0);
  top_k(topk(1, false), x, ints({3}), v, i);
  check_values(v, {2, 3}, {1, 2, 3, -1, 0, 4}, 0);
  check_values(i, {2, 3}, {0, 3, 1, 1, 2, 0}, 0);
  top_k(topk(0, true), x, ints({1}), v, i);
  check_values(v, {1, 4}, {4, 3, 3, 4}, 0);
  check_values(i, {1, 4}, {1, 0, 0, 1}, 0);
  CHECK(i.dtype() == DType::I64);
  top_k(topk(-1, true), x, ints({0}), v, i);
  CHECK(v.shape() == Shape{2, 0});
  // Integers, and f64 that keeps every digit.
  top_k(topk(0, false), Tensor::from_vector<std::int32_t>({5, -7, 5}, {3}), ints({3}), v, i);
  check_values(v, {3}, {-7, 5, 5}, 0);
  check_values(i, {3}, {1, 0, 2}, 0);
  top_k(topk(0, true), Tensor::from_vector<double>({1e-17, 0, 3e-17}, {3}), ints({2}), v, i);
  check_values(v, {2}, {3e-17, 1e-17}, 0);
}

TEST_CASE("TopK: a NaN ranks above every number", "[unit][top_k]") {
  Tensor v, i;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = Tensor::from_vector<double>({2, nan, 1, nan}, {4});
  top_k(topk(0, true), x, ints({3}), v, i);
  CHECK(std::isnan(v.data<double>()[0]));
  CHECK(std::isnan(v.data<double>()[1]));
  CHECK(v.data<double>()[2] == 2);
  check_values(i, {3}, {1, 3, 0}, 0);
  top_k(topk(0, false), x, ints({3}), v, i);
  CHECK(std::isnan(v.data<double>()[2]));
  check_values(i, {3}, {2, 0, 1}, 0);
}

TEST_CASE("TopK: bad K and axis are errors", "[unit][top_k]") {
  Tensor v, i;
  const Tensor x = iota({2, 4});
  require_error([&] { top_k(topk(-1, true), x, ints({5}), v, i); }, ErrorKind::Input, {"TopK", "K 5", "[0, 4]"});
  require_error([&] { top_k(topk(-1, true), x, ints({-1}), v, i); }, ErrorKind::Input, {"TopK", "K -1"});
  require_error([&] { top_k(topk(-1, true), x, ints({1, 2}), v, i); }, ErrorKind::Shape, {"TopK", "one element"});
  require_error([&] { top_k(topk(-1, true), x, Tensor::from_vector<std::int32_t>({1}, {1}), v, i); },
                ErrorKind::Input, {"TopK", "i64"});
  require_error([&] { top_k(topk(2, true), x, ints({1}), v, i); }, ErrorKind::Shape, {"TopK", "axis 2"});
  require_error([&] { top_k(topk(0, true), Tensor::scalar<float>(1.0f), ints({1}), v, i); }, ErrorKind::Shape,
                {"TopK", "at least one dim"});
  require_error([&] { top_k(topk(0, true), Tensor::from_vector<bool>({true}, {1}), ints({1}), v, i); },
                ErrorKind::Input, {"TopK", "bool"});
}
