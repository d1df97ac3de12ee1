// Tier-neutral building blocks of the vector math emitters: lane masks and
// selects (k registers on Avx512, blend masks otherwise), FMA operand orders,
// division, Horner polynomials and 2^n scaling (vscalefps on Avx512, two
// exponent-built factors otherwise).
#include "jit/x86/vector_math_primitives.h"

#include <array>
#include <cassert>

namespace canary::jit::x86::vecmath {

namespace {

using asmjit::Operand_;
namespace Inst = ax::Inst;

// True when both operands are the same (virtual) register.
bool same_reg(const Operand_& a, const Operand_& b) { return a.isReg() && b.isReg() && a.id() == b.id(); }

bool is_evex(const VecContext& ctx) { return ctx.isa() == Isa::Avx512; }

// The three operand orders of one FMA family (plus/minus variants alike):
// 132: op1 = op1 * op3 + op2, 213: op1 = op2 * op1 + op3, 231: op1 = op2 * op3 + op1.
struct FmaForms {
  asmjit::InstId f132, f213, f231;
};

// dst = a * b (+/-) c in whichever encoding keeps dst's register.
void emit_fma_form(VecContext& ctx, const FmaForms& forms, const ax::Vec& dst, const ax::Vec& a, const Operand_& b,
                   const Operand_& c) {
  ax::Compiler& cc = ctx.cc();
  assert(!(b.isMem() && c.isMem()));
  if (same_reg(dst, c)) {
    cc.emit(forms.f231, dst, a, b);
    return;
  }
  if (same_reg(dst, b)) {
    cc.emit(forms.f213, dst, a, c);
    return;
  }
  if (!same_reg(dst, a)) cc.vmovaps(dst, a);
  if (b.isMem())
    cc.emit(forms.f132, dst, c, b);
  else
    cc.emit(forms.f213, dst, b, c);
}

}  // namespace

ax::Mem bits_constant(VecContext& ctx, std::uint32_t bits) {
  std::array<std::uint32_t, 16> lanes;
  lanes.fill(bits);
  const int count = ctx.isa() == Isa::Scalar ? 4 : isa_lanes(ctx.isa());
  return ctx.cc().newConst(asmjit::ConstPoolScope::kLocal, lanes.data(), count * sizeof(std::uint32_t));
}

ax::Vec constant_reg(VecContext& ctx, float value, const char* name) {
  ax::Vec r = ctx.new_vec(name);
  ctx.load_constant(r, value);
  return r;
}

Mask compare(VecContext& ctx, const ax::Vec& a, const Operand_& b, ax::VCmpImm pred) {
  Mask m;
  if (is_evex(ctx)) {
    m.k = ctx.cc().newKw("k");
    ctx.cc().emit(Inst::kIdVcmpps, m.k, a, b, asmjit::Imm(uint32_t(pred)));
  } else {
    m.v = ctx.new_vec("m");
    ctx.cc().emit(Inst::kIdVcmpps, m.v, a, b, asmjit::Imm(uint32_t(pred)));
  }
  return m;
}

void select(VecContext& ctx, const ax::Vec& dst, const Mask& mask, const Operand_& src) {
  ax::Compiler& cc = ctx.cc();
  if (is_evex(ctx))
    cc.k(mask.k).emit(src.isMem() ? Inst::kIdVmovups : Inst::kIdVmovaps, dst, src);
  else
    cc.emit(Inst::kIdVblendvps, dst, dst, src, mask.v);
}

void select_bits(VecContext& ctx, const ax::Vec& dst, const Mask& mask, std::uint32_t bits) {
  select(ctx, dst, mask, bits_constant(ctx, bits));
}

void masked_constant(VecContext& ctx, const ax::Vec& dst, const Mask& mask, float value) {
  if (is_evex(ctx))
    ctx.cc().k(mask.k).z().vmovups(dst, ctx.constant(value));
  else
    ctx.cc().vandps(dst, mask.v, ctx.constant(value));
}

void fmadd(VecContext& ctx, const ax::Vec& dst, const ax::Vec& a, const Operand_& b, const Operand_& c) {
  emit_fma_form(ctx, {Inst::kIdVfmadd132ps, Inst::kIdVfmadd213ps, Inst::kIdVfmadd231ps}, dst, a, b, c);
}

void fnmadd(VecContext& ctx, const ax::Vec& dst, const ax::Vec& a, const Operand_& b, const Operand_& c) {
  emit_fma_form(ctx, {Inst::kIdVfnmadd132ps, Inst::kIdVfnmadd213ps, Inst::kIdVfnmadd231ps}, dst, a, b, c);
}

void fmsub(VecContext& ctx, const ax::Vec& dst, const ax::Vec& a, const Operand_& b, const Operand_& c) {
  emit_fma_form(ctx, {Inst::kIdVfmsub132ps, Inst::kIdVfmsub213ps, Inst::kIdVfmsub231ps}, dst, a, b, c);
}

void clamp(VecContext& ctx, const ax::Vec& dst, const ax::Vec& x, float lo, float hi) {
  // maxps/minps return their second operand when either is NaN: keep x there.
  ax::Vec lo_reg = constant_reg(ctx, lo, "lo");
  ctx.cc().vmaxps(dst, lo_reg, x);
  ax::Vec hi_reg = constant_reg(ctx, hi, "hi");
  ctx.cc().vminps(dst, hi_reg, dst);
}

void reciprocal_estimate(VecContext& ctx, const ax::Vec& dst, const ax::Vec& den) {
  if (is_evex(ctx))
    ctx.cc().vrcp14ps(dst, den);
  else
    ctx.cc().vrcpps(dst, den);
}

void divide(VecContext& ctx, const ax::Vec& dst, const ax::Vec& num, const ax::Vec& den) {
  ctx.cc().vdivps(dst, num, den);
}

void horner(VecContext& ctx, const ax::Vec& dst, const ax::Vec& x, std::span<const float> c) {
  assert(!same_reg(dst, x) && !c.empty());
  ctx.load_constant(dst, c.back());
  for (std::size_t i = c.size() - 1; i-- > 0;) ctx.cc().vfmadd213ps(dst, x, ctx.constant(c[i]));
}

Pow2 make_pow2(VecContext& ctx, const ExpParts& parts) {
  Pow2 p;
  if (is_evex(ctx)) {
    p.nf = parts.nf;
    return p;
  }
  ax::Compiler& cc = ctx.cc();
  const ax::Mem bias = bits_constant(ctx, 127);
  p.f1 = ctx.new_vec("pow2a");
  p.f2 = ctx.new_vec("pow2b");
  cc.vpsrad(p.f1, parts.ni, 1);     // n1 = n >> 1
  cc.vpsubd(p.f2, parts.ni, p.f1);  // n2 = n - n1
  cc.vpaddd(p.f1, p.f1, bias);
  cc.vpslld(p.f1, p.f1, 23);
  cc.vpaddd(p.f2, p.f2, bias);
  cc.vpslld(p.f2, p.f2, 23);
  return p;
}

void apply_pow2(VecContext& ctx, const ax::Vec& dst, const ax::Vec& v, const Pow2& p) {
  if (is_evex(ctx)) {
    ctx.cc().vscalefps(dst, v, p.nf);
    return;
  }
  // v * 2^n1 is exact (a normal result); the second product rounds once.
  ctx.cc().vmulps(dst, v, p.f1);
  ctx.cc().vmulps(dst, dst, p.f2);
}

}  // namespace canary::jit::x86::vecmath
