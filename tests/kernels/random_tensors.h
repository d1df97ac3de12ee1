// Test support for differential kernel tests: seeded random tensors and the
// tolerance check of an accelerated result against the reference result.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>

#include "canary/tensor.h"

namespace canary::test {

// A tensor of the given shape and dtype (f32 or f64) with uniform values in [-1, 1] from rng.
inline Tensor random_tensor(std::mt19937& rng, const Shape& shape, DType dtype = DType::F32) {
  Tensor t = Tensor::empty(dtype, shape);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    if (dtype == DType::F32) t.data<float>()[i] = static_cast<float>(dist(rng));
    else t.data<double>()[i] = dist(rng);
  }
  return t;
}

// An f32 tensor of the given shape with uniform values in [lo, hi] from rng.
inline Tensor random_tensor_in(std::mt19937& rng, const Shape& shape, double lo, double hi) {
  Tensor t = Tensor::empty(DType::F32, shape);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(dist(rng));
  return t;
}

// Checks got against the reference result: same shape and dtype, each element
// within 1e-4 relative plus 1e-5 absolute.
inline void check_close(const Tensor& want, const Tensor& got) {
  REQUIRE(got.dtype() == want.dtype());
  REQUIRE(got.shape() == want.shape());
  int bad = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    const double w = want.element_as_double(i), g = got.element_as_double(i);
    if (!(std::abs(g - w) <= 1e-4 * std::abs(w) + 1e-5) && bad++ < 5) {
      INFO("element " << i << ": reference " << w << ", oneDNN " << g);
      CHECK(false);
    }
  }
  CHECK(bad == 0);
}

}  // namespace canary::test
