// Differential tests of the oneDNN LSTM, Softmax and LayerNormalization
// kernels against the reference kernels, and the cases they leave to it.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
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
namespace k = canary::kernels;

namespace {

// One LSTM configuration.
struct LstmCase {
  std::int64_t seq, batch, input, hidden;
  k::LstmDirection direction;
  std::int64_t layout;
  bool initial_state;
  bool bias;
};

// Random inputs of an LSTM case.
struct LstmInputs {
  Tensor x, w, r, b, h0, c0;
};

// Draws the inputs of c (state and bias present or not as c says).
LstmInputs random_lstm_inputs(std::mt19937& rng, const LstmCase& c) {
  const std::int64_t D = c.direction == k::LstmDirection::Bidirectional ? 2 : 1, H = c.hidden;
  const Shape x_shape = c.layout == 0 ? Shape{c.seq, c.batch, c.input} : Shape{c.batch, c.seq, c.input};
  const Shape state = c.layout == 0 ? Shape{D, c.batch, H} : Shape{c.batch, D, H};
  LstmInputs in;
  in.x = random_tensor(rng, x_shape);
  in.w = random_tensor(rng, {D, 4 * H, c.input});
  in.r = random_tensor(rng, {D, 4 * H, H});
  if (c.bias) in.b = random_tensor(rng, {D, 8 * H});
  if (c.initial_state) {
    in.h0 = random_tensor(rng, state);
    in.c0 = random_tensor(rng, state);
  }
  return in;
}

// Pointer to t, or null when t is undefined.
const Tensor* opt(const Tensor& t) { return t.defined() ? &t : nullptr; }

// Runs an LSTM case both ways and compares Y, Y_h and Y_c.
void check_lstm(std::mt19937& rng, const LstmCase& c) {
  INFO("LSTM T=" << c.seq << " B=" << c.batch << " I=" << c.input << " H=" << c.hidden << " direction "
                 << static_cast<int>(c.direction) << " layout " << c.layout << " initial state " << c.initial_state
                 << " bias " << c.bias);
  const LstmInputs in = random_lstm_inputs(rng, c);
  k::LstmParams p;
  p.hidden_size = c.hidden;
  p.direction = c.direction;
  p.layout = c.layout;
  Tensor y0, h0, c0, y1, h1, c1;
  k::lstm(p, in.x, in.w, in.r, opt(in.b), nullptr, opt(in.h0), opt(in.c0), nullptr, &y0, &h0, &c0);
  REQUIRE(k::onednn_lstm(p, in.x, in.w, in.r, opt(in.b), nullptr, opt(in.h0), opt(in.c0), nullptr, &y1, &h1, &c1));
  check_close(y0, y1);
  check_close(h0, h1);
  check_close(c0, c1);
}

// A random dim in [lo, hi].
std::int64_t random_dim(std::mt19937& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

// Small fixed inputs for the fallback checks: T=3, B=2, I=2, H=2, forward.
struct SmallLstm {
  std::mt19937 rng{7};
  Tensor x = random_tensor(rng, {3, 2, 2});
  Tensor w = random_tensor(rng, {1, 8, 2});
  Tensor r = random_tensor(rng, {1, 8, 2});
  k::LstmParams p = [] {
    k::LstmParams q;
    q.hidden_size = 2;
    return q;
  }();
};

// Runs softmax both ways on a random tensor and compares.
void check_softmax(std::mt19937& rng, const Shape& shape, std::int64_t axis) {
  INFO("softmax " << canary::shape_to_string(shape) << " axis " << axis);
  Tensor x = random_tensor(rng, shape);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] *= 8.0f;  // a wide range of exponents
  Tensor want, got;
  k::softmax(axis, x, want);
  REQUIRE(k::onednn_softmax(axis, x, got));
  check_close(want, got);
}

// Runs layer norm both ways, with or without bias and the optional outputs, and compares.
void check_layer_norm(std::mt19937& rng, const Shape& shape, std::int64_t axis, const Shape& param_shape, bool bias,
                      bool stats) {
  INFO("layer norm " << canary::shape_to_string(shape) << " axis " << axis << " bias " << bias << " stats "
                     << stats);
  const Tensor x = random_tensor(rng, shape), scale = random_tensor(rng, param_shape);
  const Tensor b = bias ? random_tensor(rng, param_shape) : Tensor();
  k::LayerNormParams p;
  p.axis = axis;
  Tensor y0, m0, s0, y1, m1, s1;
  k::layer_norm(p, x, scale, opt(b), y0, stats ? &m0 : nullptr, stats ? &s0 : nullptr);
  REQUIRE(k::onednn_layer_norm(p, x, scale, opt(b), y1, stats ? &m1 : nullptr, stats ? &s1 : nullptr));
  check_close(y0, y1);
  if (stats) {
    check_close(m0, m1);
    check_close(s0, s1);
  }
}

}  // namespace

TEST_CASE("oneDNN LSTM matches the reference in every direction and layout", "[unit][differential][onednn]") {
  std::mt19937 rng(1234);
  for (auto direction : {k::LstmDirection::Forward, k::LstmDirection::Reverse, k::LstmDirection::Bidirectional})
    for (std::int64_t layout : {0, 1})
      for (bool initial : {false, true}) {
        const LstmCase c{random_dim(rng, 2, 9), random_dim(rng, 2, 5), random_dim(rng, 1, 12), random_dim(rng, 1, 10),
                         direction, layout, initial, initial || layout == 1};
        check_lstm(rng, c);
      }
}

TEST_CASE("oneDNN LSTM handles one time step, batch 1 and no bias", "[unit][differential][onednn]") {
  std::mt19937 rng(99);
  check_lstm(rng, {1, 3, 4, 5, k::LstmDirection::Forward, 0, true, true});
  check_lstm(rng, {1, 1, 4, 5, k::LstmDirection::Bidirectional, 1, true, false});
  check_lstm(rng, {6, 1, 3, 4, k::LstmDirection::Reverse, 0, false, false});
  check_lstm(rng, {16, 4, 64, 64, k::LstmDirection::Bidirectional, 0, true, true});
}

TEST_CASE("oneDNN LSTM writes only the requested outputs", "[unit][differential][onednn]") {
  std::mt19937 rng(5);
  const LstmCase c{4, 3, 5, 6, k::LstmDirection::Bidirectional, 1, true, true};
  const LstmInputs in = random_lstm_inputs(rng, c);
  k::LstmParams p;
  p.hidden_size = c.hidden;
  p.direction = c.direction;
  p.layout = c.layout;
  Tensor y0, h0, h1;
  k::lstm(p, in.x, in.w, in.r, &in.b, nullptr, &in.h0, &in.c0, nullptr, &y0, &h0, nullptr);
  REQUIRE(k::onednn_lstm(p, in.x, in.w, in.r, &in.b, nullptr, &in.h0, &in.c0, nullptr, nullptr, &h1, nullptr));
  check_close(h0, h1);
  // Y alone, with the final states not requested.
  Tensor y1;
  REQUIRE(k::onednn_lstm(p, in.x, in.w, in.r, &in.b, nullptr, &in.h0, &in.c0, nullptr, &y1, nullptr, nullptr));
  check_close(y0, y1);
}

TEST_CASE("oneDNN LSTM runs when every sequence length is T and creates no primitive",
          "[unit][differential][onednn]") {
  SmallLstm s;
  const Tensor lens = Tensor::from_vector<std::int32_t>({3, 3}, {2});
  Tensor y0, y1;
  k::lstm(s.p, s.x, s.w, s.r, nullptr, &lens, nullptr, nullptr, nullptr, &y0, nullptr, nullptr);
  k::onednn_clear_cache();
  REQUIRE(k::onednn_lstm(s.p, s.x, s.w, s.r, nullptr, &lens, nullptr, nullptr, nullptr, &y1, nullptr, nullptr));
  check_close(y0, y1);
  REQUIRE(k::onednn_lstm(s.p, s.x, s.w, s.r, nullptr, nullptr, nullptr, nullptr, nullptr, &y1, nullptr, nullptr));
  check_close(y0, y1);
  const k::OnednnCacheStats stats = k::onednn_cache_stats();
  CHECK(stats.calls == 2);
  CHECK(stats.misses == 0);  // sgemm takes its dims per call
  CHECK(stats.size == 0);
}

TEST_CASE("oneDNN LSTM matches the reference with peepholes, clip and input_forget", "[unit][differential][onednn]") {
  std::mt19937 rng(21);
  for (const k::LstmDirection direction : {k::LstmDirection::Forward, k::LstmDirection::Bidirectional})
    for (const std::int64_t layout : {0, 1})
      for (int variant = 0; variant < 3; ++variant) {
        const LstmCase c{6, 3, 4, 5, direction, layout, true, true};
        INFO("variant " << variant << " layout " << layout << " direction " << static_cast<int>(direction));
        const LstmInputs in = random_lstm_inputs(rng, c);
        const std::int64_t D = direction == k::LstmDirection::Bidirectional ? 2 : 1;
        const Tensor peep = random_tensor(rng, {D, 3 * c.hidden});
        k::LstmParams p;
        p.hidden_size = c.hidden;
        p.direction = direction;
        p.layout = layout;
        if (variant == 1) p.clip = 0.3;  // tighter than most pre-activations, so it bites
        if (variant == 2) p.input_forget = true;
        Tensor y0, h0, c0, y1, h1, c1;
        k::lstm(p, in.x, in.w, in.r, &in.b, nullptr, &in.h0, &in.c0, &peep, &y0, &h0, &c0);
        REQUIRE(k::onednn_lstm(p, in.x, in.w, in.r, &in.b, nullptr, &in.h0, &in.c0, &peep, &y1, &h1, &c1));
        check_close(y0, y1);
        check_close(h0, h1);
        check_close(c0, c1);
      }
}

TEST_CASE("oneDNN LSTM carries NaN and saturates at huge pre-activations", "[unit][onednn]") {
  SmallLstm s;
  Tensor x = s.x;
  x.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();  // step 0, batch entry 0
  x.data<float>()[2] = 1e30f;                                     // step 0, batch entry 1
  x.data<float>()[3] = -1e30f;
  Tensor want, got;
  k::lstm(s.p, x, s.w, s.r, nullptr, nullptr, nullptr, nullptr, nullptr, &want, nullptr, nullptr);
  REQUIRE(k::onednn_lstm(s.p, x, s.w, s.r, nullptr, nullptr, nullptr, nullptr, nullptr, &got, nullptr, nullptr));
  REQUIRE(got.shape() == want.shape());
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    const float w = want.data<float>()[i], g = got.data<float>()[i];
    INFO("element " << i << ": reference " << w << ", kernel " << g);
    if (std::isnan(w)) CHECK(std::isnan(g));
    else CHECK(std::abs(g - w) <= 1e-5f);
  }
}

TEST_CASE("oneDNN LSTM leaves the cases it does not run to the reference", "[unit][onednn]") {
  SmallLstm s;
  Tensor y;
  const Tensor short_lens = Tensor::from_vector<std::int64_t>({3, 2}, {2});
  CHECK_FALSE(k::onednn_lstm(s.p, s.x, s.w, s.r, nullptr, &short_lens, nullptr, nullptr, nullptr, &y, nullptr,
                             nullptr));
  const Tensor bad_peepholes = Tensor::from_vector<float>(std::vector<float>(5, 0.0f), {1, 5});
  CHECK_FALSE(k::onednn_lstm(s.p, s.x, s.w, s.r, nullptr, nullptr, nullptr, nullptr, &bad_peepholes, &y, nullptr,
                             nullptr));
  // f64 and a W of the wrong shape (which the reference reports) are not run either.
  std::mt19937 rng(3);
  const Tensor x64 = random_tensor(rng, {3, 2, 2}, DType::F64);
  const Tensor w64 = random_tensor(rng, {1, 8, 2}, DType::F64), r64 = random_tensor(rng, {1, 8, 2}, DType::F64);
  CHECK_FALSE(k::onednn_lstm(s.p, x64, w64, r64, nullptr, nullptr, nullptr, nullptr, nullptr, &y, nullptr, nullptr));
  const Tensor bad_w = random_tensor(rng, {1, 8, 3});
  CHECK_FALSE(k::onednn_lstm(s.p, s.x, bad_w, s.r, nullptr, nullptr, nullptr, nullptr, nullptr, &y, nullptr,
                             nullptr));
  CHECK_THROWS_AS(k::lstm(s.p, s.x, bad_w, s.r, nullptr, nullptr, nullptr, nullptr, nullptr, &y, nullptr, nullptr),
                  canary::Error);
}

TEST_CASE("oneDNN softmax matches the reference on every axis", "[unit][differential][onednn]") {
  std::mt19937 rng(42);
  for (std::int64_t axis : {0, 1, 2, -1, -2}) check_softmax(rng, {3, 4, 5}, axis);
  check_softmax(rng, {7}, 0);
  check_softmax(rng, {2, 3, 4, 5}, 2);
  check_softmax(rng, {1, 1000}, -1);
}

TEST_CASE("oneDNN softmax leaves other dtypes and bad axes to the reference", "[unit][onednn]") {
  std::mt19937 rng(8);
  Tensor y;
  CHECK_FALSE(k::onednn_softmax(0, random_tensor(rng, {3}, DType::F64), y));
  CHECK_FALSE(k::onednn_softmax(2, random_tensor(rng, {3, 4}), y));
  CHECK_FALSE(k::onednn_softmax(-3, random_tensor(rng, {3, 4}), y));
  CHECK_FALSE(k::onednn_softmax(0, Tensor::empty(DType::F32, {0, 4}), y));
}

TEST_CASE("oneDNN softmax of equal inputs is uniform", "[unit][onednn]") {
  const Tensor x = Tensor::from_vector<float>({2, 2, 2, 2, -1, 0, 1, 100}, {2, 4});
  Tensor y;
  REQUIRE(k::onednn_softmax(1, x, y));
  for (int i = 0; i < 4; ++i) CHECK(y.data<float>()[i] == Approx(0.25).margin(1e-6));
  CHECK(y.data<float>()[7] == Approx(1.0).margin(1e-6));
}

TEST_CASE("oneDNN layer norm matches the reference for axis -1 and -2", "[unit][differential][onednn]") {
  std::mt19937 rng(77);
  for (bool bias : {false, true})
    for (bool stats : {false, true}) {
      check_layer_norm(rng, {4, 6, 8}, -1, {8}, bias, stats);
      check_layer_norm(rng, {4, 6, 8}, -2, {6, 8}, bias, stats);
    }
  check_layer_norm(rng, {3, 5, 7}, 1, {5, 7}, true, true);
  check_layer_norm(rng, {3, 1, 7}, 1, {7}, true, true);
  check_layer_norm(rng, {2, 512}, -1, {512}, true, true);
}

TEST_CASE("oneDNN layer norm computes inverse standard deviation alone", "[unit][onednn]") {
  // Rows [1, 3] and [2, 2]: means 2 and 2, variances 1 and 0.
  const Tensor x = Tensor::from_vector<float>({1, 3, 2, 2}, {2, 2});
  const Tensor scale = Tensor::from_vector<float>({1, 1}, {2});
  k::LayerNormParams p;
  p.epsilon = 0.25;
  Tensor y, inv_std;
  REQUIRE(k::onednn_layer_norm(p, x, scale, nullptr, y, nullptr, &inv_std));
  REQUIRE(inv_std.shape() == Shape{2, 1});
  CHECK(inv_std.data<float>()[0] == Approx(1.0 / std::sqrt(1.25)).epsilon(1e-5));
  CHECK(inv_std.data<float>()[1] == Approx(2.0).epsilon(1e-5));
  CHECK(y.data<float>()[0] == Approx(-1.0 / std::sqrt(1.25)).epsilon(1e-5));
  CHECK(y.data<float>()[3] == Approx(0.0).margin(1e-6));
}

TEST_CASE("oneDNN layer norm leaves broadcast parameters and other dtypes to the reference", "[unit][onednn]") {
  std::mt19937 rng(9);
  const Tensor x = random_tensor(rng, {4, 6, 8});
  k::LayerNormParams p;
  p.axis = -2;
  Tensor y;
  CHECK_FALSE(k::onednn_layer_norm(p, x, random_tensor(rng, {8}), nullptr, y, nullptr, nullptr));
  CHECK_FALSE(k::onednn_layer_norm(p, x, random_tensor(rng, {6, 8}), &x, y, nullptr, nullptr));
  p.axis = 3;
  CHECK_FALSE(k::onednn_layer_norm(p, x, random_tensor(rng, {8}), nullptr, y, nullptr, nullptr));
  p.axis = -1;
  const Tensor x64 = random_tensor(rng, {2, 3}, DType::F64);
  CHECK_FALSE(k::onednn_layer_norm(p, x64, random_tensor(rng, {3}, DType::F64), nullptr, y, nullptr, nullptr));
}

TEST_CASE("oneDNN LSTM and GRU split their batch over two threads with the bits of one", "[unit][onednn]") {
  // Big enough (T * step flops above 8 Mflop) that two threads each take half the batch.
  std::mt19937 rng(77);
  const LstmCase c{64, 33, 5, 64, k::LstmDirection::Bidirectional, 1, true, true};
  const LstmInputs in = random_lstm_inputs(rng, c);
  k::LstmParams p;
  p.hidden_size = c.hidden;
  p.direction = c.direction;
  p.layout = c.layout;
  k::GruParams gp;
  gp.hidden_size = c.hidden;
  gp.direction = k::GruDirection::Bidirectional;
  gp.layout = 1;
  gp.linear_before_reset = true;
  const Tensor gw = random_tensor(rng, {2, 3 * c.hidden, c.input}), gr = random_tensor(rng, {2, 3 * c.hidden, c.hidden});
  Tensor y[2], h[2], cs[2], gy[2];
  for (int threads : {1, 2}) {
    const k::OnednnThreadScope scope(threads);
    REQUIRE(k::onednn_lstm(p, in.x, in.w, in.r, &in.b, nullptr, &in.h0, &in.c0, nullptr, &y[threads - 1],
                           &h[threads - 1], &cs[threads - 1]));
    REQUIRE(k::onednn_gru(gp, in.x, gw, gr, nullptr, nullptr, nullptr, &gy[threads - 1], nullptr));
  }
  for (const Tensor* pair : {y, h, cs, gy}) {
    REQUIRE(pair[0].shape() == pair[1].shape());
    CHECK(std::memcmp(pair[0].raw(), pair[1].raw(), pair[0].nbytes()) == 0);
  }
}
