// Passes over one row of d2 elements: an (optionally unrolled) vector main
// loop, then a masked tail (a k-mask on AVX-512, a vector mask with
// vmaskmovps on AVX2), or one lane at a time on the scalar tier; the memory
// accesses and prologue evaluation of one vector step; the accumulators a pass
// folds values into (one per unrolled vector, plus a one-lane accumulator for
// the scalar tier) and their horizontal fold; NaN tracking for Max; the value canary.
// Compensated sums go through row_codegen_compensation.cpp.
#include <algorithm>
#include <limits>

#include "jit/x86/elementwise_codegen_stages.h"
#include "jit/x86/row_codegen_stages.h"

namespace canary::jit::x86 {
namespace row {
namespace {

constexpr std::uint32_t kQuietNaN = 0x7fc00000u;
constexpr int kCmpUnordQ = 3;

}  // namespace

// i = 0, then the loops over d2; `step` emits one vector's work.
bool RowEmitter::emit_pass(int unroll, const Step& step, std::string& error) {
  cc_.xor_(i_, i_);
  if (isa_ == Isa::Scalar) return emit_lane_loop(step, error);
  if (unroll > 1 && !emit_vector_loop(unroll, step, error)) return false;
  if (!emit_vector_loop(1, step, error)) return false;
  return emit_masked_tail(step, error);
}

// while (i + unroll * lanes <= d2) { unroll steps, slot u for the u-th; i += unroll * lanes }
bool RowEmitter::emit_vector_loop(int unroll, const Step& step, std::string& error) {
  const int width = unroll * lanes_;
  if (known_d2_ && *known_d2_ < width) return true;
  asmjit::Label top = cc_.newLabel(), done = cc_.newLabel();
  ax::Gp limit = cc_.newIntPtr("limit");
  cc_.lea(limit, ax::ptr(d2_, -width));
  cc_.bind(top);
  cc_.cmp(i_, limit);
  cc_.jg(done);
  for (int u = 0; u < unroll; ++u)
    if (!step(Lanes::Full, u * lanes_, u, error)) return false;
  cc_.add(i_, width);
  cc_.jmp(top);
  cc_.bind(done);
  return true;
}

// The tail: the remaining d2 - i (< lanes) elements in one step, slot 0,
// under a k-mask of that many low bits (AVX-512) or a vector mask (AVX2).
bool RowEmitter::emit_masked_tail(const Step& step, std::string& error) {
  if (known_d2_ && *known_d2_ % lanes_ == 0) return true;
  asmjit::Label done = cc_.newLabel();
  ax::Gp rem = cc_.newIntPtr("rem");
  cc_.mov(rem, d2_);
  cc_.sub(rem, i_);
  cc_.jz(done);
  if (isa_ == Isa::Avx512) {
    ax::Gp bits = cc_.newIntPtr("mask");
    cc_.mov(bits, 1);
    cc_.shl(bits, rem.r8());
    cc_.dec(bits);
    cc_.kmovw(tail_mask_, bits.r32());
  } else {
    load_avx2_tail_mask(cc_, tail_vmask_, rem);
  }
  if (!step(Lanes::Masked, 0, 0, error)) return false;
  cc_.bind(done);
  return true;
}

// while (i < d2) { one-lane step; ++i }: the scalar tier.
bool RowEmitter::emit_lane_loop(const Step& step, std::string& error) {
  asmjit::Label top = cc_.newLabel(), done = cc_.newLabel();
  cc_.bind(top);
  cc_.cmp(i_, d2_);
  cc_.jge(done);
  if (!step(Lanes::Single, 0, 0, error)) return false;
  cc_.inc(i_);
  cc_.jmp(top);
  cc_.bind(done);
  return true;
}

// Address of the element at i + offset in the lane layout's width.
ax::Mem RowEmitter::element(const ax::Gp& base, int offset, Lanes lanes) const {
  const std::int32_t disp = offset * 4;
  if (lanes == Lanes::Single) return ax::dword_ptr(base, i_, 2, disp);
  if (isa_ == Isa::Avx512) return ax::zmmword_ptr(base, i_, 2, disp);
  return isa_ == Isa::Avx2 ? ax::ymmword_ptr(base, i_, 2, disp) : ax::xmmword_ptr(base, i_, 2, disp);
}

// A new register holding the elements at base[i + offset] (masked-off lanes
// zero; vmaskmovps does not touch the memory behind them).
ax::Vec RowEmitter::load(const ax::Gp& base, int offset, Lanes lanes) {
  ax::Vec v = ctx(lanes).new_vec("ld");
  const ax::Mem at = element(base, offset, lanes);
  if (lanes == Lanes::Single) cc_.vmovss(v.xmm(), at);
  else if (lanes == Lanes::Masked && isa_ == Isa::Avx2) cc_.vmaskmovps(v, tail_vmask_, at);
  else if (lanes == Lanes::Masked) cc_.k(tail_mask_).z().vmovups(v, at);
  else cc_.vmovups(v, at);
  return v;
}

// base[i + offset] = v for the lanes of the step.
void RowEmitter::store(const ax::Gp& base, int offset, Lanes lanes, const ax::Vec& v) {
  const ax::Mem at = element(base, offset, lanes);
  if (lanes == Lanes::Single) cc_.vmovss(at, v.xmm());
  else if (lanes == Lanes::Masked && isa_ == Isa::Avx2) cc_.vmaskmovps(at, tail_vmask_, v);
  else if (lanes == Lanes::Masked) cc_.k(tail_mask_).vmovups(at, v);
  else cc_.vmovups(at, v);
}

// Evaluates the prologue DAG for the vector at i + offset; `value` is the
// row value's register (which may be an input's broadcast: never write it).
bool RowEmitter::row_value(Lanes lanes, int offset, ax::Vec& value, std::string& error) {
  auto load_input = [&](std::uint16_t k) -> ax::Vec {
    if (prologue_.inner_broadcast[k]) return lanes == Lanes::Single ? ax::Vec(broadcast_[k].xmm()) : broadcast_[k];
    return load(in_ptr_[k], offset, lanes);
  };
  std::vector<ax::Vec> values;
  if (!emit_fused_nodes(ctx(lanes), prologue_, live_, load_input, values, error)) {
    error = "row kernel prologue: " + error;
    return false;
  }
  value = values[prologue_.outputs[0]];
  return true;
}

// Registers for one running sum or max (the scalar tier needs only the lane),
// with their compensations when the row's sums are compensated.
Accumulators RowEmitter::new_accumulators(const char* name) {
  Accumulators a;
  a.compensated = compensated_;
  if (isa_ == Isa::Scalar) {
    a.lane = cc_.newXmm(name);
    if (a.compensated) a.lane_comp = cc_.newXmm("lane_comp");
    return a;
  }
  for (int s = 0; s < kMaxSlots; ++s) {
    a.slots.push_back(vec_ctx_.new_vec(name));
    if (a.compensated) a.comp.push_back(vec_ctx_.new_vec("comp"));
  }
  return a;
}

// Every register of the set = value; compensations = 0.
void RowEmitter::reset_accumulators(const Accumulators& a, float value) {
  for (const ax::Vec& slot : a.slots) vec_ctx_.load_constant(slot, value);
  if (isa_ == Isa::Scalar) cc_.vmovss(a.lane, vec_ctx_.constant(value));
  if (!a.compensated) return;
  for (const ax::Vec& c : a.comp) cc_.vxorps(c, c, c);
  if (isa_ == Isa::Scalar) cc_.vxorps(a.lane_comp, a.lane_comp, a.lane_comp);
}

// v with the lanes outside the AVX2 tail set to the fold's identity (+0 for
// sums, -inf for max), so a full-width fold leaves them as they are.
ax::Vec RowEmitter::tail_lanes_only(const ax::Vec& v, Fold fold) {
  ax::Vec t = vec_ctx_.new_vec("tail_only");
  if (fold == Fold::Add) {
    cc_.vandps(t, v, tail_vmask_);
  } else {
    vec_ctx_.load_constant(t, -std::numeric_limits<float>::infinity());
    cc_.vblendvps(t, t, v, tail_vmask_);
  }
  return t;
}

// Folds v into the slot's accumulator: merge-masked on AVX-512 tails so the
// masked-off lanes keep their value, the identity in those lanes on AVX2
// tails. Max keeps the accumulator when v is NaN (vmaxps returns its second
// operand on NaN); track_nan records NaN instead.
void RowEmitter::accumulate(const Accumulators& a, Fold fold, Lanes lanes, int slot, const ax::Vec& v) {
  if (lanes == Lanes::Masked && isa_ == Isa::Avx2) {
    accumulate(a, fold, Lanes::Full, slot, tail_lanes_only(v, fold));
    return;
  }
  if (fold == Fold::Add && a.compensated) {
    accumulate_compensated(a, lanes, slot, v);
    return;
  }
  if (lanes == Lanes::Single) {
    if (fold == Fold::Add) cc_.vaddss(a.lane, a.lane, v.xmm());
    else cc_.vmaxss(a.lane, v.xmm(), a.lane);
    return;
  }
  const ax::Vec& acc = a.slots[static_cast<std::size_t>(slot)];
  if (lanes == Lanes::Masked) cc_.k(tail_mask_);
  if (fold == Fold::Add) cc_.vaddps(acc, acc, v);
  else cc_.vmaxps(acc, v, acc);
}

// Adds d * d to the slot's accumulator (one rounding, FMA).
void RowEmitter::accumulate_square(const Accumulators& a, Lanes lanes, int slot, const ax::Vec& d) {
  if (lanes == Lanes::Masked && isa_ == Isa::Avx2) {
    accumulate_square(a, Lanes::Full, slot, tail_lanes_only(d, Fold::Add));
    return;
  }
  if (a.compensated) {
    accumulate_square_compensated(a, lanes, slot, d);
    return;
  }
  if (lanes == Lanes::Single) {
    cc_.vfmadd231ss(a.lane, d.xmm(), d.xmm());
    return;
  }
  const ax::Vec& acc = a.slots[static_cast<std::size_t>(slot)];
  if (lanes == Lanes::Masked) cc_.k(tail_mask_);
  cc_.vfmadd231ps(acc, d, d);
}

// Combines the first `slots` vector accumulators pairwise, then the lanes of
// the result by halving (zmm -> ymm -> xmm -> 2 -> 1 lanes). Returns lane 0 of a new xmm (instructions with EVEX forms only,
// so xmm16-31 work on AVX-512).
ax::Xmm RowEmitter::fold_accumulators(const Accumulators& a, Fold fold, int slots) {
  if (fold == Fold::Add && a.compensated) return fold_compensated(a, slots);
  auto combine = [&](const ax::Vec& dst, const ax::Vec& x, const ax::Vec& y) {
    if (fold == Fold::Add) cc_.vaddps(dst, x, y);
    else cc_.vmaxps(dst, x, y);
  };
  if (isa_ == Isa::Scalar) {
    ax::Xmm x = cc_.newXmm("folded");
    cc_.vmovaps(x, a.lane);
    return x;
  }
  for (int width = 1; width < slots; width *= 2)
    for (int s = 0; s + width < slots; s += 2 * width)
      combine(a.slots[static_cast<std::size_t>(s)], a.slots[static_cast<std::size_t>(s)],
              a.slots[static_cast<std::size_t>(s + width)]);
  ax::Vec v = a.slots[0];
  if (isa_ == Isa::Avx512) {
    ax::Vec hi = cc_.newYmm("hi8");
    cc_.vextractf64x4(hi, v, 1);
    combine(hi, hi, v.ymm());
    v = hi;
  }
  ax::Xmm x = cc_.newXmm("hi4"), t = cc_.newXmm("t");
  if (isa_ == Isa::Avx512) cc_.vextractf32x4(x, v, 1);
  else cc_.vextractf128(x, v, 1);
  combine(x, x, v.xmm());
  cc_.vmovhlps(t, x, x);
  combine(x, x, t);
  cc_.vmovshdup(t, x);
  combine(x, x, t);
  return x;
}

// The unroll of a pass that sums: compensated sums on Avx2 hold two
// registers per slot in 16 ymm registers, so they use at most 2 slots.
int RowEmitter::sum_unroll(int unroll) const {
  return compensated_ && isa_ == Isa::Avx2 ? std::min(unroll, 2) : unroll;
}

// Clears the Max NaN flags of the row.
void RowEmitter::reset_nan_flags() {
  if (isa_ == Isa::Avx512) cc_.kxorw(nan_k_, nan_k_, nan_k_);
  else if (isa_ == Isa::Avx2) cc_.vxorps(nan_vec_, nan_vec_, nan_vec_);
  cc_.xor_(nan_gp_, nan_gp_);
}

// flag |= "lane 0 of v is NaN" (vucomiss sets PF when unordered). Flags go
// through vucomiss/setp rather than vmovd so a spilled xmm is never an operand
// of vmovd r32, xmm (which has no memory-source form).
void RowEmitter::or_unordered(const ax::Gp& flag, const ax::Xmm& v) {
  ax::Gp p = cc_.newGpd("unord");
  cc_.xor_(p, p);
  cc_.vucomiss(v, v);
  cc_.setp(p.r8());
  cc_.or_(flag, p);
}

// Records which lanes of v hold NaN (the step's lanes only).
void RowEmitter::track_nan(Lanes lanes, const ax::Vec& v) {
  if (lanes == Lanes::Single) {
    or_unordered(nan_gp_, v.xmm());
    return;
  }
  if (isa_ == Isa::Avx512) {
    ax::KReg k = cc_.newKw("nan");
    if (lanes == Lanes::Masked) cc_.k(tail_mask_);
    cc_.vcmpps(k, v, v, kCmpUnordQ);
    cc_.korw(nan_k_, nan_k_, k);
    return;
  }
  ax::Vec m = vec_ctx_.new_vec("nan");
  cc_.vcmpps(m, v, v, kCmpUnordQ);
  if (lanes == Lanes::Masked) cc_.vandps(m, m, tail_vmask_);
  cc_.vorps(nan_vec_, nan_vec_, m);
}

// r = NaN when track_nan saw a NaN in the row.
void RowEmitter::apply_nan_flags(const ax::Xmm& r) {
  asmjit::Label clean = cc_.newLabel(), dirty = cc_.newLabel();
  if (isa_ == Isa::Avx512) {
    cc_.kortestw(nan_k_, nan_k_);
    cc_.jnz(dirty);
  } else if (isa_ == Isa::Avx2) {
    cc_.vptest(nan_vec_, nan_vec_);
    cc_.jnz(dirty);
  }
  cc_.test(nan_gp_, nan_gp_);
  cc_.jz(clean);
  cc_.bind(dirty);
  cc_.vmovss(r, lane_constant(vec_ctx_, kQuietNaN));
  cc_.bind(clean);
}

// A new tier-width register holding lane 0 of `scalar` in every lane.
ax::Vec RowEmitter::broadcast(const ax::Xmm& scalar, const char* name) {
  ax::Vec v = vec_ctx_.new_vec(name);
  cc_.vbroadcastss(v, scalar);
  return v;
}

// ORs "v holds a NaN or Inf" into the canary (v - v is +0 exactly when v is finite).
void RowEmitter::check_non_finite(Lanes lanes, const ax::Vec& v) {
  if (!prologue_.check_non_finite) return;
  if (lanes == Lanes::Single) {
    ax::Xmm t = cc_.newXmm("nf");
    cc_.vsubss(t, v.xmm(), v.xmm());
    or_unordered(flag_, t);
    return;
  }
  ax::Vec t = vec_ctx_.new_vec("nf");
  if (lanes == Lanes::Masked && isa_ == Isa::Avx512) {
    cc_.k(tail_mask_).z().vsubps(t, v, v);
  } else {
    cc_.vsubps(t, v, v);
    if (lanes == Lanes::Masked) cc_.vandps(t, t, tail_vmask_);
  }
  cc_.vorps(nf_acc_, nf_acc_, t);
}

}  // namespace row
}  // namespace canary::jit::x86
