// erf and GELU (erf form and ONNX's tanh approximation) as vector code.
//
// erf(a), a = |x| < 0.5: a * P(a^2) with the leading 2/sqrt(pi) split in two
// floats. Otherwise erf = 1 - erfc(a) with
//   erfc(a) = exp(-a^2) * G(q) / (1 + 2a),  q = (a - 2) / (a + 2),
// G a degree-9 fit of exp(a^2) erfc(a) (1 + 2a) on a in [0.5, 10.5]. G is
// nearly flat, so the rounding of q and a barely matter; a^2 is split exactly
// with an FMA and both halves go to the exp core; in Exact mode the quotient
// by 1 + 2a is corrected for its own rounding and that of 1 + 2a.
//
// GELU (x < 0 and |x / sqrt 2| >= 0.5) = 0.5 x erfc(|x| / sqrt 2), with x / sqrt 2
// carried as two floats; the 2^n scaling of exp comes last so tiny results
// round once. Elsewhere GELU = x * (1 +- ...) without cancellation.
// The tanh form is x * sigmoid(2u), 2u = x (A + B x^2), computed in two floats
// in Exact mode because exp magnifies its rounding by |2u| (Fast: one float).
#include <array>

#include "jit/x86/vector_math.h"
#include "jit/x86/vector_math_primitives.h"

namespace canary::jit::x86 {

using namespace vecmath;

namespace {

constexpr float kSmallArg = 0.5f;                 // below: the erf polynomial
constexpr float kErfArgMax = 4.0f;                // erf rounds to +-1 beyond
constexpr float kTwoOverSqrtPiHi = 0x1.20dd76p+0f;
constexpr float kTwoOverSqrtPiLo = -0x1.f7ac92p-25f;
// erf(a) / a - kTwoOverSqrtPiHi as a polynomial in a^2 on [0, 0.5].
constexpr std::array<float, 5> kErfSmall = {kTwoOverSqrtPiLo, -0x1.812738p-2f, 0x1.ce2642p-4f, -0x1.b67f38p-6f,
                                            0x1.35f592p-8f};
constexpr float kErfcShift = 2.0f;  // q = (a - 2) / (a + 2)
// exp(a^2) erfc(a) (1 + 2a) as a polynomial in q, a in [0.5, 10.5].
constexpr std::array<float, 10> kErfcG = {0x1.46e80ep+0f,  -0x1.7bf5eap-4f, -0x1.5407bcp-3f, 0x1.4ff94cp-3f,
                                          -0x1.bc227p-5f,  -0x1.067a1cp-7f, 0x1.1c42a8p-7f,  0x1.2dce16p-10f,
                                          -0x1.50c1bp-10f, -0x1.d0efcap-13f};
// GELU, erf form.
constexpr float kGeluArgMax = 16.0f;  // |x| past which GELU(x) is x or 0
constexpr float kRsqrt2Hi = 0x1.6a09e6p-1f;
constexpr float kRsqrt2Lo = 0x1.9fcef4p-27f;
// GELU, tanh form: 2u = x (A + B x^2), A = 2 sqrt(2/pi), B = 0.044715 A.
constexpr float kGeluTanhArgMax = 12.0f;
constexpr float kTanhAHi = 0x1.988454p+0f;
constexpr float kTanhALo = -0x1.857936p-25f;
constexpr float kTanhBHi = 0x1.2444f2p-4f;
constexpr float kTanhBLo = 0x1.49b16ap-29f;

// dst = erf(t) for |t| < 0.5.
void emit_erf_small(VecContext& ctx, const ax::Vec& dst, const ax::Vec& t) {
  ax::Vec z = ctx.new_vec("z");
  ax::Vec p = ctx.new_vec("p");
  ctx.cc().vmulps(z, t, t);
  horner(ctx, p, z, kErfSmall);
  ctx.cc().vmulps(p, p, t);
  fmadd(ctx, dst, t, ctx.constant(kTwoOverSqrtPiHi), p);
}

// dst = -(hi + lo) = -a^2 split exactly, from v with a^2 = scale * v^2.
void emit_neg_square(VecContext& ctx, const ax::Vec& hi, const ax::Vec& lo, const ax::Vec& v, float scale) {
  ax::Compiler& cc = ctx.cc();
  cc.vmulps(hi, v, v);
  fmsub(ctx, lo, v, v, hi);
  cc.vmulps(hi, hi, ctx.constant(-scale));
  cc.vmulps(lo, lo, ctx.constant(-scale));
}

// r = G(q) / (1 + 2a) corrected for the rounding of the quotient and of
// 1 + 2a, and for a's low part a_lo (may be invalid).
void emit_quotient_correction(VecContext& ctx, const ax::Vec& r, const ax::Vec& g, const ax::Vec& d,
                              const ax::Vec& a, const ax::Vec& a_lo) {
  ax::Compiler& cc = ctx.cc();
  ax::Vec dl = ctx.new_vec("d_lo");
  ax::Vec rem = ctx.new_vec("rem");
  cc.vsubps(dl, d, ctx.constant(1.0f));
  cc.vaddps(rem, a, a);
  cc.vsubps(dl, rem, dl);  // 1 + 2a - d, exact
  if (a_lo.isValid()) fmadd(ctx, dl, a_lo, ctx.constant(2.0f), dl);
  fnmadd(ctx, rem, r, d, g);     // g - r d, exact
  fnmadd(ctx, rem, r, dl, rem);  // - r d_lo
  reciprocal_estimate(ctx, dl, d);
  fmadd(ctx, r, rem, dl, r);
}

// r = exp(a^2) erfc(a) for a in [0.5, 10.5] (any a >= 0 gives a finite value).
void emit_erfc_ratio(VecContext& ctx, const ax::Vec& r, const ax::Vec& a, const ax::Vec& a_lo) {
  ax::Compiler& cc = ctx.cc();
  ax::Vec q = ctx.new_vec("q");
  ax::Vec g = ctx.new_vec("G");
  ax::Vec d = ctx.new_vec("d");
  cc.vsubps(q, a, ctx.constant(kErfcShift));
  cc.vaddps(d, a, ctx.constant(kErfcShift));
  divide(ctx, q, q, d);
  horner(ctx, g, q, kErfcG);
  fmadd(ctx, d, a, ctx.constant(2.0f), constant_reg(ctx, 1.0f, "one"));
  divide(ctx, r, g, d);
  if (ctx.mode() == MathMode::Exact) emit_quotient_correction(ctx, r, g, d, a, a_lo);
}

// m * 2^n = erfc(a); exp(-a^2) comes from the split -(sq_hi + sq_lo).
Pow2 emit_erfc(VecContext& ctx, const ax::Vec& m, const ax::Vec& a, const ax::Vec& a_lo, const ax::Vec& sq_hi,
               const ax::Vec& sq_lo) {
  ExpParts e = emit_exp_parts(ctx, sq_hi, sq_lo, true);
  Pow2 p = make_pow2(ctx, e);
  ax::Vec r = ctx.new_vec("ratio");
  emit_erfc_ratio(ctx, r, a, a_lo);
  fmadd(ctx, m, e.pm1, r, r);  // (1 + pm1) * r
  return p;
}

// dst = v with the sign bit of `sign` ORed in (v >= 0).
void apply_sign(VecContext& ctx, const ax::Vec& dst, const ax::Vec& v, const ax::Vec& sign) {
  ctx.cc().vorps(dst, v, sign);
}

// w + w_lo = A + B (x2 + x2_lo) in two floats (Dekker products, TwoSum).
void emit_gelu_tanh_slope(VecContext& ctx, const ax::Vec& w, const ax::Vec& w_lo, const ax::Vec& x2,
                          const ax::Vec& x2_lo) {
  ax::Compiler& cc = ctx.cc();
  ax::Vec b = ctx.new_vec("b");
  ax::Vec bb = ctx.new_vec("bb");
  ax::Vec t = ctx.new_vec("t");
  cc.vmulps(b, x2, ctx.constant(kTanhBHi));
  fmsub(ctx, w_lo, x2, ctx.constant(kTanhBHi), b);
  fmadd(ctx, w_lo, x2_lo, ctx.constant(kTanhBHi), w_lo);
  fmadd(ctx, w_lo, x2, ctx.constant(kTanhBLo), w_lo);
  cc.vaddps(w, b, ctx.constant(kTanhAHi));
  cc.vsubps(bb, w, ctx.constant(kTanhAHi));
  cc.vsubps(t, bb, w);
  cc.vaddps(t, t, ctx.constant(kTanhAHi));  // A - (w - bb)
  cc.vsubps(b, b, bb);                       // b - bb
  cc.vaddps(w_lo, w_lo, t);
  cc.vaddps(w_lo, w_lo, b);
  cc.vaddps(w_lo, w_lo, ctx.constant(kTanhALo));
}

// hi + lo = -|2u|, 2u = x (A + B x^2), in two floats (Exact mode).
void emit_gelu_tanh_argument(VecContext& ctx, const ax::Vec& hi, const ax::Vec& lo, const ax::Vec& x) {
  ax::Compiler& cc = ctx.cc();
  ax::Vec x2 = ctx.new_vec("x2");
  ax::Vec x2_lo = ctx.new_vec("x2_lo");
  ax::Vec w = ctx.new_vec("w");
  ax::Vec w_lo = ctx.new_vec("w_lo");
  cc.vmulps(x2, x, x);
  fmsub(ctx, x2_lo, x, x, x2);
  emit_gelu_tanh_slope(ctx, w, w_lo, x2, x2_lo);
  cc.vmulps(hi, x, w);
  fmsub(ctx, lo, x, w, hi);
  fmadd(ctx, lo, x, w_lo, lo);
  cc.vandps(x2, hi, bits_constant(ctx, kSignBit));
  cc.vxorps(x2, x2, bits_constant(ctx, kSignBit));  // sign bit set where hi >= 0
  cc.vxorps(hi, hi, x2);
  cc.vxorps(lo, lo, x2);
}

// hi = -|x (A + B x^2)| in one float (Fast mode).
void emit_gelu_tanh_argument_fast(VecContext& ctx, const ax::Vec& hi, const ax::Vec& x) {
  ax::Vec w = ctx.new_vec("w");
  ctx.cc().vmulps(w, x, x);
  fmadd(ctx, w, w, ctx.constant(kTanhBHi), constant_reg(ctx, kTanhAHi, "A"));
  ctx.cc().vmulps(hi, x, w);
  ctx.cc().vorps(hi, hi, bits_constant(ctx, kSignBit));
}

}  // namespace

// erf(x): the small-argument polynomial below 0.5, else 1 - erfc(|x|).
void emit_erf(VecContext& ctx, const ax::Vec& dst, const ax::Vec& src) {
  ax::Compiler& cc = ctx.cc();
  ax::Vec sign = ctx.new_vec("sign");
  ax::Vec a = ctx.new_vec("a");
  ax::Vec small = ctx.new_vec("erf_small");
  ax::Vec sq_hi = ctx.new_vec("sq_hi");
  ax::Vec sq_lo = ctx.new_vec("sq_lo");
  ax::Vec m = ctx.new_vec("m");
  cc.vandps(sign, src, bits_constant(ctx, kSignBit));
  cc.vandps(a, src, bits_constant(ctx, kAbsMask));
  cc.vminps(a, constant_reg(ctx, kErfArgMax), a);  // NaN stays NaN
  emit_erf_small(ctx, small, a);
  emit_neg_square(ctx, sq_hi, sq_lo, a, 1.0f);
  Pow2 p = emit_erfc(ctx, m, a, ax::Vec(), sq_hi, sq_lo);
  apply_pow2(ctx, m, m, p);
  ax::Vec y = constant_reg(ctx, 1.0f, "erf");
  cc.vsubps(y, y, m);
  select(ctx, y, compare(ctx, a, ctx.constant(kSmallArg), ax::VCmpImm::kLT_OQ), small);
  apply_sign(ctx, dst, y, sign);
}

namespace {

// t + t_lo = x / sqrt 2 in two floats.
void emit_div_sqrt2(VecContext& ctx, const ax::Vec& t, const ax::Vec& t_lo, const ax::Vec& x) {
  ctx.cc().vmulps(t, x, ctx.constant(kRsqrt2Hi));
  fmsub(ctx, t_lo, x, ctx.constant(kRsqrt2Hi), t);
  fmadd(ctx, t_lo, x, ctx.constant(kRsqrt2Lo), t_lo);
}

// -inf -> NaN, as 0.5 x (1 + ...) gives (-inf * 0).
void fix_negative_infinity(VecContext& ctx, const ax::Vec& y, const ax::Vec& x) {
  select_bits(ctx, y, compare(ctx, x, bits_constant(ctx, kNegInf), ax::VCmpImm::kEQ_OQ), kQuietNaN);
}

// GELU, erf form (see the file comment).
void emit_gelu_erf(VecContext& ctx, const ax::Vec& dst, const ax::Vec& x) {
  ax::Compiler& cc = ctx.cc();
  ax::Vec xc = ctx.new_vec("xc");
  ax::Vec t = ctx.new_vec("t");
  ax::Vec t_lo = ctx.new_vec("t_lo");
  ax::Vec hs = ctx.new_vec("h_small");
  ax::Vec sq_hi = ctx.new_vec("sq_hi");
  ax::Vec sq_lo = ctx.new_vec("sq_lo");
  ax::Vec h = ctx.new_vec("h");
  ax::Vec m = ctx.new_vec("m");
  ax::Vec half = constant_reg(ctx, 0.5f, "half");
  clamp(ctx, xc, x, -kGeluArgMax, kGeluArgMax);
  emit_div_sqrt2(ctx, t, t_lo, xc);
  emit_erf_small(ctx, hs, t);
  fmadd(ctx, hs, hs, half, half);  // 0.5 + 0.5 erf(t)
  Mask negative_tail = compare(ctx, t, ctx.constant(-kSmallArg), ax::VCmpImm::kLE_OQ);
  cc.vandps(h, t, bits_constant(ctx, kSignBit));
  cc.vxorps(t_lo, t_lo, h);  // low part of |t|
  cc.vxorps(t, t, h);        // |t|
  Mask small = compare(ctx, t, ctx.constant(kSmallArg), ax::VCmpImm::kLT_OQ);
  emit_neg_square(ctx, sq_hi, sq_lo, xc, 0.5f);
  Pow2 p = emit_erfc(ctx, m, t, t_lo, sq_hi, sq_lo);
  apply_pow2(ctx, h, m, p);
  fnmadd(ctx, h, h, half, ctx.constant(1.0f));  // 1 - 0.5 erfc(|t|)
  select(ctx, h, small, hs);
  cc.vmulps(h, h, x);
  cc.vmulps(xc, xc, half);
  cc.vmulps(m, m, xc);
  apply_pow2(ctx, m, m, p);  // 0.5 x erfc(|t|), scaled last
  select(ctx, h, negative_tail, m);
  fix_negative_infinity(ctx, h, x);
  cc.vmovaps(dst, h);
}

// z = x / (1 + e) for x >= 0 and x e / (1 + e) for x < 0, e = 2^n (1 + pm1).
void emit_times_sigmoid(VecContext& ctx, const ax::Vec& z, const ax::Vec& x, const ax::Vec& xc, const ExpParts& e) {
  ax::Compiler& cc = ctx.cc();
  ax::Vec ep = ctx.new_vec("ep");
  ax::Vec d = ctx.new_vec("d");
  Mask negative = compare(ctx, x, ctx.constant(0.0f), ax::VCmpImm::kLT_OQ);
  Pow2 p = make_pow2(ctx, e);
  cc.vaddps(ep, e.pm1, ctx.constant(1.0f));
  apply_pow2(ctx, d, ep, p);
  cc.vaddps(d, d, ctx.constant(1.0f));
  cc.vmulps(ep, ep, xc);
  cc.vmovaps(z, x);
  select(ctx, z, negative, ep);
  divide(ctx, z, z, d);
  apply_pow2(ctx, d, z, p);  // x < 0: the 2^n scaling comes last
  select(ctx, z, negative, d);
}

// GELU, tanh form: x sigmoid(2u), e = exp(-|2u|).
void emit_gelu_tanh(VecContext& ctx, const ax::Vec& dst, const ax::Vec& x) {
  ax::Vec xc = ctx.new_vec("xc");
  ax::Vec hi = ctx.new_vec("u_hi");
  ax::Vec lo;
  ax::Vec z = ctx.new_vec("z");
  clamp(ctx, xc, x, -kGeluTanhArgMax, kGeluTanhArgMax);
  if (ctx.mode() == MathMode::Exact) {
    lo = ctx.new_vec("u_lo");
    emit_gelu_tanh_argument(ctx, hi, lo, xc);
  } else {
    emit_gelu_tanh_argument_fast(ctx, hi, xc);
  }
  emit_times_sigmoid(ctx, z, x, xc, emit_exp_parts(ctx, hi, lo, true));
  fix_negative_infinity(ctx, z, x);
  ctx.cc().vmovaps(dst, z);
}

}  // namespace

// GELU(x) = 0.5 x (1 + erf(x / sqrt 2)) or, with approximate_tanh,
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
void emit_gelu(VecContext& ctx, const ax::Vec& dst, const ax::Vec& src, bool approximate_tanh) {
  if (approximate_tanh)
    emit_gelu_tanh(ctx, dst, src);
  else
    emit_gelu_erf(ctx, dst, src);
}

}  // namespace canary::jit::x86
