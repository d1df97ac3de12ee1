// What the device tests share (test_jit_device*.cpp): JIT options with a
// device, the two-group model around a MatMul and its inputs, and counting
// events by their words.
#pragma once

#include <cstdint>
#include <string>

#include "jit_test_models.h"

namespace canary::test {

inline Options device_options(const std::string& device) {
  Options o = jit_options(2);
  o.jit.device = device;
  return o;
}

// Two fused groups around a MatMul (a kernel step or a contraction whose
// epilogue is the second group; a device runs its product only when it
// takes products, HostFusedDevice::Script::matmuls).
inline constexpr const char* kTwoGroups = R"(canary v1
graph main(x: f32[N, 8], w: f32[8, 8], b: f32[8]) -> (y) {
  a = Add(x, b)
  t = Tanh(a)
  m = MatMul(t, w)
  s = Sigmoid(m)
  y = Mul(s, x)
}
)";

inline NamedTensors two_group_inputs(std::int64_t rows, std::uint32_t seed) {
  return {{"x", random_tensor({rows, 8}, seed)},
          {"w", random_tensor({8, 8}, seed + 1, -0.5f, 0.5f)},
          {"b", random_tensor({8}, seed + 2)}};
}

// Events of `kind` whose message holds `words`.
inline std::size_t count_events(const Model& m, EventKind kind, const std::string& words) {
  std::size_t n = 0;
  for (const Event& e : m.events())
    if (e.kind == kind && e.message.find(words) != std::string::npos) ++n;
  return n;
}

}  // namespace canary::test
