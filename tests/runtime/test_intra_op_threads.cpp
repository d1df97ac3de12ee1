// Options::intra_op_threads: a session whose oneDNN kernels may use two
// threads computes what a one-thread session computes.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "canary/canary.h"
#include "kernels/onednn.h"

using canary::DType;
using canary::Tensor;

namespace {

// A tensor of the given shape with uniform values in [-1, 1].
Tensor random_tensor(std::mt19937& rng, std::vector<std::int64_t> shape) {
  Tensor t = Tensor::empty(DType::F32, shape);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

// MatMul -> LayerNormalization -> Softmax on x [N, 64, 96], and a bidirectional LSTM on s [16, 4, 32].
canary::Model build_model(const canary::Runtime& rt) {
  std::mt19937 rng(11);
  canary::ModelBuilder b("threads");
  b.input("x", DType::F32, {"N", 64, 96})
      .input("s", DType::F32, {16, 4, 32})
      .constant("w", random_tensor(rng, {96, 128}))
      .constant("scale", random_tensor(rng, {128}))
      .constant("bias", random_tensor(rng, {128}))
      .constant("lw", random_tensor(rng, {2, 128, 32}))
      .constant("lr", random_tensor(rng, {2, 128, 32}))
      .constant("lb", random_tensor(rng, {2, 256}))
      .node("MatMul", {"x", "w"}, {"xw"})
      .node("LayerNormalization", {"xw", "scale", "bias"}, {"n"}, {{"axis", std::int64_t{-1}}})
      .node("Softmax", {"n"}, {"p"}, {{"axis", std::int64_t{1}}})
      .node("LSTM", {"s", "lw", "lr", "lb"}, {"y", "y_h"},
            {{"hidden_size", std::int64_t{32}}, {"direction", std::string("bidirectional")}})
      .output("p")
      .output("y")
      .output("y_h");
  return rt.build(b);
}

// Runs the model with the given thread option on fixed inputs.
canary::NamedTensors run_with_threads(int threads) {
  canary::Options options;
  options.intra_op_threads = threads;
  const canary::Runtime rt(options);
  canary::Session session = build_model(rt).session();
  std::mt19937 rng(21);
  return session.run({{"x", random_tensor(rng, {8, 64, 96})}, {"s", random_tensor(rng, {16, 4, 32})}});
}

// Checks every output of got against want within 1e-5 relative plus 1e-6 absolute.
void check_same(const canary::NamedTensors& want, const canary::NamedTensors& got) {
  REQUIRE(got.size() == want.size());
  for (const auto& [name, w] : want) {
    INFO("output " << name);
    const Tensor& g = got.at(name);
    REQUIRE(g.shape() == w.shape());
    int bad = 0;
    for (std::int64_t i = 0; i < w.numel(); ++i) {
      const double a = w.element_as_double(i), b = g.element_as_double(i);
      if (!(std::abs(a - b) <= 1e-5 * std::abs(a) + 1e-6)) ++bad;
    }
    CHECK(bad == 0);
  }
}

}  // namespace

TEST_CASE("api: intra_op_threads = 2 gives the results of one thread", "[unit][api][onednn]") {
  CHECK(canary::Options{}.intra_op_threads == 1);
  canary::kernels::onednn_clear_cache();
  const canary::NamedTensors one = run_with_threads(1);
  const std::uint64_t misses_one = canary::kernels::onednn_cache_stats().misses;
  const canary::NamedTensors two = run_with_threads(2);
  // Primitives are cached per thread count. Only the MatMul (12.6 Mflop) is
  // big enough for two threads, so the two-thread run created one primitive;
  // LayerNorm and Softmax (65536 elements) stay on one thread and reuse the
  // one-thread run's. The LSTM (sgemm and its own cell loop) creates none.
  CHECK(misses_one == 3);
  CHECK(canary::kernels::onednn_cache_stats().misses == misses_one + 1);
  check_same(one, two);
  check_same(one, run_with_threads(0));
  // The one-thread setting was restored after the two-thread call: its primitives hit again.
  const std::uint64_t misses_before = canary::kernels::onednn_cache_stats().misses;
  check_same(one, run_with_threads(1));
  CHECK(canary::kernels::onednn_cache_stats().misses == misses_before);
}
