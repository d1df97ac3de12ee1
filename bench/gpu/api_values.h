// Options, tensors and comparisons the GPU check's rows through the public
// API share (engine_checks.cpp, chain_checks.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "canary/canary.h"

namespace canary::gpu_check {

// Synchronous compiles, hot after two calls, fused groups offered to `device`.
inline Options engine_options(const char* device) {
  Options o;
  o.jit.synchronous = true;
  o.jit.hot_threshold = 2;
  o.jit.device = device;
  return o;
}

// A tensor of `shape` with values uniform in [lo, hi).
inline Tensor uniform(std::vector<std::int64_t> shape, std::mt19937& rng, float lo, float hi) {
  Tensor t = Tensor::empty(DType::F32, shape);
  std::uniform_real_distribution<float> u(lo, hi);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

// |a - b| / max(|b|, 1), the largest over the elements.
inline double max_relative(const Tensor& a, const Tensor& b) {
  double worst = 0.0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.data<float>()[i], y = b.data<float>()[i];
    worst = std::max(worst, std::abs(x - y) / std::max(std::abs(y), 1.0));
  }
  return worst;
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace canary::gpu_check
