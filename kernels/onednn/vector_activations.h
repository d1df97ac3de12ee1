// Branch-free f32 exp, sigmoid and tanh that GCC vectorises inside a loop
// (the recurrent cells' gate updates), accurate to a few ulp of exp.
//
// libm's expf/tanhf are calls the vectoriser cannot inline, so a gate loop
// over them runs one element at a time (about 10 ns each); these are plain
// arithmetic on floats and their bits, so a loop of them runs 8 or 16 lanes
// wide under the caller's target attribute.
//
// exp: x = n ln2 + r with |r| <= ln2/2 (ln2 split in two parts, so r is
// exact), e^r by Cephes' degree-6 polynomial (relative error about 1e-7),
// times 2^n built in the exponent bits. The argument is clamped to where
// 2^n is a normal float; the clamp is written as compares that a NaN fails,
// so a NaN argument gives a NaN result, and nothing converts a float to an
// integer (a NaN's conversion would be undefined).
#pragma once

#include <cstdint>
#include <cstring>

namespace canary::kernels::onednn {

__attribute__((always_inline)) inline float exp_approx(float x) {
  constexpr float kMax = 88.3762626647949f, kMin = -87.3365447505531f;
  // Adding 1.5 * 2^23 rounds to an integer n, which the sum's low mantissa
  // bits then hold: its bits are those of 1.5 * 2^23 plus n.
  constexpr float kShifter = 12582912.0f;
  constexpr std::uint32_t kShifterBits = 0x4B400000u;
  x = x > kMax ? kMax : x;
  x = x < kMin ? kMin : x;
  const float shifted = x * 1.44269504088896341f + kShifter;
  const float n = shifted - kShifter;
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  // 2^n: n + 127 in the exponent field (unsigned arithmetic: a NaN's bits
  // give some finite scale, and the NaN polynomial keeps the result NaN).
  std::uint32_t bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  bits = (bits - kShifterBits + 127u) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return (p * r * r + r + 1.0f) * scale;
}

// 1 / (1 + e^-x): 0 and 1 at the ends, NaN for NaN.
__attribute__((always_inline)) inline float sigmoid_approx(float x) { return 1.0f / (1.0f + exp_approx(-x)); }

// 1 - 2 / (e^2x + 1): -1 and 1 at the ends, NaN for NaN. Absolute error
// about 1e-7 (relative error grows near 0, where the result is tiny).
__attribute__((always_inline)) inline float tanh_approx(float x) {
  return 1.0f - 2.0f / (exp_approx(2.0f * x) + 1.0f);
}

}  // namespace canary::kernels::onednn
