// The device-chain test model, shared by tests/runtime/test_jit_device_chains.cpp
// and the GPU check's chain row (bench/gpu/chain_checks.cpp): Softmax (with
// its Sub prologue), a ReduceSum (with a Mul prologue) and a LayerNorm (with
// an Add prologue), three placed row steps in a row, where p is read by the
// later two only.
#pragma once

namespace canary::test {

inline constexpr const char* kDeviceChainModel = R"(canary v1
graph main(x: f32[N, T], b: f32[T], s: f32[T]) -> (y, n) {
  t = Sub(x, b)
  p = Softmax(t) {axis = -1}
  q = Mul(p, x)
  const last: i64[1] = [-1]
  y = ReduceSum(q, last) {keepdims = 1}
  u = Add(p, b)
  n = LayerNormalization(u, s, b) {axis = -1, epsilon = 0.00001}
}
)";

}  // namespace canary::test
