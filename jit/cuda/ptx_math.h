// Device math routines (exp, log, log1p, tanh, erf, sigmoid, softplus, GELU)
// written once against a math machine M (PtxMath emits PTX, CpuMath computes
// on the host), in f32 only: there is no f64 fast path on the GPU.
//
// Exact mode uses only IEEE-rounded operations (fma, add, mul, div.rn, ...),
// so CpuMath reproduces the GPU's bits and the error is measured on the CPU
// against double-precision libm. Worst case over every 17th float bit
// pattern (253M inputs each): exp 1.00, log 0.80, tanh 1.31, erf 1.02,
// sigmoid 2.40, softplus 2.80 ulp; tests/cuda/test_ptx_math_accuracy.cpp
// holds them to 4 ulp on a sparser sample. Subnormal inputs and results are
// handled, NaN in -> NaN out, overflow/underflow as libm.
// Fast mode swaps the polynomial kernels for ex2.approx/lg2.approx and the
// divisions for div.full/rcp.approx; its bound is measured on the GPU.
#pragma once

#include <limits>

#include "jit/fused_kernel.h"

namespace canary::jit::cuda::ptx_math {

inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2 = 0.693147180559945309f;
// ln 2 split for Cody-Waite reduction: kLn2Hi has few bits, so n * kLn2Hi is exact.
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440e-4f;

// Horner evaluation c[0] x^(n-1) + ... + c[n-1] with fused multiply-adds.
template <class M, int N>
typename M::F horner(M& m, typename M::F x, const float (&coef)[N]) {
  typename M::F acc = m.c(coef[0]);
  for (int i = 1; i < N; ++i) acc = m.fma(acc, x, m.c(coef[i]));
  return acc;
}

// 2^n for an integer n in [-151, 128] as two exact factors 2^(n>>1) and
// 2^(n - (n>>1)), so p * scale rounds once even when the result is subnormal.
template <class M>
typename M::F scale_by_pow2(M& m, typename M::F p, typename M::I n) {
  const typename M::I n1 = m.isra(n, 1);
  const typename M::I n2 = m.isub(n, n1);
  const typename M::F s1 = m.from_bits(m.ishl(m.iadd(n1, m.ic(127)), 23));
  const typename M::F s2 = m.from_bits(m.ishl(m.iadd(n2, m.ic(127)), 23));
  return m.mul(m.mul(p, s1), s2);
}

// e^x: x = n ln2 + r with |r| <= ln2/2, e^r by a degree-7 polynomial (Exact,
// Cephes expf coefficients) or ex2.approx (Fast), then scaled by 2^n.
template <class M>
typename M::F exp(M& m, typename M::F x, MathMode mode) {
  using F = typename M::F;
  // Clamping keeps n within the scaling range; the results there are 0 and +inf anyway.
  const F xc = m.min_num(m.max_num(x, m.c(-104.0f)), m.c(89.0f));
  const F n = m.rint(m.mul(xc, m.c(kLog2e)));
  F r = m.fma(n, m.c(-kLn2Hi), xc);
  r = m.fma(n, m.c(-kLn2Lo), r);
  F p;
  if (mode == MathMode::Exact) {
    static constexpr float kExpPoly[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                         4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
    p = m.add(m.fma(horner(m, r, kExpPoly), m.mul(r, r), r), m.c(1.0f));
  } else {
    p = m.ex2_approx(m.mul(r, m.c(kLog2e)));
  }
  const F y = scale_by_pow2(m, p, m.f2i(n));
  return m.select(m.is_nan(x), x, y);
}

// ln x (Exact): x = 2^k m with m in [sqrt(1/2), sqrt 2), ln(1 + f) with f = m - 1
// by Cephes logf's polynomial; subnormals are scaled by 2^23 first.
template <class M>
typename M::F log_exact(M& m, typename M::F x) {
  using F = typename M::F;
  using I = typename M::I;
  const auto subnormal = m.lt(x, m.c(1.17549435e-38f));
  const F xs = m.select(subnormal, m.mul(x, m.c(8388608.0f)), x);
  const I ix = m.isub(m.bits(xs), m.ic(0x3f3504f3));
  const I k = m.iadd(m.isra(ix, 23), m.iselect(subnormal, m.ic(-23), m.ic(0)));
  const F f = m.sub(m.from_bits(m.iadd(m.iand(ix, m.ic(0x007fffff)), m.ic(0x3f3504f3))), m.c(1.0f));
  const F kf = m.i2f(k);
  static constexpr float kLogPoly[] = {7.0376836292e-2f, -1.1514610310e-1f, 1.1676998740e-1f,
                                       -1.2420140846e-1f, 1.4249322787e-1f, -1.6668057665e-1f,
                                       2.0000714765e-1f, -2.4999993993e-1f, 3.3333331174e-1f};
  const F z = m.mul(f, f);
  F y = m.mul(m.mul(horner(m, f, kLogPoly), f), z);
  y = m.fma(kf, m.c(kLn2Lo), y);
  y = m.fma(z, m.c(-0.5f), y);
  F r = m.add(f, y);
  r = m.fma(kf, m.c(kLn2Hi), r);
  // Special values: +inf, zero (either sign), negative, NaN.
  r = m.select(m.eq(x, m.c(std::numeric_limits<float>::infinity())), x, r);
  r = m.select(m.eq(x, m.c(0.0f)), m.c(-std::numeric_limits<float>::infinity()), r);
  r = m.select(m.lt(x, m.c(0.0f)), m.c(std::numeric_limits<float>::quiet_NaN()), r);
  return m.select(m.is_nan(x), x, r);
}

// ln x in either mode; Fast is lg2.approx scaled by ln 2.
template <class M>
typename M::F log(M& m, typename M::F x, MathMode mode) {
  if (mode == MathMode::Exact) return log_exact(m, x);
  return m.mul(m.lg2_approx(x), m.c(kLn2));
}

// ln(1 + u) for u in [0, 1] (the softplus domain): u exactly when 1 + u
// rounds to 1, else ln(w) * u / (w - 1) with w = 1 + u, which cancels the
// rounding of w. Always the exact logarithm.
template <class M>
typename M::F log1p_unit(M& m, typename M::F u) {
  using F = typename M::F;
  const F w = m.add(m.c(1.0f), u);
  const F wm1 = m.sub(w, m.c(1.0f));
  const F l = m.mul(log_exact(m, w), m.div(u, wm1));
  return m.select(m.eq(w, m.c(1.0f)), u, l);
}

// tanh x: Cephes tanhf's odd polynomial below |x| = 0.625, else
// 1 - 2 / (e^(2|x|) + 1) with x's sign (saturates to +-1 through e = inf).
template <class M>
typename M::F tanh(M& m, typename M::F x, MathMode mode) {
  using F = typename M::F;
  const F ax = m.abs(x);
  static constexpr float kTanhPoly[] = {-5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f,
                                        1.33314422036e-1f, -3.33332819422e-1f};
  const F z = m.mul(x, x);
  const F small = m.fma(m.mul(horner(m, z, kTanhPoly), z), x, x);
  const F e1 = m.add(exp(m, m.add(ax, ax), mode), m.c(1.0f));
  const F q = mode == MathMode::Exact ? m.div(m.c(2.0f), e1) : m.mul(m.c(2.0f), m.rcp_approx(e1));
  const F large = m.copysign(m.sub(m.c(1.0f), q), x);
  return m.select(m.lt(ax, m.c(0.625f)), small, large);
}

// erf x: an odd polynomial in x for |x| <= 0.921875; above, 1 - e^(q(|x|))
// with q a polynomial approximating ln erfc, sign restored. erf saturates to
// +-1 through e^q underflowing.
template <class M>
typename M::F erf(M& m, typename M::F x, MathMode mode) {
  using F = typename M::F;
  const F t = m.abs(x);
  const F s = m.mul(x, x);
  static constexpr float kSmall[] = {-5.96761703e-4f, 4.99119423e-3f, -2.67681349e-2f,
                                     1.12819925e-1f, -3.76125336e-1f, 1.28379166e-1f};
  const F small = m.fma(horner(m, s, kSmall), x, x);
  F r = m.fma(m.c(-1.72853470e-5f), t, m.c(3.83197126e-4f));
  const F u = m.fma(m.c(-3.88396438e-3f), t, m.c(2.42546219e-2f));
  r = m.fma(r, s, u);
  r = m.fma(r, t, m.c(-1.06777877e-1f));
  r = m.fma(r, t, m.c(-6.34846687e-1f));
  r = m.fma(r, t, m.c(-1.28717512e-1f));
  r = m.fma(r, t, m.neg(t));
  const F large = m.copysign(m.sub(m.c(1.0f), exp(m, r, mode)), x);
  return m.select(m.le(t, m.c(0.921875f)), small, large);
}

// The logistic function without overflow: 1 / (1 + e^-x) for x >= 0, else
// e^x / (1 + e^x), as the reference kernel.
template <class M>
typename M::F sigmoid(M& m, typename M::F x, MathMode mode) {
  using F = typename M::F;
  const F e = exp(m, m.neg(m.abs(x)), mode);
  const F d = m.add(m.c(1.0f), e);
  const F num = m.select(m.ge(x, m.c(0.0f)), m.c(1.0f), e);
  return mode == MathMode::Exact ? m.div(num, d) : m.div_approx(num, d);
}

// log(1 + e^x) without overflow: x + log1p(e^-x) for x > 0, else log1p(e^x).
template <class M>
typename M::F softplus(M& m, typename M::F x, MathMode mode) {
  using F = typename M::F;
  const F l = log1p_unit(m, exp(m, m.neg(m.abs(x)), mode));
  return m.select(m.gt(x, m.c(0.0f)), m.add(x, l), l);
}

// GELU, evaluated in the reference kernel's order of operations: erf form
// 0.5 x (1 + erf(x / sqrt 2)); tanh form 0.5 x (1 + tanh(k (x + 0.044715 x^3))).
template <class M>
typename M::F gelu(M& m, typename M::F x, bool tanh_form, MathMode mode) {
  using F = typename M::F;
  const F half_x = m.mul(m.c(0.5f), x);
  if (!tanh_form) return m.mul(half_x, m.add(m.c(1.0f), erf(m, m.mul(x, m.c(0.707106781186547524f)), mode)));
  const F cube = m.mul(m.mul(m.mul(m.c(0.044715f), x), x), x);
  const F inner = m.mul(m.c(0.797884560802865355f), m.add(x, cube));
  return m.mul(half_x, m.add(m.c(1.0f), tanh(m, inner, mode)));
}

}  // namespace canary::jit::cuda::ptx_math
