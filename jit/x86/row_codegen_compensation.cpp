// Compensated row sums (Accumulation::Compensated): every lane of every
// accumulator runs Neumaier's variant of Kahan summation (Kahan-Babuska),
//   t = s + x
//   c += |s| >= |x| ? (s - t) + x : (x - t) + s
//   s = t
// with the running compensation c in a register next to s; the lanes and
// slots are then folded pairwise in a fixed order, each fold one more
// Neumaier step on the sums with the compensations added, and the result is
// s + c. Lane selects are k-mask blends on Avx512 and vblendvps otherwise.
// An infinite or NaN sum makes its compensation NaN (Inf - Inf); the result
// is then the sum itself, as plain summation gives.
#include "jit/x86/elementwise_codegen_stages.h"
#include "jit/x86/row_codegen_stages.h"

namespace canary::jit::x86 {
namespace row {
namespace {

constexpr std::uint32_t kAbsMask = 0x7fffffffu;
constexpr auto kCmpGeOq = static_cast<std::uint32_t>(ax::VCmpImm::kGE_OQ);
constexpr auto kCmpUnordQ = static_cast<std::uint32_t>(ax::VCmpImm::kUNORD_Q);

}  // namespace

// A new register as wide as v (xmm, ymm or zmm).
ax::Vec RowEmitter::like(const ax::Vec& v, const char* name) {
  if (v.isZmm()) return cc_.newZmm(name);
  if (v.isYmm()) return cc_.newYmm(name);
  return cc_.newXmm(name);
}

// One Neumaier step in every lane: s += x, its rounding error into c. The
// larger-magnitude operand is chosen from the old s (as the algorithm
// compares before it adds). `tail`, when valid, limits the updates of s and
// c to its lanes (the AVX-512 masked tail); the other lanes keep their values.
void RowEmitter::neumaier_add(const ax::Vec& s, const ax::Vec& c, const ax::Vec& x, const ax::KReg& tail) {
  const ax::Mem abs_mask = lane_constant(vec_ctx_, kAbsMask);
  ax::Vec s_abs = like(s, "s_abs"), x_abs = like(s, "x_abs"), big = like(s, "big"), small = like(s, "small");
  cc_.vandps(s_abs, s, abs_mask);
  cc_.vandps(x_abs, x, abs_mask);
  if (isa_ == Isa::Avx512) {
    ax::KReg s_wins = cc_.newKw("s_wins");
    cc_.vcmpps(s_wins, s_abs, x_abs, kCmpGeOq);
    // Masked moves into defined registers (a merge-masked vblendmps writes
    // every lane, but the register allocator would take its destination as
    // read and load an undefined value).
    cc_.vmovaps(big, x);
    cc_.k(s_wins).vmovaps(big, s);  // |s| >= |x| ? s : x
    cc_.vmovaps(small, s);
    cc_.k(s_wins).vmovaps(small, x);  // |s| >= |x| ? x : s
  } else {
    ax::Vec s_wins = like(s, "s_wins");
    cc_.vcmpps(s_wins, s_abs, x_abs, kCmpGeOq);
    cc_.vblendvps(big, x, s, s_wins);
    cc_.vblendvps(small, s, x, s_wins);
  }
  const bool masked = tail.isValid();
  if (masked) cc_.k(tail);
  cc_.vaddps(s, s, x);           // t
  cc_.vsubps(big, big, s);       // big - t
  cc_.vaddps(big, big, small);   // (big - t) + small: the exact error of the add
  if (masked) cc_.k(tail);
  cc_.vaddps(c, c, big);
}

// (s, c) += (s2, c2): a Neumaier step adding s2, then c2 into the compensation.
void RowEmitter::combine_compensated(const ax::Vec& s, const ax::Vec& c, const ax::Vec& s2, const ax::Vec& c2) {
  neumaier_add(s, c, s2, ax::KReg());
  cc_.vaddps(c, c, c2);
}

// Adds v to the slot's (or the lane's) compensated sum.
void RowEmitter::accumulate_compensated(const Accumulators& a, Lanes lanes, int slot, const ax::Vec& v) {
  if (lanes == Lanes::Single) {
    neumaier_add(a.lane, a.lane_comp, v.xmm(), ax::KReg());
    return;
  }
  const auto s = static_cast<std::size_t>(slot);
  neumaier_add(a.slots[s], a.comp[s], v, lanes == Lanes::Masked ? tail_mask_ : ax::KReg());
}

// Adds d * d: the rounded product by a Neumaier step, then the product's own
// rounding error (d * d - p, exact by FMA) into the compensation.
void RowEmitter::accumulate_square_compensated(const Accumulators& a, Lanes lanes, int slot, const ax::Vec& d) {
  const bool single = lanes == Lanes::Single;
  const ax::Vec x = single ? ax::Vec(d.xmm()) : d;
  const ax::Vec p = like(x, "sq"), e = like(x, "sq_err");
  cc_.vmulps(p, x, x);
  cc_.vmovaps(e, x);
  cc_.vfmsub213ps(e, x, p);  // e = x * e - p
  const auto s = static_cast<std::size_t>(slot);
  const ax::Vec sum = single ? ax::Vec(a.lane) : a.slots[s];
  const ax::Vec c = single ? ax::Vec(a.lane_comp) : a.comp[s];
  const ax::KReg tail = lanes == Lanes::Masked ? tail_mask_ : ax::KReg();
  neumaier_add(sum, c, p, tail);
  if (tail.isValid()) cc_.k(tail);
  cc_.vaddps(c, c, e);
}

// The compensated fold of fold_accumulators: slots pairwise (0+1, 2+3, then
// 0+2), the lanes by halving (zmm -> ymm -> xmm -> 2 -> 1), each combination
// a compensated one; lane 0 of a new xmm.
ax::Xmm RowEmitter::fold_compensated(const Accumulators& a, int slots) {
  if (isa_ == Isa::Scalar) return compensated_result(a.lane, a.lane_comp);
  for (int width = 1; width < slots; width *= 2)
    for (int s = 0; s + width < slots; s += 2 * width) {
      const auto d = static_cast<std::size_t>(s), n = static_cast<std::size_t>(s + width);
      combine_compensated(a.slots[d], a.comp[d], a.slots[n], a.comp[n]);
    }
  ax::Vec s = a.slots[0], c = a.comp[0];
  if (isa_ == Isa::Avx512) {
    ax::Vec hs = cc_.newYmm("hs8"), hc = cc_.newYmm("hc8");
    cc_.vextractf64x4(hs, s, 1);
    cc_.vextractf64x4(hc, c, 1);
    combine_compensated(hs, hc, s.ymm(), c.ymm());
    s = hs;
    c = hc;
  }
  ax::Xmm xs = cc_.newXmm("hs4"), xc = cc_.newXmm("hc4"), ts = cc_.newXmm("ts"), tc = cc_.newXmm("tc");
  if (isa_ == Isa::Avx512) {
    cc_.vextractf32x4(xs, s, 1);
    cc_.vextractf32x4(xc, c, 1);
  } else {
    cc_.vextractf128(xs, s, 1);
    cc_.vextractf128(xc, c, 1);
  }
  combine_compensated(xs, xc, s.xmm(), c.xmm());
  cc_.vmovhlps(ts, xs, xs);
  cc_.vmovhlps(tc, xc, xc);
  combine_compensated(xs, xc, ts, tc);
  cc_.vmovshdup(ts, xs);
  cc_.vmovshdup(tc, xc);
  combine_compensated(xs, xc, ts, tc);
  return compensated_result(xs, xc);
}

// Lane 0 of s + c in a new xmm, or of s where s is Inf or NaN (s - s is NaN
// exactly then).
ax::Xmm RowEmitter::compensated_result(const ax::Xmm& s, const ax::Xmm& c) {
  ax::Xmm r = cc_.newXmm("sum"), t = cc_.newXmm("t");
  cc_.vaddps(r, s, c);
  cc_.vsubps(t, s, s);
  if (isa_ == Isa::Avx512) {
    ax::KReg non_finite = cc_.newKw("non_finite");
    cc_.vcmpps(non_finite, t, t, kCmpUnordQ);
    cc_.k(non_finite).vmovaps(r, s);
  } else {
    cc_.vcmpps(t, t, t, kCmpUnordQ);
    cc_.vblendvps(r, r, s, t);
  }
  return r;
}

}  // namespace row
}  // namespace canary::jit::x86
