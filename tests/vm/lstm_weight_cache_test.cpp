// The interpreter marks LSTM weights that are graph constants, so the oneDNN
// kernel converts them once per thread; weights fed as inputs are converted
// on every run. Both agree with the reference kernel.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "kernels/onednn.h"
#include "kernels/reference.h"
#include "vm_graph_builders.h"

using namespace vmtest;
namespace k = canary::kernels;

namespace {

constexpr std::int64_t kT = 3, kB = 2, kI = 4, kH = 5;

// A tensor of the given shape with uniform values in [-1, 1] from rng.
Tensor random_f32(std::mt19937& rng, std::vector<std::int64_t> shape) {
  Tensor t = Tensor::empty(DType::F32, shape);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
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

// Weights of a forward LSTM.
struct Weights {
  Tensor w, r, b;
};

Weights random_weights(std::mt19937& rng) {
  return {random_f32(rng, {1, 4 * kH, kI}), random_f32(rng, {1, 4 * kH, kH}), random_f32(rng, {1, 8 * kH})};
}

// Y and Y_h of the reference kernel.
std::vector<Tensor> reference(const Tensor& x, const Weights& wt, bool bias) {
  k::LstmParams p;
  p.hidden_size = kH;
  Tensor y, y_h;
  k::lstm(p, x, wt.w, wt.r, bias ? &wt.b : nullptr, nullptr, nullptr, nullptr, nullptr, &y, &y_h, nullptr);
  return {y, y_h};
}

// LSTM over input X with W, R (and B when `bias`) as graph constants; outputs Y, Y_h.
Graph constant_weights_graph(const Weights& wt, bool bias) {
  Graph g;
  std::vector<ValueId> in{g.add_input("X", type_of(DType::F32, {kT, kB, kI})), g.add_constant("W", wt.w),
                          g.add_constant("R", wt.r)};
  if (bias) in.push_back(g.add_constant("B", wt.b));
  auto n = g.add_node(OpKind::LSTM, "lstm", in, {"Y", "Y_h"}, {{"hidden_size", kH}});
  for (ValueId v : g.node(n).outputs) g.add_output(v);
  return g;
}

// LSTM whose W is a graph input (R and B constants); outputs Y, Y_h.
Graph input_weights_graph(const Weights& wt) {
  Graph g;
  ValueId x = g.add_input("X", type_of(DType::F32, {kT, kB, kI}));
  ValueId w = g.add_input("W", type_of(DType::F32, {1, 4 * kH, kI}));
  auto n = g.add_node(OpKind::LSTM, "lstm", {x, w, g.add_constant("R", wt.r), g.add_constant("B", wt.b)},
                      {"Y", "Y_h"}, {{"hidden_size", kH}});
  for (ValueId v : g.node(n).outputs) g.add_output(v);
  return g;
}

}  // namespace

TEST_CASE("LSTM with constant weights converts them once and matches the reference", "[unit][onednn][lstm]") {
  const bool bias = GENERATE(true, false);
  INFO("bias " << bias);
  std::mt19937 rng(11);
  const Weights wt = random_weights(rng);
  const Tensor x = random_f32(rng, {kT, kB, kI});
  Graph g = constant_weights_graph(wt, bias);
  canary::graph::infer_shapes(g);
  canary::vm::Interpreter interp(canary::vm::compile(g));
  const std::vector<Tensor> want = reference(x, wt, bias);
  k::onednn_clear_lstm_weight_cache();

  std::vector<Tensor> first = interp.run(std::vector<Tensor>{x});
  CHECK(k::onednn_lstm_weight_cache_stats().misses == 1);
  CHECK(k::onednn_lstm_weight_cache_stats().hits == 0);
  std::vector<Tensor> second = interp.run(std::vector<Tensor>{x});
  CHECK(k::onednn_lstm_weight_cache_stats().misses == 1);
  CHECK(k::onednn_lstm_weight_cache_stats().hits == 1);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(close_to(want[i], first[i]));
    CHECK(close_to(want[i], second[i]));
  }
  k::onednn_clear_lstm_weight_cache();
}

TEST_CASE("LSTM weights fed as an input are converted on every run", "[unit][onednn][lstm]") {
  std::mt19937 rng(12);
  Weights wt = random_weights(rng);
  const Tensor x = random_f32(rng, {kT, kB, kI});
  Graph g = input_weights_graph(wt);
  canary::graph::infer_shapes(g);
  canary::vm::Interpreter interp(canary::vm::compile(g));
  k::onednn_clear_lstm_weight_cache();
  k::onednn_clear_cache();

  const std::vector<Tensor> want1 = reference(x, wt, true);
  std::vector<Tensor> got1 = interp.run(std::vector<Tensor>{x, wt.w});
  // The caller rewrites the same W buffer between runs.
  for (std::int64_t i = 0; i < wt.w.numel(); ++i) wt.w.data<float>()[i] *= -0.5f;
  const std::vector<Tensor> want2 = reference(x, wt, true);
  std::vector<Tensor> got2 = interp.run(std::vector<Tensor>{x, wt.w});
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(close_to(want1[i], got1[i]));
    CHECK(close_to(want2[i], got2[i]));
  }
  CHECK_FALSE(close_to(want1[1], got2[1]));
  CHECK(k::onednn_lstm_weight_cache_stats().size == 0);
  CHECK(k::onednn_lstm_weight_cache_stats().misses == 0);
  CHECK(k::onednn_cache_stats().calls == 2);  // the oneDNN kernel was asked both times
}
