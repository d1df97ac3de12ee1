// Tests of the reference pooling kernels: MaxPool and AveragePool with pads,
// strides, dilation, auto_pad, ceil_mode and count_include_pad; GlobalAveragePool.
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
using canary::test::check_values;
using canary::test::make;
using canary::test::require_error;
namespace k = canary::kernels;

namespace {

// Pooling parameters for one op with the given geometry.
k::PoolParams params(k::PoolOp op, std::vector<std::int64_t> kernel, std::vector<std::int64_t> strides = {},
                     std::vector<std::int64_t> pads = {}, std::vector<std::int64_t> dilations = {}) {
  k::PoolParams p;
  p.op = op;
  p.kernel_shape = std::move(kernel);
  p.strides = std::move(strides);
  p.pads = std::move(pads);
  p.dilations = std::move(dilations);
  return p;
}

// Runs the pooling kernel and returns y.
Tensor run(const k::PoolParams& p, const Tensor& x) {
  Tensor y;
  k::pool(p, x, y);
  return y;
}

const std::vector<double> kRow{1, 3, 2, 5, 4};

}  // namespace

TEST_CASE("max pool 1-D with stride, pads and dilation", "[unit][pool]") {
  const DType dt = GENERATE(DType::F32, DType::F64);
  const Tensor x = make(dt, kRow, {1, 1, 5});
  // Windows {0,1} {2,3}: floor((5 - 2) / 2) + 1 = 2 outputs.
  check_values(run(params(k::PoolOp::Max, {2}, {2}), x), {1, 1, 2}, {3, 5});
  // Pads 1+1, k 3, stride 2: windows {-1,0,1} {1,2,3} {3,4,5}.
  check_values(run(params(k::PoolOp::Max, {3}, {2}, {1, 1}), x), {1, 1, 3}, {3, 5, 5});
  // Dilation 2: taps {0,2} {1,3} {2,4}.
  check_values(run(params(k::PoolOp::Max, {2}, {1}, {}, {2}), x), {1, 1, 3}, {2, 5, 4});
  CHECK(run(params(k::PoolOp::Max, {2}), x).dtype() == dt);
}

TEST_CASE("max pool padding never wins over negative values", "[unit][pool]") {
  const Tensor x = make(DType::F64, {-1, -2, -3}, {1, 1, 3});
  // Windows {-1,0} {0,1} {1,2} {2,3}.
  check_values(run(params(k::PoolOp::Max, {2}, {1}, {1, 1}), x), {1, 1, 4}, {-1, -1, -2, -3});
}

TEST_CASE("max pool ceil_mode adds a partial window and drops one starting in the end padding", "[unit][pool]") {
  k::PoolParams p = params(k::PoolOp::Max, {2}, {2});
  const Tensor x5 = make(DType::F64, kRow, {1, 1, 5});
  p.ceil_mode = false;
  check_values(run(p, x5), {1, 1, 2}, {3, 5});
  // ceil((5 - 2) / 2) + 1 = 3: the last window {4, 5} holds only x[4].
  p.ceil_mode = true;
  check_values(run(p, x5), {1, 1, 3}, {3, 5, 4});
  // Pads 1+0 on [1, 3, 2, 5]: floor gives {-1,0} {1,2}; ceil adds {3,4}.
  p.pads = {1, 0};
  const Tensor x4 = make(DType::F64, {1, 3, 2, 5}, {1, 1, 4});
  p.ceil_mode = false;
  check_values(run(p, x4), {1, 1, 2}, {1, 3});
  p.ceil_mode = true;
  check_values(run(p, x4), {1, 1, 3}, {1, 3, 5});
  // Pads 1+1 on [1, 3, 2]: ceil((3 + 2 - 2) / 2) + 1 = 3, but the third
  // window starts at 3, inside the end padding, so it is dropped.
  p.pads = {1, 1};
  check_values(run(p, make(DType::F64, {1, 3, 2}, {1, 1, 3})), {1, 1, 2}, {1, 3});
}

TEST_CASE("max pool 2-D with and without pads", "[unit][pool]") {
  const Tensor x = make(DType::F64, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3});
  check_values(run(params(k::PoolOp::Max, {2, 2}), x), {1, 1, 2, 2}, {5, 6, 8, 9});
  // Pads 1 everywhere, stride 2: rows and columns {-1,0} and {1,2}.
  check_values(run(params(k::PoolOp::Max, {2, 2}, {2, 2}, {1, 1, 1, 1}), x), {1, 1, 2, 2}, {1, 3, 7, 9});
  // Two channels pool independently.
  const Tensor x2 = make(DType::F64, {1, 2, 3, 4, -1, -2, -3, -4}, {1, 2, 2, 2});
  check_values(run(params(k::PoolOp::Max, {2, 2}), x2), {1, 2, 1, 1}, {4, -1});
}

TEST_CASE("max pool SAME_UPPER and SAME_LOWER split the padding", "[unit][pool]") {
  const Tensor x = make(DType::F64, kRow, {1, 1, 5});
  k::PoolParams p = params(k::PoolOp::Max, {2}, {2});
  // ceil(5 / 2) = 3 outputs, total padding (3 - 1) * 2 + 2 - 5 = 1.
  p.auto_pad = k::AutoPad::SameUpper;  // pad at the end: {0,1} {2,3} {4,5}
  check_values(run(p, x), {1, 1, 3}, {3, 5, 4});
  p.auto_pad = k::AutoPad::SameLower;  // pad at the start: {-1,0} {1,2} {3,4}
  check_values(run(p, x), {1, 1, 3}, {1, 3, 5});
  p.auto_pad = k::AutoPad::Valid;
  p.pads = {1, 1};  // ignored under VALID
  check_values(run(p, x), {1, 1, 2}, {3, 5});
}

TEST_CASE("average pool 1-D count_include_pad both ways", "[unit][pool]") {
  const DType dt = GENERATE(DType::F32, DType::F64);
  const Tensor x = make(dt, {1, 2, 3, 4}, {1, 1, 4});
  k::PoolParams p = params(k::PoolOp::Average, {3}, {1}, {1, 1});
  // Windows {-1,0,1} {0,1,2} {1,2,3} {2,3,4}: sums 3 6 9 7.
  p.count_include_pad = false;
  check_values(run(p, x), {1, 1, 4}, {3.0 / 2, 2, 3, 7.0 / 2});
  p.count_include_pad = true;
  check_values(run(p, x), {1, 1, 4}, {1, 2, 3, 7.0 / 3});
}

TEST_CASE("average pool ceil_mode windows past the padded end are not counted", "[unit][pool]") {
  k::PoolParams p = params(k::PoolOp::Average, {2}, {2});
  const Tensor x5 = make(DType::F64, {1, 2, 3, 4, 5}, {1, 1, 5});
  check_values(run(p, x5), {1, 1, 2}, {1.5, 3.5});
  p.ceil_mode = true;
  // The last window {4, 5} overhangs the (unpadded) input: divisor 1 either way.
  for (bool include : {false, true}) {
    p.count_include_pad = include;
    check_values(run(p, x5), {1, 1, 3}, {1.5, 3.5, 5});
  }
  // k 3, stride 2, pads 1+1 on [1, 2, 3, 4]: windows {-1,0,1} {1,2,3} {3,4,5};
  // position 5 lies beyond the end padding, so the last divisor is 2 with pads.
  p = params(k::PoolOp::Average, {3}, {2}, {1, 1});
  p.ceil_mode = true;
  const Tensor x4 = make(DType::F64, {1, 2, 3, 4}, {1, 1, 4});
  check_values(run(p, x4), {1, 1, 3}, {1.5, 3, 4});
  p.count_include_pad = true;
  check_values(run(p, x4), {1, 1, 3}, {1, 3, 2});
  p.ceil_mode = false;
  check_values(run(p, x4), {1, 1, 2}, {1, 3});
}

TEST_CASE("average pool 2-D with pads, count_include_pad both ways", "[unit][pool]") {
  const Tensor x = make(DType::F64, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3});
  check_values(run(params(k::PoolOp::Average, {2, 2}), x), {1, 1, 2, 2}, {3, 4, 6, 7});
  k::PoolParams p = params(k::PoolOp::Average, {2, 2}, {2, 2}, {1, 1, 1, 1});
  // Windows: {1} {2,3} {4,7} {5,6,8,9}; each covers 4 padded taps.
  check_values(run(p, x), {1, 1, 2, 2}, {1, 2.5, 5.5, 7});
  p.count_include_pad = true;
  check_values(run(p, x), {1, 1, 2, 2}, {0.25, 1.25, 2.75, 7});
}

TEST_CASE("global average pool over 1, 2 and 3 spatial axes", "[unit][pool]") {
  const DType dt = GENERATE(DType::F32, DType::F64);
  Tensor y;
  k::global_average_pool(make(dt, {1, 2, 3, 4, 10, 20, 30, 40}, {1, 2, 2, 2}), y);
  check_values(y, {1, 2, 1, 1}, {2.5, 25});
  CHECK(y.dtype() == dt);
  k::global_average_pool(make(dt, {1, 2, 3, -3}, {2, 1, 2}), y);
  check_values(y, {2, 1, 1}, {1.5, 0});
  k::global_average_pool(make(dt, {1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 2, 2}), y);
  check_values(y, {1, 1, 1, 1, 1}, {4.5});
}

TEST_CASE("pooling rejects bad ranks, dtypes, pads and short inputs", "[unit][pool]") {
  const Tensor x = make(DType::F64, kRow, {1, 1, 5});
  require_error([&] { run(params(k::PoolOp::Max, {2}), make(DType::F64, kRow, {1, 5})); }, ErrorKind::Shape,
                {"MaxPool", "rank 3 or 4", "[1, 5]"});
  require_error([&] { run(params(k::PoolOp::Average, {2}), Tensor::from_vector<std::int64_t>({1, 2, 3}, {1, 1, 3})); },
                ErrorKind::Input, {"AveragePool", "i64"});
  require_error([&] { run(params(k::PoolOp::Max, {2, 2}), x); }, ErrorKind::Model, {"kernel_shape", "expected 1"});
  require_error([&] { run(params(k::PoolOp::Max, {2}, {1}, {2, 0}), x); }, ErrorKind::Model,
                {"pads", "smaller than the kernel span 2"});
  require_error([&] { run(params(k::PoolOp::Max, {2}, {0}), x); }, ErrorKind::Model, {"strides", "stride 0"});
  require_error([&] { run(params(k::PoolOp::Max, {7}), x); }, ErrorKind::Shape, {"input length 5", "kernel span 7"});
  Tensor y;
  require_error([&] { k::global_average_pool(make(DType::F64, {1, 2}, {1, 2}), y); }, ErrorKind::Shape,
                {"GlobalAveragePool", "rank >= 3"});
}
