// Differential tests of the oneDNN pooling, GlobalAveragePool and
// BatchNormalization kernels against the reference kernels, and the cases
// they leave to the reference.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <limits>
#include <random>
#include <vector>

#include "canary/error.h"
#include "canary/tensor.h"
#include "kernels/onednn.h"
#include "kernels/reference.h"
#include "tests/kernels/random_tensors.h"

using canary::DType;
using canary::Shape;
using canary::Tensor;
using canary::test::check_close;
using canary::test::random_tensor;
using canary::test::random_tensor_in;
namespace k = canary::kernels;

namespace {

// Checks y holds exactly the float values `want`.
void check_values(const Tensor& y, const std::vector<float>& want) {
  REQUIRE(y.numel() == static_cast<std::int64_t>(want.size()));
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(y.data<float>()[i] == Approx(want[i]).epsilon(1e-6));
}

// Uniform integer in [lo, hi].
std::int64_t pick(std::mt19937& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

// A random pooling configuration for `spatial` axes of input lengths `in`.
k::PoolParams random_pool_params(std::mt19937& rng, std::size_t spatial) {
  k::PoolParams p;
  p.op = pick(rng, 0, 1) ? k::PoolOp::Max : k::PoolOp::Average;
  p.ceil_mode = pick(rng, 0, 1) != 0;
  p.count_include_pad = pick(rng, 0, 1) != 0;
  const std::int64_t pad_mode = pick(rng, 0, 7);
  p.auto_pad = pad_mode == 5 ? k::AutoPad::SameUpper
               : pad_mode == 6 ? k::AutoPad::SameLower
               : pad_mode == 7 ? k::AutoPad::Valid
                               : k::AutoPad::NotSet;
  const bool dilated = pick(rng, 0, 2) == 0;
  p.pads.assign(2 * spatial, 0);
  for (std::size_t i = 0; i < spatial; ++i) {
    p.kernel_shape.push_back(pick(rng, 1, 4));
    p.strides.push_back(pick(rng, 1, 3));
    p.dilations.push_back(dilated ? pick(rng, 1, 3) : 1);
    const std::int64_t span = p.dilations[i] * (p.kernel_shape[i] - 1) + 1;
    p.pads[i] = pick(rng, 0, span - 1);
    p.pads[i + spatial] = pick(rng, 0, span - 1);
  }
  return p;
}

// Counts of random cases the oneDNN kernel ran, by feature.
struct PoolCoverage {
  int applied = 0, fell_back = 0, ceil = 0, dilated = 0, include_pad = 0, max = 0, one_d = 0;
};

// Runs one random pooling case on both kernels and compares; counts coverage.
void check_random_pool(std::mt19937& rng, PoolCoverage& cov) {
  const std::size_t spatial = pick(rng, 1, 2);
  Shape shape{pick(rng, 1, 3), pick(rng, 1, 5)};
  for (std::size_t i = 0; i < spatial; ++i) shape.push_back(pick(rng, 1, 13));
  const k::PoolParams p = random_pool_params(rng, spatial);
  const Tensor x = random_tensor(rng, shape);
  Tensor want, got;
  bool reference_ok = true;
  try {
    k::pool(p, x, want);
  } catch (const canary::Error&) {
    reference_ok = false;
  }
  const bool applied = k::onednn_pool(p, x, got);
  INFO("x " << canary::shape_to_string(shape) << " kernel " << p.kernel_shape[0] << " stride " << p.strides[0]
            << " dilation " << p.dilations[0] << " pads " << p.pads[0] << "," << p.pads[spatial] << " ceil "
            << p.ceil_mode << " include_pad " << p.count_include_pad << " max " << (p.op == k::PoolOp::Max)
            << " auto_pad " << static_cast<int>(p.auto_pad));
  if (!reference_ok) {
    CHECK_FALSE(applied);
    return;
  }
  if (!applied) {
    ++cov.fell_back;
    return;
  }
  check_close(want, got);
  ++cov.applied;
  cov.ceil += p.ceil_mode && p.auto_pad != k::AutoPad::SameUpper && p.auto_pad != k::AutoPad::SameLower;
  cov.dilated += p.dilations[0] > 1 || p.dilations[spatial - 1] > 1;
  cov.include_pad += p.op == k::PoolOp::Average && p.count_include_pad;
  cov.max += p.op == k::PoolOp::Max;
  cov.one_d += spatial == 1;
}

// Pooling parameters of a 1-D case.
k::PoolParams pool_1d(k::PoolOp op, std::int64_t kernel, std::int64_t stride, std::int64_t pad_begin,
                      std::int64_t pad_end) {
  k::PoolParams p;
  p.op = op;
  p.kernel_shape = {kernel};
  p.strides = {stride};
  p.pads = {pad_begin, pad_end};
  return p;
}

// Runs one BatchNormalization case on both kernels and compares.
void check_batch_norm(std::mt19937& rng, const Shape& shape, double epsilon) {
  INFO("batch norm " << canary::shape_to_string(shape) << " epsilon " << epsilon);
  const std::int64_t c = shape[1];
  const Tensor x = random_tensor_in(rng, shape, -3.0, 3.0);
  const Tensor scale = random_tensor_in(rng, {c}, -2.0, 2.0), bias = random_tensor(rng, {c});
  const Tensor mean = random_tensor(rng, {c}), var = random_tensor_in(rng, {c}, 0.05, 3.0);
  k::BatchNormParams p;
  p.epsilon = epsilon;
  Tensor want, got;
  k::batch_norm(p, x, scale, bias, mean, var, want);
  REQUIRE(k::onednn_batch_norm(p, x, scale, bias, mean, var, got));
  check_close(want, got);
}

}  // namespace

TEST_CASE("oneDNN pooling matches the reference on seeded random geometries", "[unit][differential][onednn]") {
  std::mt19937 rng(20240611);
  PoolCoverage cov;
  for (int i = 0; i < 600; ++i) check_random_pool(rng, cov);
  INFO("applied " << cov.applied << ", fell back " << cov.fell_back);
  CHECK(cov.applied > 300);
  CHECK(cov.ceil > 50);
  CHECK(cov.dilated > 30);
  CHECK(cov.include_pad > 50);
  CHECK(cov.max > 100);
  CHECK(cov.one_d > 100);
}

TEST_CASE("oneDNN max pooling in ceil mode keeps the partial last window", "[unit][differential][onednn]") {
  const Tensor x = Tensor::from_vector<float>({1, 5, 2, 4, 3}, {1, 1, 5});
  k::PoolParams p = pool_1d(k::PoolOp::Max, 2, 2, 0, 0);
  p.ceil_mode = true;
  Tensor y;
  REQUIRE(k::onednn_pool(p, x, y));
  CHECK(y.shape() == Shape{1, 1, 3});
  check_values(y, {5, 4, 3});
}

TEST_CASE("oneDNN average pooling divides by real or padded taps per count_include_pad",
          "[unit][differential][onednn]") {
  const Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, {1, 1, 4});
  k::PoolParams p = pool_1d(k::PoolOp::Average, 3, 1, 1, 1);
  Tensor y;
  REQUIRE(k::onednn_pool(p, x, y));
  check_values(y, {1.5f, 2, 3, 3.5f});
  p.count_include_pad = true;
  REQUIRE(k::onednn_pool(p, x, y));
  check_values(y, {1, 2, 3, 7.0f / 3});
}

TEST_CASE("oneDNN 2-D dilated average pooling skips the taps between", "[unit][differential][onednn]") {
  // x[h][w] = 4h + w on a 4x4 grid; a 2x2 kernel dilated by 2 covers (0,0),(0,2),(2,0),(2,2) + offset.
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i);
  const Tensor x = Tensor::from_vector<float>(v, {1, 1, 4, 4});
  k::PoolParams p;
  p.op = k::PoolOp::Average;
  p.kernel_shape = {2, 2};
  p.dilations = {2, 2};
  Tensor y;
  REQUIRE(k::onednn_pool(p, x, y));
  CHECK(y.shape() == Shape{1, 1, 2, 2});
  check_values(y, {5, 6, 9, 10});  // (0+2+8+10)/4, (1+3+9+11)/4, ...
}

TEST_CASE("oneDNN pooling leaves cases it cannot match exactly to the reference", "[unit][differential][onednn]") {
  SECTION("a dilated window made only of padding") {
    // in 1, kernel 2 dilated by 3, pads 2/2: window 0 taps -2 and 1, both padding.
    const Tensor x = Tensor::from_vector<float>({7}, {1, 1, 1});
    k::PoolParams p = pool_1d(k::PoolOp::Max, 2, 1, 2, 2);
    p.dilations = {3};
    Tensor y;
    CHECK_FALSE(k::onednn_pool(p, x, y));
    k::pool(p, x, y);
    REQUIRE(y.numel() == 2);
    CHECK(y.data<float>()[0] == -std::numeric_limits<float>::infinity());
  }
  SECTION("a ceil_mode window past the end padding with count_include_pad") {
    const Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5}, {1, 1, 5});
    k::PoolParams p = pool_1d(k::PoolOp::Average, 2, 2, 0, 0);
    p.ceil_mode = true;
    p.count_include_pad = true;
    Tensor y;
    CHECK_FALSE(k::onednn_pool(p, x, y));
    p.count_include_pad = false;  // padding is never counted: extra end padding is exact
    REQUIRE(k::onednn_pool(p, x, y));
    check_values(y, {1.5f, 3.5f, 5});
  }
  SECTION("f64 input and invalid attributes") {
    const Tensor x = Tensor::from_vector<double>({1, 2, 3}, {1, 1, 3});
    Tensor y;
    CHECK_FALSE(k::onednn_pool(pool_1d(k::PoolOp::Max, 2, 1, 0, 0), x, y));
    const Tensor xf = Tensor::from_vector<float>({1, 2, 3}, {1, 1, 3});
    CHECK_FALSE(k::onednn_pool(pool_1d(k::PoolOp::Max, 0, 1, 0, 0), xf, y));
    CHECK_FALSE(k::onednn_pool(pool_1d(k::PoolOp::Max, 5, 1, 0, 0), xf, y));
    CHECK_THROWS_AS(k::pool(pool_1d(k::PoolOp::Max, 5, 1, 0, 0), xf, y), canary::Error);
  }
}

TEST_CASE("oneDNN pooling reuses its cached primitive for the same geometry", "[unit][onednn]") {
  k::onednn_clear_cache();
  std::mt19937 rng(7);
  const Tensor x = random_tensor(rng, {2, 3, 8, 8});
  k::PoolParams p;
  p.kernel_shape = {3, 3};
  p.strides = {2, 2};
  Tensor y;
  REQUIRE(k::onednn_pool(p, x, y));
  REQUIRE(k::onednn_pool(p, x, y));
  const k::OnednnCacheStats s = k::onednn_cache_stats();
  CHECK(s.misses == 1);
  CHECK(s.hits == 1);
}

TEST_CASE("oneDNN GlobalAveragePool matches the reference for ranks 3 to 5", "[unit][differential][onednn]") {
  const Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 10, 20, 30, 40}, {1, 2, 2, 2});
  Tensor y;
  REQUIRE(k::onednn_global_average_pool(x, y));
  CHECK(y.shape() == Shape{1, 2, 1, 1});
  check_values(y, {2.5f, 25});
  std::mt19937 rng(99);
  for (const Shape& shape : {Shape{2, 3, 17}, Shape{1, 8, 7, 9}, Shape{3, 4, 32, 32}, Shape{2, 2, 3, 4, 5}}) {
    INFO(canary::shape_to_string(shape));
    const Tensor xr = random_tensor(rng, shape);
    Tensor want, got;
    k::global_average_pool(xr, want);
    REQUIRE(k::onednn_global_average_pool(xr, got));
    check_close(want, got);
  }
  const Tensor empty = Tensor::empty(DType::F32, {1, 2, 0});
  CHECK_FALSE(k::onednn_global_average_pool(empty, y));
}

TEST_CASE("oneDNN BatchNormalization matches the reference for several channel counts",
          "[unit][differential][onednn]") {
  const Tensor x = Tensor::from_vector<float>({3, 1}, {1, 2});
  const Tensor scale = Tensor::from_vector<float>({3, 1}, {2}), bias = Tensor::from_vector<float>({1, 0}, {2});
  const Tensor mean = Tensor::from_vector<float>({1, 0}, {2}), var = Tensor::from_vector<float>({3, 0}, {2});
  k::BatchNormParams p;
  p.epsilon = 1.0;
  Tensor y;
  REQUIRE(k::onednn_batch_norm(p, x, scale, bias, mean, var, y));
  check_values(y, {4, 1});  // (3-1)/sqrt(4)*3+1 and (1-0)/sqrt(1)*1+0
  std::mt19937 rng(31337);
  for (std::int64_t c : {1, 3, 16, 17, 64})
    for (const Shape& shape : {Shape{2, c}, Shape{3, c, 11}, Shape{2, c, 5, 7}, Shape{1, c, 2, 3, 4}})
      check_batch_norm(rng, shape, c == 17 ? 1e-3 : 1e-5);
}

TEST_CASE("oneDNN BatchNormalization leaves mismatched inputs to the reference", "[unit][differential][onednn]") {
  std::mt19937 rng(5);
  const Tensor x = random_tensor(rng, {2, 3, 4});
  const Tensor c3 = random_tensor_in(rng, {3}, 0.5, 1.0), c4 = random_tensor_in(rng, {4}, 0.5, 1.0);
  const Tensor x64 = Tensor::from_vector<double>({1, 2}, {1, 2});
  k::BatchNormParams p;
  Tensor y;
  CHECK_FALSE(k::onednn_batch_norm(p, x, c4, c3, c3, c3, y));
  CHECK_THROWS_AS(k::batch_norm(p, x, c4, c3, c3, c3, y), canary::Error);
  CHECK_FALSE(k::onednn_batch_norm(p, x64, c3, c3, c3, c3, y));
  CHECK_FALSE(k::onednn_batch_norm(p, random_tensor(rng, {3}), c3, c3, c3, c3, y));
}

namespace {

// One GRU configuration.
struct GruCase {
  std::int64_t seq, batch, input, hidden;
  k::GruDirection direction;
  std::int64_t layout;
  bool linear_before_reset, initial_state, bias;
  std::optional<double> clip = std::nullopt;
};

// Runs one GRU case on both kernels and compares Y and Y_h.
void check_gru(std::mt19937& rng, const GruCase& c) {
  INFO("gru T " << c.seq << " B " << c.batch << " I " << c.input << " H " << c.hidden << " direction "
                << static_cast<int>(c.direction) << " layout " << c.layout << " lbr " << c.linear_before_reset
                << " h0 " << c.initial_state << " bias " << c.bias << " clip " << c.clip.value_or(-1.0));
  const std::int64_t D = c.direction == k::GruDirection::Bidirectional ? 2 : 1, H = c.hidden;
  k::GruParams p;
  p.hidden_size = H;
  p.direction = c.direction;
  p.layout = c.layout;
  p.linear_before_reset = c.linear_before_reset;
  p.clip = c.clip;
  const Tensor x = random_tensor(rng, c.layout == 0 ? Shape{c.seq, c.batch, c.input} : Shape{c.batch, c.seq, c.input});
  const Tensor w = random_tensor(rng, {D, 3 * H, c.input}), r = random_tensor(rng, {D, 3 * H, H});
  const Tensor b = random_tensor(rng, {D, 6 * H});
  const Tensor h0 = random_tensor(rng, c.layout == 0 ? Shape{D, c.batch, H} : Shape{c.batch, D, H});
  const Tensor* pb = c.bias ? &b : nullptr;
  const Tensor* ph0 = c.initial_state ? &h0 : nullptr;
  Tensor y0, yh0, y1, yh1;
  k::gru(p, x, w, r, pb, nullptr, ph0, &y0, &yh0);
  REQUIRE(k::onednn_gru(p, x, w, r, pb, nullptr, ph0, &y1, &yh1));
  check_close(y0, y1);
  check_close(yh0, yh1);
}

}  // namespace

TEST_CASE("oneDNN GRU matches the reference in both reset modes, every direction and layout",
          "[unit][differential][onednn]") {
  std::mt19937 rng(4242);
  for (bool lbr : {false, true})
    for (k::GruDirection dir : {k::GruDirection::Forward, k::GruDirection::Reverse, k::GruDirection::Bidirectional})
      for (std::int64_t layout : {0, 1}) {
        check_gru(rng, GruCase{5, 3, 4, 6, dir, layout, lbr, true, true});
        check_gru(rng, GruCase{1, 1, 3, 2, dir, layout, lbr, false, false});
      }
  check_gru(rng, GruCase{7, 2, 16, 17, k::GruDirection::Bidirectional, 0, true, true, false});
  check_gru(rng, GruCase{3, 4, 5, 8, k::GruDirection::Forward, 1, false, false, true});
  // A clip tighter than most pre-activations, in both reset modes.
  for (bool lbr : {false, true})
    check_gru(rng, GruCase{6, 3, 4, 5, k::GruDirection::Bidirectional, 1, lbr, true, true, 0.3});
}

TEST_CASE("oneDNN GRU leaves short sequences to the reference", "[unit][differential][onednn]") {
  std::mt19937 rng(8);
  k::GruParams p;
  p.hidden_size = 2;
  const Tensor x = random_tensor(rng, {3, 2, 2}), w = random_tensor(rng, {1, 6, 2}), r = random_tensor(rng, {1, 6, 2});
  Tensor y, y_h;
  const Tensor full = Tensor::from_vector<std::int64_t>({3, 3}, {2});
  CHECK(k::onednn_gru(p, x, w, r, nullptr, &full, nullptr, &y, &y_h));
  const Tensor short_lens = Tensor::from_vector<std::int64_t>({3, 2}, {2});
  CHECK_FALSE(k::onednn_gru(p, x, w, r, nullptr, &short_lens, nullptr, &y, &y_h));
  const Tensor w_wrong = random_tensor(rng, {1, 6, 3});
  CHECK_FALSE(k::onednn_gru(p, x, w_wrong, r, nullptr, nullptr, nullptr, &y, &y_h));
  CHECK_THROWS_AS(k::gru(p, x, w_wrong, r, nullptr, nullptr, nullptr, &y, &y_h), canary::Error);
}

TEST_CASE("oneDNN ReduceSum and ReduceMean match the reference where the reduced dims end the shape",
          "[unit][differential][onednn]") {
  std::mt19937 rng(2718);
  const Shape shape{2, 3, 5, 4};
  // Merged: [6, 20] -> [6, 1]; [30, 4] -> [30, 1]; all; and [2, 3, 20] -> [2, 1, 1] with the size-1 dim kept.
  const std::vector<std::vector<std::int64_t>> axes_sets = {{2, 3}, {-1}, {}, {0, 1, 2, 3}, {1, 2, 3}};
  for (k::ReduceOp op : {k::ReduceOp::Sum, k::ReduceOp::Mean})
    for (const auto& axes : axes_sets)
      for (bool keepdims : {true, false}) {
        INFO("op " << static_cast<int>(op) << ", axes " << canary::shape_to_string(axes) << ", keepdims " << keepdims);
        const Tensor x = random_tensor(rng, shape);
        k::ReduceParams p;
        p.op = op;
        p.axes = axes;
        p.keepdims = keepdims;
        Tensor want, got;
        k::reduce(p, x, want);
        REQUIRE(k::onednn_reduce(p, x, got));
        CHECK(got.shape() == want.shape());
        check_close(want, got);
      }
}

TEST_CASE("oneDNN reductions leave Max, bad axes, empty inputs and no-op axes to the reference",
          "[unit][differential][onednn]") {
  std::mt19937 rng(1);
  const Tensor x = random_tensor(rng, {2, 3});
  Tensor y;
  k::ReduceParams p;
  p.op = k::ReduceOp::Max;
  CHECK_FALSE(k::onednn_reduce(p, x, y));
  p.op = k::ReduceOp::Sum;
  p.axes = {2};
  CHECK_FALSE(k::onednn_reduce(p, x, y));
  p.axes = {1, -1};
  CHECK_FALSE(k::onednn_reduce(p, x, y));
  p.axes = {0, 2};  // two reduced runs before a kept dim: oneDNN 2.6 would loop in its reference kernel
  Tensor y3;
  CHECK_FALSE(k::onednn_reduce(p, random_tensor(rng, {2, 3, 4, 5}), y3));
  p.axes = {};
  p.noop_with_empty_axes = true;
  CHECK_FALSE(k::onednn_reduce(p, x, y));
  p.noop_with_empty_axes = false;
  CHECK_FALSE(k::onednn_reduce(p, Tensor::empty(DType::F32, {2, 0}), y));
  CHECK_FALSE(y.defined());
}

TEST_CASE("Sums and means over middle dims are column sums: no primitive, within a few ulp of fp64",
          "[unit][differential][onednn]") {
  std::mt19937 rng(37);
  const std::uint64_t misses = k::onednn_cache_stats().misses;
  // [outer, length, inner]: a channels-last global pool (full 32-column
  // chunks and a remainder), a sum over the batch, a lone column, an odd width.
  struct Case {
    Shape shape;
    std::vector<std::int64_t> axes;
    std::int64_t outer, length, inner;
  };
  const std::vector<Case> cases = {{{4, 9, 7, 70}, {1, 2}, 4, 63, 70},
                                   {{300, 40}, {0}, 1, 300, 40},
                                   {{3, 17, 2}, {1}, 3, 17, 2},
                                   {{2, 1, 33, 5, 3}, {2, 3}, 2, 165, 3}};
  for (const Case& c : cases) {
    const Tensor x = random_tensor(rng, c.shape);
    for (const k::ReduceOp op : {k::ReduceOp::Sum, k::ReduceOp::Mean})
      for (const bool keepdims : {true, false}) {
        k::ReduceParams p;
        p.op = op;
        p.axes = c.axes;
        p.keepdims = keepdims;
        INFO(canary::shape_to_string(c.shape) << (op == k::ReduceOp::Mean ? " mean" : " sum") << " keepdims "
                                              << keepdims);
        Tensor want, got;
        k::reduce(p, x, want);
        REQUIRE(k::onednn_reduce(p, x, got));
        REQUIRE(got.shape() == want.shape());
        REQUIRE(got.numel() == c.outer * c.inner);
        for (std::int64_t o = 0; o < c.outer; ++o)
          for (std::int64_t i = 0; i < c.inner; ++i) {
            double sum = 0, magnitude = 0;
            for (std::int64_t l = 0; l < c.length; ++l) {
              const float v = x.data<float>()[(o * c.length + l) * c.inner + i];
              sum += v;
              magnitude += std::abs(v);
            }
            const double n = static_cast<double>(c.length);
            const double want_value = op == k::ReduceOp::Mean ? sum / n : sum;
            const double scale = op == k::ReduceOp::Mean ? magnitude / n : magnitude;
            CHECK(std::abs(got.data<float>()[o * c.inner + i] - want_value) <= 4e-7 * scale + 1e-30);
          }
      }
  }
  CHECK(k::onednn_cache_stats().misses == misses);
}

TEST_CASE("Sums and means over the innermost dims need no primitive and stay within a few ulp of fp64",
          "[unit][differential][onednn]") {
  std::mt19937 rng(31);
  const std::uint64_t misses = k::onednn_cache_stats().misses;
  for (const Shape& shape : std::vector<Shape>{{5, 7, 200}, {3, 1, 33}, {1, 4097}, {64, 31}, {2, 8, 6, 6}}) {
    const Tensor x = random_tensor(rng, shape);
    for (const k::ReduceOp op : {k::ReduceOp::Sum, k::ReduceOp::Mean}) {
      k::ReduceParams p;
      p.op = op;
      p.axes = shape.size() == 4 ? std::vector<std::int64_t>{2, 3} : std::vector<std::int64_t>{-1};
      INFO(canary::shape_to_string(shape) << (op == k::ReduceOp::Mean ? " mean" : " sum"));
      Tensor got;
      REQUIRE(k::onednn_reduce(p, x, got));
      const std::int64_t length = shape.size() == 4 ? 36 : shape.back();
      REQUIRE(got.numel() == x.numel() / length);
      for (std::int64_t r = 0; r < got.numel(); ++r) {
        double sum = 0, magnitude = 0;
        for (std::int64_t i = 0; i < length; ++i) {
          sum += x.data<float>()[r * length + i];
          magnitude += std::abs(x.data<float>()[r * length + i]);
        }
        const double want = op == k::ReduceOp::Mean ? sum / static_cast<double>(length) : sum;
        const double scale = op == k::ReduceOp::Mean ? magnitude / static_cast<double>(length) : magnitude;
        CHECK(std::abs(got.data<float>()[r] - want) <= 4e-7 * scale + 1e-30);
      }
    }
  }
  CHECK(k::onednn_cache_stats().misses == misses);
}
