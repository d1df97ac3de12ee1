// Regression tests of pooling and recurrent kernels against hostile geometry:
// huge kernels, pads and strides on tiny inputs must cost time proportional to
// the taps that touch the input, and hidden sizes or sequence lengths near the
// int64 limits must give errors (or a declined oneDNN plan), never overflow.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "canary/error.h"
#include "canary/tensor.h"
#include "kernels/onednn.h"
#include "kernels/reference.h"
#include "tests/kernels/tensor_checks.h"

using canary::ErrorKind;
using canary::Shape;
using canary::Tensor;
using canary::test::require_error;
namespace k = canary::kernels;

namespace {

constexpr std::int64_t kTwo39 = std::int64_t{1} << 39;
constexpr std::int64_t kTwo40 = std::int64_t{1} << 40;
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

// A 1-D pooling with one kernel, stride, dilation and pads.
k::PoolParams pool_1d(k::PoolOp op, std::int64_t kernel, std::int64_t stride, std::int64_t dilation,
                      std::int64_t pad_begin, std::int64_t pad_end) {
  k::PoolParams p;
  p.op = op;
  p.kernel_shape = {kernel};
  p.strides = {stride};
  p.dilations = {dilation};
  p.pads = {pad_begin, pad_end};
  return p;
}

// All elements of a tensor as doubles.
std::vector<double> values(const Tensor& t) {
  std::vector<double> v(static_cast<std::size_t>(t.numel()));
  for (std::int64_t i = 0; i < t.numel(); ++i) v[i] = t.element_as_double(i);
  return v;
}

// Checks two value lists elementwise to a tolerance.
void check_close(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-12));
}

// GRU weights with hidden size 1 and input size 1, one direction, one step, one batch entry.
struct TinyGru {
  Tensor x = Tensor::from_vector(std::vector<float>{1.0f}, Shape{1, 1, 1});
  Tensor w = Tensor::from_vector(std::vector<float>{0.0f, 0.0f, 0.0f}, Shape{1, 3, 1});
  Tensor r = Tensor::from_vector(std::vector<float>{0.0f, 0.0f, 0.0f}, Shape{1, 3, 1});
};

// LSTM weights with hidden size 1 and input size 1, one direction, one step, one batch entry.
struct TinyLstm {
  Tensor x = Tensor::from_vector(std::vector<float>{1.0f}, Shape{1, 1, 1});
  Tensor w = Tensor::from_vector(std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f}, Shape{1, 4, 1});
  Tensor r = Tensor::from_vector(std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f}, Shape{1, 4, 1});
};

}  // namespace

TEST_CASE("pooling a tiny input with a 2^40 kernel and stride visits only the overlapping tap",
          "[unit][pool][hostile]") {
  // x has one element; the single window spans [-(2^40 - 1), 0], so only its last tap is real.
  const Tensor x = Tensor::from_vector(std::vector<float>{5.0f}, Shape{1, 1, 1});
  Tensor y;
  k::pool(pool_1d(k::PoolOp::Max, kTwo40, kTwo40, 1, kTwo40 - 1, 0), x, y);
  REQUIRE(y.shape() == Shape{1, 1, 1});
  CHECK(y.element_as_double(0) == 5.0);
  k::PoolParams avg = pool_1d(k::PoolOp::Average, kTwo40, kTwo40, 1, kTwo40 - 1, 0);
  k::pool(avg, x, y);
  CHECK(y.element_as_double(0) == 5.0);
  // Including padding, all 2^40 taps lie in the padded input: 5 / 2^40.
  avg.count_include_pad = true;
  k::pool(avg, x, y);
  CHECK(y.element_as_double(0) == Approx(5.0 / std::ldexp(1.0, 40)).epsilon(1e-6));
  Tensor z;
  CHECK_FALSE(k::onednn_pool(pool_1d(k::PoolOp::Max, kTwo40, kTwo40, 1, kTwo40 - 1, 0), x, z));
}

TEST_CASE("pooling with a 2^39 kernel and pads fails on the output size, not after 2^77 steps",
          "[unit][pool][hostile]") {
  // Output length 1 + 2 (2^39 - 1) - 2^39 + 1 = 2^39: a 2 TiB output the allocation limit refuses.
  const Tensor x = Tensor::from_vector(std::vector<float>{1.0f}, Shape{1, 1, 1});
  const k::PoolParams p = pool_1d(k::PoolOp::Max, kTwo39, 1, 1, kTwo39 - 1, kTwo39 - 1);
  Tensor y;
  CHECK_FALSE(k::onednn_pool(p, x, y));
  const canary::ScopedTensorAllocationLimit limit(std::size_t{1} << 30);
  CHECK_THROWS_AS(k::pool(p, x, y), canary::Error);
}

TEST_CASE("oneDNN pooling declines a dilated kernel with 2^38 windows without checking each one",
          "[unit][pool][hostile][onednn]") {
  // in 2, kernel 2, dilation 2^38 (span 2^38 + 1), pads 2^38: about 2^38 windows.
  const Tensor x = Tensor::from_vector(std::vector<float>{1.0f, 2.0f}, Shape{1, 1, 2});
  const std::int64_t d = std::int64_t{1} << 38;
  Tensor y;
  CHECK_FALSE(k::onednn_pool(pool_1d(k::PoolOp::Max, 2, 1, d, d, d), x, y));
}

TEST_CASE("oneDNN pooling declines a dilated window that steps over the whole input", "[unit][pool][onednn]") {
  // in 3, kernel 2, dilation 4, pads 3+3: window 2 has taps at -1 and 3, both outside [0, 3).
  const Tensor x = Tensor::from_vector(std::vector<float>{1.0f, 2.0f, 3.0f}, Shape{1, 1, 3});
  const k::PoolParams p = pool_1d(k::PoolOp::Max, 2, 1, 4, 3, 3);
  Tensor y;
  CHECK_FALSE(k::onednn_pool(p, x, y));
  k::pool(p, x, y);
  // Windows start at -3..1; taps {-3,1} {-2,2} {-1,3} {0,4} {1,5} → 2, 3, -inf, 1, 2.
  const std::vector<double> got = values(y);
  REQUIRE(got.size() == 5);
  CHECK(got[0] == 2.0);
  CHECK(got[1] == 3.0);
  CHECK(std::isinf(got[2]));
  CHECK(got[2] < 0);
  CHECK(got[3] == 1.0);
  CHECK(got[4] == 2.0);
}

TEST_CASE("dilated padded 1-D pooling counts real and padded taps by hand", "[unit][pool]") {
  // x = 1..5, kernel 3, dilation 2, pads 2+2: window o has taps o-2, o, o+2.
  const Tensor x = Tensor::from_vector(std::vector<double>{1, 2, 3, 4, 5}, Shape{1, 1, 5});
  Tensor y;
  k::pool(pool_1d(k::PoolOp::Max, 3, 1, 2, 2, 2), x, y);
  check_close(values(y), {3, 4, 5, 4, 5});
  k::PoolParams avg = pool_1d(k::PoolOp::Average, 3, 1, 2, 2, 2);
  k::pool(avg, x, y);
  check_close(values(y), {2, 3, 3, 3, 4});
  avg.count_include_pad = true;  // every tap lies in the padded input [-2, 7)
  k::pool(avg, x, y);
  check_close(values(y), {4.0 / 3, 2, 3, 2, 8.0 / 3});
}

TEST_CASE("2-D average pooling with count_include_pad divides by the padded tap area", "[unit][pool]") {
  // x = [[1, 2], [3, 4]], kernel 3x3, pads 1 on every side: each 3x3 window covers the whole padded input.
  const Tensor x = Tensor::from_vector(std::vector<double>{1, 2, 3, 4}, Shape{1, 1, 2, 2});
  k::PoolParams p;
  p.op = k::PoolOp::Average;
  p.kernel_shape = {3, 3};
  p.pads = {1, 1, 1, 1};
  Tensor y;
  k::pool(p, x, y);
  check_close(values(y), {2.5, 2.5, 2.5, 2.5});
  p.count_include_pad = true;
  k::pool(p, x, y);
  check_close(values(y), {10.0 / 9, 10.0 / 9, 10.0 / 9, 10.0 / 9});
}

TEST_CASE("GRU and LSTM reject a hidden size whose gate rows overflow int64", "[unit][gru][lstm][hostile]") {
  const std::int64_t huge = std::int64_t{1} << 62;
  TinyGru g;
  k::GruParams gp;
  gp.hidden_size = huge;
  require_error([&] { k::gru(gp, g.x, g.w, g.r, nullptr, nullptr, nullptr, nullptr, nullptr); }, ErrorKind::Shape,
                {"GRU", "4611686018427387904", "overflows"});
  Tensor y;
  CHECK_FALSE(k::onednn_gru(gp, g.x, g.w, g.r, nullptr, nullptr, nullptr, &y, nullptr));
  TinyLstm l;
  k::LstmParams lp;
  lp.hidden_size = huge;
  require_error([&] { k::lstm(lp, l.x, l.w, l.r, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                              nullptr); },
                ErrorKind::Shape, {"LSTM", "4611686018427387904", "overflows"});
  CHECK_FALSE(k::onednn_lstm(lp, l.x, l.w, l.r, nullptr, nullptr, nullptr, nullptr, nullptr, &y, nullptr, nullptr));
}

TEST_CASE("GRU and LSTM read i64 sequence_lens as integers, even at the int64 limits",
          "[unit][gru][lstm][hostile]") {
  TinyGru g;
  k::GruParams gp;
  gp.hidden_size = 1;
  TinyLstm l;
  k::LstmParams lp;
  lp.hidden_size = 1;
  for (std::int64_t bad : {kInt64Max, std::numeric_limits<std::int64_t>::min(), std::int64_t{2}}) {
    INFO("sequence_lens = " << bad);
    const Tensor lens = Tensor::from_vector(std::vector<std::int64_t>{bad}, Shape{1});
    Tensor y;
    require_error([&] { k::gru(gp, g.x, g.w, g.r, nullptr, &lens, nullptr, &y, nullptr); }, ErrorKind::Input,
                  {"sequence_lens[0] = " + std::to_string(bad), "outside [0, 1]"});
    require_error([&] { k::lstm(lp, l.x, l.w, l.r, nullptr, &lens, nullptr, nullptr, nullptr, &y, nullptr, nullptr); },
                  ErrorKind::Input, {"sequence_lens[0] = " + std::to_string(bad), "outside [0, 1]"});
  }
  // A valid length 1 of 1 still runs: zero weights give h = (1 - z) * tanh(0) = 0.
  const Tensor one = Tensor::from_vector(std::vector<std::int64_t>{1}, Shape{1});
  Tensor y;
  k::gru(gp, g.x, g.w, g.r, nullptr, &one, nullptr, &y, nullptr);
  REQUIRE(y.shape() == Shape{1, 1, 1, 1});
  CHECK(y.element_as_double(0) == 0.0);
}
