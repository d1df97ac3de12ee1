// Inputs, output comparisons and the session options shared by the JIT
// benchmarks that time whole models through the public API.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "bench/jit/timing.h"
#include "canary/canary.h"

namespace canary::bench {

// One intra-op thread, the JIT on or off, compiles on the calling thread
// (deterministic), hot after `hot_threshold` calls; each benchmark sets the
// option it compares on top.
inline Options jit_bench_options(bool jit, std::uint64_t hot_threshold) {
  Options o;
  o.intra_op_threads = 1;
  o.jit.enabled = jit;
  o.jit.synchronous = true;
  o.jit.hot_threshold = hot_threshold;
  return o;
}

// An f32 tensor of `shape` with values uniform in [lo, hi] from `seed`.
inline Tensor uniform_tensor(std::vector<std::int64_t> shape, unsigned seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = dist(rng);
  return Tensor::from_vector<float>(v, std::span<const std::int64_t>(shape.data(), shape.size()));
}

// The largest |a - b| over two tensors of one shape.
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  double worst = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i)
    worst = std::max(worst, std::abs(a.element_as_double(i) - b.element_as_double(i)));
  return worst;
}

// Per-call times in ms of single calls of each session on `inputs`: `calls`
// calls per round, `rounds` rounds, the sessions in an order that rotates
// call by call (so none always follows the same one); samples[i] holds
// session i's.
template <std::size_t N>
void rotating_samples(Session* const (&sessions)[N], const NamedTensors& inputs, int rounds, int calls,
                      std::vector<double> (&samples)[N]) {
  for (int r = 0; r < rounds; ++r)
    for (int c = 0; c < calls; ++c)
      for (std::size_t k = 0; k < N; ++k) {
        const std::size_t i = (static_cast<std::size_t>(c) + k) % N;
        samples[i].push_back(per_call_ms(1, [&] { sessions[i]->run(inputs); }));
      }
}

}  // namespace canary::bench
