// The oneDNN LSTM's cache of converted constant weights: reuse for constant
// weights, per-call conversion otherwise, pinned sources, bias identity,
// wrapped buffers and the LRU bound.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "canary/tensor.h"
#include "kernels/onednn.h"
#include "kernels/reference.h"

using canary::DType;
using canary::Shape;
using canary::Tensor;
namespace k = canary::kernels;

namespace {

// With x = 1, zero states, R = 0 and only the c-gate input weight w_c and
// c-gate bias b_c non-zero, i = o = f = sigmoid(0) = 0.5, so
// c = 0.5 * tanh(w_c + b_c) and h = 0.5 * tanh(c).
constexpr double kC1 = 0.3807970779778824, kH1 = 0.18169974219452625;  // w_c + b_c = 1
constexpr double kC2 = 0.48201379003790845, kH2 = 0.2239274686640464;  // w_c + b_c = 2

// ONNX W [1, 4, 1] (gates i o f c) with only the c gate set.
Tensor c_gate_weights(float w_c) { return Tensor::from_vector<float>({0, 0, 0, w_c}, {1, 4, 1}); }
// ONNX B [1, 8] with only the input c-gate bias set.
Tensor c_gate_bias(float b_c) { return Tensor::from_vector<float>({0, 0, 0, b_c, 0, 0, 0, 0}, {1, 8}); }
Tensor zero_recurrence() { return Tensor::empty(DType::F32, {1, 4, 1}); }

// Final hidden and cell state of the one-step, one-unit LSTM above.
struct UnitResult {
  double h = 0, c = 0;
};

// Runs the oneDNN LSTM on x = [[[1]]] with the given weights.
UnitResult run_unit(const Tensor& w, const Tensor& r, const Tensor* b, bool constant) {
  k::LstmParams p;
  p.hidden_size = 1;
  const Tensor x = Tensor::from_vector<float>({1}, {1, 1, 1});
  Tensor y_h, y_c;
  REQUIRE(k::onednn_lstm(p, x, w, r, b, nullptr, nullptr, nullptr, nullptr, nullptr, &y_h, &y_c, constant));
  return {y_h.element_as_double(0), y_c.element_as_double(0)};
}

// Checks a unit result against the expected hidden and cell state.
void check_unit(const UnitResult& got, double h, double c) {
  CHECK(got.h == Approx(h).margin(1e-6));
  CHECK(got.c == Approx(c).margin(1e-6));
}

// A tensor of the given shape with uniform values in [-1, 1] from rng.
Tensor random_tensor(std::mt19937& rng, const Shape& shape) {
  Tensor t = Tensor::empty(DType::F32, shape);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

// True when both tensors have the same shape and bit-identical values.
bool identical(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return false;
  for (std::int64_t i = 0; i < a.numel(); ++i)
    if (a.data<float>()[i] != b.data<float>()[i]) return false;
  return true;
}

// Element-wise closeness to the reference result (1e-4 relative plus 1e-5 absolute).
bool close_to(const Tensor& want, const Tensor& got) {
  if (want.shape() != got.shape()) return false;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    const double w = want.element_as_double(i), g = got.element_as_double(i);
    if (!(std::abs(g - w) <= 1e-4 * std::abs(w) + 1e-5)) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("constant LSTM weights are converted once and then reused", "[unit][onednn][lstm]") {
  k::onednn_clear_lstm_weight_cache();
  const Tensor w = c_gate_weights(1), r = zero_recurrence(), b = c_gate_bias(0);
  check_unit(run_unit(w, r, &b, true), kH1, kC1);
  CHECK(k::onednn_lstm_weight_cache_stats().misses == 1);
  CHECK(k::onednn_lstm_weight_cache_stats().hits == 0);
  CHECK(k::onednn_lstm_weight_cache_stats().size == 1);
  check_unit(run_unit(w, r, &b, true), kH1, kC1);
  CHECK(k::onednn_lstm_weight_cache_stats().misses == 1);
  CHECK(k::onednn_lstm_weight_cache_stats().hits == 1);
  k::onednn_clear_lstm_weight_cache();
}

TEST_CASE("a bidirectional LSTM on cached weights repeats its first result exactly", "[unit][onednn][lstm]") {
  k::onednn_clear_lstm_weight_cache();
  std::mt19937 rng(7);
  const std::int64_t T = 5, B = 3, I = 6, H = 8;
  const Tensor x = random_tensor(rng, {T, B, I}), w = random_tensor(rng, {2, 4 * H, I});
  const Tensor r = random_tensor(rng, {2, 4 * H, H}), b = random_tensor(rng, {2, 8 * H});
  k::LstmParams p;
  p.hidden_size = H;
  p.direction = k::LstmDirection::Bidirectional;
  Tensor y_ref, h_ref, y1, h1, y2, h2;
  k::lstm(p, x, w, r, &b, nullptr, nullptr, nullptr, nullptr, &y_ref, &h_ref, nullptr);
  REQUIRE(k::onednn_lstm(p, x, w, r, &b, nullptr, nullptr, nullptr, nullptr, &y1, &h1, nullptr, true));
  REQUIRE(k::onednn_lstm(p, x, w, r, &b, nullptr, nullptr, nullptr, nullptr, &y2, &h2, nullptr, true));
  CHECK(k::onednn_lstm_weight_cache_stats().hits == 1);
  CHECK(close_to(y_ref, y1));
  CHECK(close_to(h_ref, h1));
  CHECK(identical(y1, y2));
  CHECK(identical(h1, h2));
  k::onednn_clear_lstm_weight_cache();
}

TEST_CASE("non-constant LSTM weights changed in place give the new results", "[unit][onednn][lstm]") {
  k::onednn_clear_lstm_weight_cache();
  Tensor w = c_gate_weights(1);
  const Tensor r = zero_recurrence(), b = c_gate_bias(0);
  check_unit(run_unit(w, r, &b, false), kH1, kC1);
  w.data<float>()[3] = 2.0f;
  check_unit(run_unit(w, r, &b, false), kH2, kC2);
  const k::OnednnLstmWeightCacheStats s = k::onednn_lstm_weight_cache_stats();
  CHECK(s.hits == 0);
  CHECK(s.misses == 0);
  CHECK(s.size == 0);
}

TEST_CASE("a weight cache entry keeps its source buffers from being reused", "[unit][onednn][lstm]") {
  // Weights of a few KiB, whose freed buffers the allocator readily hands out
  // again: were an entry not holding its sources, a fresh W at a dead W's
  // address would hit that entry and return the other c-gate weight's result.
  k::onednn_clear_lstm_weight_cache();
  constexpr std::int64_t kInput = 256;
  k::LstmParams p;
  p.hidden_size = 1;
  const Tensor x = Tensor::from_vector<float>(std::vector<float>(kInput, 1.0f), {1, 1, kInput});
  const Tensor r = zero_recurrence();
  for (int round = 0; round < 8; ++round) {
    const float w_c = round % 2 == 0 ? 1.0f : 2.0f;
    Tensor w = Tensor::empty(DType::F32, {1, 4, kInput});
    w.data<float>()[3 * kInput] = w_c;  // c gate, first input
    Tensor y_h;
    REQUIRE(k::onednn_lstm(p, x, w, r, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, &y_h, nullptr, true));
    INFO("round " << round);
    CHECK(y_h.element_as_double(0) == Approx(w_c == 1.0f ? kH1 : kH2).margin(1e-6));
  }
  CHECK(k::onednn_lstm_weight_cache_stats().misses == 8);
  CHECK(k::onednn_lstm_weight_cache_stats().hits == 0);
  k::onednn_clear_lstm_weight_cache();
}

TEST_CASE("the same constant weights with and without a bias are distinct entries", "[unit][onednn][lstm]") {
  k::onednn_clear_lstm_weight_cache();
  const Tensor w = c_gate_weights(1), r = zero_recurrence(), b = c_gate_bias(1);
  check_unit(run_unit(w, r, &b, true), kH2, kC2);
  check_unit(run_unit(w, r, nullptr, true), kH1, kC1);
  check_unit(run_unit(w, r, &b, true), kH2, kC2);
  CHECK(k::onednn_lstm_weight_cache_stats().misses == 2);
  CHECK(k::onednn_lstm_weight_cache_stats().hits == 1);
  k::onednn_clear_lstm_weight_cache();
}

TEST_CASE("constant weights in wrapped buffers are converted per call", "[unit][onednn][lstm]") {
  k::onednn_clear_lstm_weight_cache();
  std::vector<float> w_values{0, 0, 0, 1};
  const Shape w_shape{1, 4, 1};
  const Tensor w = Tensor::wrap(w_values.data(), DType::F32, w_shape), r = zero_recurrence();
  check_unit(run_unit(w, r, nullptr, true), kH1, kC1);
  w_values[3] = 2.0f;
  check_unit(run_unit(w, r, nullptr, true), kH2, kC2);
  CHECK(k::onednn_lstm_weight_cache_stats().size == 0);
  CHECK(k::onednn_lstm_weight_cache_stats().misses == 0);
}

TEST_CASE("the LSTM weight cache evicts the least recently used entry", "[unit][onednn][lstm]") {
  k::onednn_clear_lstm_weight_cache();
  k::onednn_set_lstm_weight_cache_capacity(2);
  const Tensor r = zero_recurrence();
  const Tensor w1 = c_gate_weights(1), w2 = c_gate_weights(2), w3 = c_gate_weights(1);
  check_unit(run_unit(w1, r, nullptr, true), kH1, kC1);
  check_unit(run_unit(w2, r, nullptr, true), kH2, kC2);
  check_unit(run_unit(w3, r, nullptr, true), kH1, kC1);
  k::OnednnLstmWeightCacheStats s = k::onednn_lstm_weight_cache_stats();
  CHECK(s.misses == 3);
  CHECK(s.evictions == 1);
  CHECK(s.size == 2);
  CHECK(s.capacity == 2);
  check_unit(run_unit(w3, r, nullptr, true), kH1, kC1);  // kept
  check_unit(run_unit(w1, r, nullptr, true), kH1, kC1);  // evicted first, converted again
  s = k::onednn_lstm_weight_cache_stats();
  CHECK(s.hits == 1);
  CHECK(s.misses == 4);
  k::onednn_set_lstm_weight_cache_capacity(k::kOnednnLstmWeightCacheCapacity);
  k::onednn_clear_lstm_weight_cache();
}
