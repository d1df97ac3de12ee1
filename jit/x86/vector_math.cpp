// Vector math emitted inline: the emission context (VecContext; its constants
// go to AsmJit's function-local constant pool, emitted after the function) and
// exp, log, softplus, tanh and sigmoid, built on the exp/log cores of
// vector_math_cores.cpp. erf and GELU live in vector_math_erf.cpp.
#include "jit/x86/vector_math.h"

#include <bit>

#include "jit/x86/vector_math_primitives.h"

namespace canary::jit::x86 {

using namespace vecmath;

namespace {

constexpr float kFltMin = 0x1p-126f;
constexpr float kDenormalScale = 0x1p23f;  // brings a denormal into the normal range
constexpr float kDenormalScaleLog2 = 23.0f;
constexpr float kTanhArgMax = 20.0f;       // 2|x| past which tanh(x) rounds to +-1

// dst = -|x|.
void negative_abs(VecContext& ctx, const ax::Vec& dst, const ax::Vec& x) {
  ctx.cc().vorps(dst, x, bits_constant(ctx, kSignBit));
}

// log's special inputs: x < 0 -> NaN, +-0 -> -inf, +inf and NaN -> x.
void fix_log_specials(VecContext& ctx, const ax::Vec& y, const ax::Vec& x) {
  select_bits(ctx, y, compare(ctx, x, ctx.constant(0.0f), ax::VCmpImm::kLT_OQ), kQuietNaN);
  select_bits(ctx, y, compare(ctx, x, ctx.constant(0.0f), ax::VCmpImm::kEQ_OQ), kNegInf);
  select(ctx, y, compare(ctx, x, bits_constant(ctx, kPosInf), ax::VCmpImm::kNLT_UQ), x);
}

}  // namespace

VecContext::VecContext(asmjit::x86::Compiler& cc, Isa isa, MathMode mode) : cc_(cc), isa_(isa), mode_(mode) {}

asmjit::x86::Vec VecContext::new_vec(const char* name) const {
  switch (isa_) {
    case Isa::Avx512: return cc_.newZmm(name);
    case Isa::Avx2: return cc_.newYmm(name);
    case Isa::Scalar: break;
  }
  return cc_.newXmm(name);
}

asmjit::x86::Mem VecContext::constant(float value) { return bits_constant(*this, std::bit_cast<std::uint32_t>(value)); }

void VecContext::load_constant(const asmjit::x86::Vec& dst, float value) { cc_.vmovups(dst, constant(value)); }

// exp(x) = 2^n * (1 + pm1).
void emit_exp(VecContext& ctx, const ax::Vec& dst, const ax::Vec& src) {
  ExpParts e = emit_exp_parts(ctx, src, ax::Vec(), ctx.mode() == MathMode::Exact);
  Pow2 p = make_pow2(ctx, e);
  ctx.cc().vaddps(e.pm1, e.pm1, ctx.constant(1.0f));
  apply_pow2(ctx, dst, e.pm1, p);
}

// log(x): denormals pre-scaled by 2^23, then k * ln2 + log(1 + f).
void emit_log(VecContext& ctx, const ax::Vec& dst, const ax::Vec& src) {
  ax::Compiler& cc = ctx.cc();
  ax::Vec xn = ctx.new_vec("xn");
  ax::Vec adj = ctx.new_vec("kadj");
  ax::Vec f = ctx.new_vec("f");
  ax::Vec kf = ctx.new_vec("kf");
  ax::Vec y = ctx.new_vec("log");
  Mask denormal = compare(ctx, src, ctx.constant(kFltMin), ax::VCmpImm::kLT_OQ);
  cc.vmulps(f, src, ctx.constant(kDenormalScale));
  cc.vmovaps(xn, src);
  select(ctx, xn, denormal, f);
  masked_constant(ctx, adj, denormal, kDenormalScaleLog2);
  split_exponent(ctx, f, kf, xn);
  cc.vsubps(kf, kf, adj);
  emit_log_tail(ctx, y, f, kf, ax::Vec());
  fix_log_specials(ctx, y, src);
  cc.vmovaps(dst, y);
}

// softplus(x) = max(x, 0) + log1p(exp(-|x|)); log1p(e) = log(w) + (e - (w - 1)) / w, w = 1 + e.
void emit_softplus(VecContext& ctx, const ax::Vec& dst, const ax::Vec& src) {
  ax::Compiler& cc = ctx.cc();
  ax::Vec e = ctx.new_vec("e");
  ax::Vec w = ctx.new_vec("w");
  ax::Vec c = ctx.new_vec("c");
  ax::Vec f = ctx.new_vec("f");
  ax::Vec kf = ctx.new_vec("kf");
  negative_abs(ctx, e, src);
  ExpParts parts = emit_exp_parts(ctx, e, ax::Vec(), true);
  cc.vaddps(e, parts.pm1, ctx.constant(1.0f));
  apply_pow2(ctx, e, e, make_pow2(ctx, parts));
  cc.vaddps(w, e, ctx.constant(1.0f));
  cc.vsubps(c, w, ctx.constant(1.0f));
  cc.vsubps(c, e, c);
  divide(ctx, c, c, w);
  split_exponent(ctx, f, kf, w);
  emit_log_tail(ctx, e, f, kf, c);
  cc.vmaxps(w, src, ctx.constant(0.0f));  // a NaN src already made e NaN
  cc.vaddps(dst, w, e);
}

// tanh(x) = sign(x) * d / (d + 2), d = expm1(2|x|) = 2^n * pm1 + (2^n - 1).
void emit_tanh(VecContext& ctx, const ax::Vec& dst, const ax::Vec& src) {
  ax::Compiler& cc = ctx.cc();
  ax::Vec sign = ctx.new_vec("sign");
  ax::Vec y = ctx.new_vec("y");
  ax::Vec tn = ctx.new_vec("two_n");
  cc.vandps(sign, src, bits_constant(ctx, kSignBit));
  cc.vandps(y, src, bits_constant(ctx, kAbsMask));
  cc.vaddps(y, y, y);
  cc.vminps(y, constant_reg(ctx, kTanhArgMax), y);  // NaN stays NaN
  ExpParts parts = emit_exp_parts(ctx, y, ax::Vec(), true);
  cc.vpaddd(tn, parts.ni, bits_constant(ctx, 127));
  cc.vpslld(tn, tn, 23);
  cc.vsubps(y, tn, ctx.constant(1.0f));
  fmadd(ctx, y, tn, parts.pm1, y);
  cc.vaddps(tn, y, ctx.constant(2.0f));
  divide(ctx, y, y, tn);
  cc.vorps(dst, y, sign);
}

// sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, e = exp(-|x|);
// for x < 0 the 2^n scaling comes last so denormal results round once.
void emit_sigmoid(VecContext& ctx, const ax::Vec& dst, const ax::Vec& src) {
  ax::Compiler& cc = ctx.cc();
  ax::Vec ep = ctx.new_vec("ep");
  ax::Vec d = ctx.new_vec("d");
  Mask negative = compare(ctx, src, ctx.constant(0.0f), ax::VCmpImm::kLT_OQ);
  negative_abs(ctx, ep, src);
  ExpParts parts = emit_exp_parts(ctx, ep, ax::Vec(), true);
  Pow2 p = make_pow2(ctx, parts);
  cc.vaddps(ep, parts.pm1, ctx.constant(1.0f));
  apply_pow2(ctx, d, ep, p);
  cc.vaddps(d, d, ctx.constant(1.0f));
  ax::Vec q = constant_reg(ctx, 1.0f, "num");
  select(ctx, q, negative, ep);
  divide(ctx, q, q, d);
  apply_pow2(ctx, ep, q, p);
  select(ctx, q, negative, ep);
  cc.vmovaps(dst, q);
}

}  // namespace canary::jit::x86
