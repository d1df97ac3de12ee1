// Tier-neutral building blocks of jit/x86/vector_math: lane masks, selects,
// FMA forms, division, polynomials, 2^n scaling and the exp/log cores that
// several transcendental emitters share. Internal to vector_math*.cpp.
#pragma once

#include <cstdint>
#include <span>

#include "jit/x86/vector_math.h"

namespace canary::jit::x86::vecmath {

namespace ax = asmjit::x86;

// Bit patterns used as lane constants.
inline constexpr std::uint32_t kSignBit = 0x80000000u;
inline constexpr std::uint32_t kAbsMask = 0x7fffffffu;
inline constexpr std::uint32_t kQuietNaN = 0x7fc00000u;
inline constexpr std::uint32_t kNegInf = 0xff800000u;
inline constexpr std::uint32_t kPosInf = 0x7f800000u;

// A per-lane predicate: a k register on Avx512, an all-ones/all-zeros vector
// otherwise.
struct Mask {
  ax::KReg k;
  ax::Vec v;
};

// A lane constant given by its bit pattern (full tier width, from the pool).
ax::Mem bits_constant(VecContext& ctx, std::uint32_t bits);
// A fresh register holding `value` in every lane.
ax::Vec constant_reg(VecContext& ctx, float value, const char* name = "c");

// mask = a <pred> b.
Mask compare(VecContext& ctx, const ax::Vec& a, const asmjit::Operand_& b, ax::VCmpImm pred);
// dst = mask ? src : dst (src: a register or a pool constant).
void select(VecContext& ctx, const ax::Vec& dst, const Mask& mask, const asmjit::Operand_& src);

// dst = mask ? (the bit pattern) : dst.
void select_bits(VecContext& ctx, const ax::Vec& dst, const Mask& mask, std::uint32_t bits);
// dst = mask ? value : 0.
void masked_constant(VecContext& ctx, const ax::Vec& dst, const Mask& mask, float value);

// dst = a * b + c; at most one of b, c is a memory operand.
void fmadd(VecContext& ctx, const ax::Vec& dst, const ax::Vec& a, const asmjit::Operand_& b,
           const asmjit::Operand_& c);
// dst = c - a * b; at most one of b, c is a memory operand.
void fnmadd(VecContext& ctx, const ax::Vec& dst, const ax::Vec& a, const asmjit::Operand_& b,
            const asmjit::Operand_& c);
// dst = a * b - c; at most one of b, c is a memory operand.
void fmsub(VecContext& ctx, const ax::Vec& dst, const ax::Vec& a, const asmjit::Operand_& b,
           const asmjit::Operand_& c);

// dst = min(hi, max(lo, x)) with a NaN x kept as NaN.
void clamp(VecContext& ctx, const ax::Vec& dst, const ax::Vec& x, float lo, float hi);
// dst = num / den (vdivps in both modes: one divider uop beats the six FMA
// uops of a reciprocal with Newton steps inside these uop-bound sequences).
void divide(VecContext& ctx, const ax::Vec& dst, const ax::Vec& num, const ax::Vec& den);
// dst ~= 1 / den to about 12 bits (for small correction terms only).
void reciprocal_estimate(VecContext& ctx, const ax::Vec& dst, const ax::Vec& den);
// dst = c[0] + x * (c[1] + x * (...)) by Horner's rule.
void horner(VecContext& ctx, const ax::Vec& dst, const ax::Vec& x, std::span<const float> c);

// exp(x + x_lo) = 2^n * (1 + pm1), n = nf (float) = ni (int32).
struct ExpParts {
  ax::Vec pm1;
  ax::Vec nf;
  ax::Vec ni;
};
// Range reduction and polynomial of exp; x_lo (a small correction added to
// x) may be an invalid register. `compensated` keeps the reduction's rounding
// error (Exact accuracy); otherwise a shorter polynomial is used.
ExpParts emit_exp_parts(VecContext& ctx, const ax::Vec& x, const ax::Vec& x_lo, bool compensated);

// The factor 2^n of an ExpParts, prepared for one or more scalings.
struct Pow2 {
  ax::Vec nf;      // Avx512: vscalefps operand
  ax::Vec f1, f2;  // other tiers: 2^(n>>1) and 2^(n-(n>>1)), both normal floats
};
Pow2 make_pow2(VecContext& ctx, const ExpParts& parts);
// dst = v * 2^n, rounded once (denormal and overflowing results included).
void apply_pow2(VecContext& ctx, const ax::Vec& dst, const ax::Vec& v, const Pow2& p);

// dst = k * ln2 + log(1 + f) + c for f in [sqrt(1/2) - 1, sqrt(2) - 1); c may
// be an invalid register (no correction).
void emit_log_tail(VecContext& ctx, const ax::Vec& dst, const ax::Vec& f, const ax::Vec& kf, const ax::Vec& c);
// Splits a positive normal x into x = 2^k * (1 + f), 1 + f in [sqrt(1/2), sqrt(2)).
void split_exponent(VecContext& ctx, const ax::Vec& f, const ax::Vec& kf, const ax::Vec& x);

}  // namespace canary::jit::x86::vecmath
