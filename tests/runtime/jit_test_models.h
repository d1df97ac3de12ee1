// Small models and helpers shared by the JIT session tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "canary/canary.h"

namespace canary::test {

// Options for deterministic JIT tests: synchronous compiles, hot after `hot` calls.
inline Options jit_options(std::uint64_t hot = 2) {
  Options o;
  o.jit.enabled = true;
  o.jit.synchronous = true;
  o.jit.hot_threshold = hot;
  o.jit.hot_time_us = 0;  // tier up by visits only: deterministic
  return o;
}

inline Options interpreter_options() {
  Options o;
  o.jit.enabled = false;
  return o;
}

// y = relu(tanh(x * 0.5 + b) - x) * x, with x [N, C] and b [C]: one fusable chain.
inline Model elementwise_chain(const Runtime& rt) {
  ModelBuilder b("chain");
  b.input("x", DType::F32, {"N", "C"})
      .input("b", DType::F32, {"C"})
      .constant("half", Tensor::scalar<float>(0.5f))
      .node("Mul", {"x", "half"}, {"xs"})
      .node("Add", {"xs", "b"}, {"z"})
      .node("Tanh", {"z"}, {"t"})
      .node("Sub", {"t", "x"}, {"d"})
      .node("Relu", {"d"}, {"r"})
      .node("Mul", {"r", "x"}, {"y"})
      .output("y");
  return rt.build(b);
}

// Uniform values in [lo, hi] from a seed.
inline Tensor random_tensor(std::vector<std::int64_t> shape, std::uint32_t seed, float lo = -2.0f, float hi = 2.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = dist(rng);
  return Tensor::from_vector<float>(v, std::span<const std::int64_t>(shape.data(), shape.size()));
}

// Events of one kind.
inline std::vector<Event> events_of(const Model& m, EventKind kind) {
  std::vector<Event> out;
  for (const Event& e : m.events())
    if (e.kind == kind) out.push_back(e);
  return out;
}

// Largest |a - b| / max(1, |b|) over two f32 tensors of one shape.
inline double max_relative_difference(const Tensor& a, const Tensor& b) {
  double worst = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.element_as_double(i), y = b.element_as_double(i);
    const double d = std::abs(x - y) / std::max(1.0, std::abs(y));
    if (!(d <= worst)) worst = d;
  }
  return worst;
}

// Every variant's listing in the model's JIT report, joined.
inline std::string listings(const Model& m) {
  std::string all;
  for (const auto& a : m.jit_report().anchors)
    for (const auto& v : a.variants) all += v.listing + "\n";
  return all;
}

// Every event message in the model's log, one per line.
inline std::string event_messages(const Model& m) {
  std::string log;
  for (const Event& e : m.events()) log += e.message + "\n";
  return log;
}

// got matches want element by element: NaN where want is NaN, the same
// infinities, finite values within `tol` relative (to at least 1). Reports
// the first few elements that differ.
inline void check_same_values(const Tensor& got, const Tensor& want, double tol) {
  REQUIRE(got.shape() == want.shape());
  int bad = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.element_as_double(i), w = want.element_as_double(i);
    const bool same = std::isnan(w)   ? std::isnan(g)
                      : std::isinf(w) ? g == w
                                      : std::abs(g - w) <= tol * std::max(1.0, std::abs(w));
    if (!same && bad++ < 5) {
      INFO("element " << i << ": got " << g << ", want " << w);
      CHECK(false);
    }
  }
  CHECK(bad == 0);
}

// True when both tensors hold the same bits.
inline bool bit_identical(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

}  // namespace canary::test
