// The exp and log cores shared by the transcendental emitters: exp's range
// reduction and polynomial, and log's exponent split and polynomial.
//
// exp(x) = 2^n * exp(r), n = round(x * log2(e)), r = x - n * ln2 (two-constant
// Cody-Waite split; with FMA the first step is exact), exp(r) = 1 + r +
// r^2 * Q(r) on |r| <= 0.347. Exact mode also keeps the rounding error of r
// (and an optional low part of x) as a first-order correction.
//
// log(x) = k * ln2 + log(1 + f), 1 + f in [sqrt(1/2), sqrt(2)). Exact mode
// uses s = f / (2 + f) and log(1 + f) = f - (f^2/2 - s * (f^2/2 + R(s^2)))
// (fdlibm's form); Fast mode a division-free polynomial in f.
//
// Coefficients are float minimax fits (relative error): Q degree 4 (exp
// error 1e-8), Q degree 3 (4e-7, Fast), R degree 2 in s^2 (3e-9), the Fast log
// polynomial degree 6 (1.4e-7).
#include <array>

#include "jit/x86/vector_math_primitives.h"

namespace canary::jit::x86::vecmath {

namespace {

constexpr float kLog2e = 0x1.715476p+0f;
constexpr float kLn2Hi = 0x1.62e43p-1f;    // float(ln 2): n * kLn2Hi is exact inside an FMA
constexpr float kLn2Lo = -0x1.05c61p-29f;  // ln 2 - kLn2Hi
// exp's argument range: below, every result rounds to 0 even after
// multiplying by up to 2^20; above, every result overflows.
constexpr float kExpArgMin = -125.0f;
constexpr float kExpArgMax = 89.0f;
// (expm1(r) - r) / r^2 on |r| <= 0.347.
constexpr std::array<float, 5> kExpQExact = {0.5f, 0x1.5554ep-3f, 0x1.55558cp-5f, 0x1.1209bep-7f, 0x1.6c836ep-10f};
constexpr std::array<float, 4> kExpQFast = {0x1.ffff58p-2f, 0x1.5555e8p-3f, 0x1.56b3fep-5f, 0x1.11520ep-7f};

// log: ln 2 split so that k * kLogLn2Hi is exact for |k| < 2^15.
constexpr float kLogLn2Hi = 0x1.63p-1f;
constexpr float kLogLn2Lo = -0x1.bd0106p-13f;
constexpr std::uint32_t kSqrtHalfBits = 0x3f3504f3u;  // sqrt(1/2)
constexpr std::uint32_t kMantissaMask = 0x007fffffu;
// R(z) / z with 2 atanh(s) = 2s + s * R(s^2), s^2 <= 0.0295.
constexpr std::array<float, 3> kLogR = {0x1.55555cp-1f, 0x1.997b98p-2f, 0x1.2ef77ep-2f};
// (log(1 + f) - f + f^2/2) / f^3 on [sqrt(1/2) - 1, sqrt(2) - 1].
constexpr std::array<float, 7> kLogFast = {0x1.55558cp-2f, -0x1.000208p-2f, 0x1.994806p-3f, -0x1.53f4fep-3f,
                                           0x1.2cf98ep-3f, -0x1.1ff1d6p-3f, 0x1.757716p-4f};

// n = round(x * log2 e) as int and float, and r1 = x - n * kLn2Hi (exact).
void reduce_exp_argument(VecContext& ctx, ExpParts& out, const ax::Vec& r1, const ax::Vec& x) {
  ax::Compiler& cc = ctx.cc();
  clamp(ctx, r1, x, kExpArgMin, kExpArgMax);
  cc.vmulps(out.nf, r1, ctx.constant(kLog2e));
  cc.vcvtps2dq(out.ni, out.nf);
  cc.vcvtdq2ps(out.nf, out.ni);
  fnmadd(ctx, r1, out.nf, ctx.constant(kLn2Hi), r1);
}

// pm1 = expm1(r + r_lo) to first order in r_lo: p + r_lo * (1 + p).
void add_low_part(VecContext& ctx, const ax::Vec& pm1, const ax::Vec& p, const ax::Vec& r_lo) {
  fmadd(ctx, pm1, r_lo, p, r_lo);
  ctx.cc().vaddps(pm1, pm1, p);
}

// dst = log(1 + f) - f + c' where c' = k * kLogLn2Lo + c (Exact: fdlibm form).
void log1p_tail_exact(VecContext& ctx, const ax::Vec& dst, const ax::Vec& f, const ax::Vec& lo) {
  ax::Compiler& cc = ctx.cc();
  ax::Vec s = ctx.new_vec("s");
  ax::Vec z = ctx.new_vec("z");
  ax::Vec r = ctx.new_vec("R");
  ax::Vec hfsq = ctx.new_vec("hfsq");
  cc.vaddps(z, f, ctx.constant(2.0f));
  divide(ctx, s, f, z);
  cc.vmulps(z, s, s);
  horner(ctx, r, z, kLogR);
  cc.vmulps(r, r, z);
  cc.vmulps(hfsq, f, f);
  cc.vmulps(hfsq, hfsq, ctx.constant(0.5f));
  cc.vaddps(r, r, hfsq);
  fmadd(ctx, lo, s, r, lo);  // lo += s * (hfsq + R)
  cc.vsubps(dst, lo, hfsq);  // -(hfsq - lo)
}

// dst = log(1 + f) - f + lo by a polynomial in f (Fast).
void log1p_tail_fast(VecContext& ctx, const ax::Vec& dst, const ax::Vec& f, const ax::Vec& lo) {
  ax::Compiler& cc = ctx.cc();
  ax::Vec p = ctx.new_vec("p");
  ax::Vec f2 = ctx.new_vec("f2");
  ax::Vec f3 = ctx.new_vec("f3");
  horner(ctx, p, f, kLogFast);
  cc.vmulps(f2, f, f);
  cc.vmulps(f3, f2, f);
  fmadd(ctx, lo, f3, p, lo);
  fnmadd(ctx, dst, f2, ctx.constant(0.5f), lo);
}

}  // namespace

ExpParts emit_exp_parts(VecContext& ctx, const ax::Vec& x, const ax::Vec& x_lo, bool compensated) {
  ax::Compiler& cc = ctx.cc();
  ExpParts out{ctx.new_vec("pm1"), ctx.new_vec("nf"), ctx.new_vec("ni")};
  ax::Vec r1 = ctx.new_vec("r1");
  ax::Vec r = ctx.new_vec("r");
  ax::Vec q = ctx.new_vec("q");
  reduce_exp_argument(ctx, out, r1, x);
  fnmadd(ctx, r, out.nf, ctx.constant(kLn2Lo), r1);
  ax::Vec r_lo;
  if (compensated) {
    r_lo = ctx.new_vec("r_lo");
    cc.vsubps(r_lo, r1, r);
    fnmadd(ctx, r_lo, out.nf, ctx.constant(kLn2Lo), r_lo);
    if (x_lo.isValid()) cc.vaddps(r_lo, r_lo, x_lo);
  } else if (x_lo.isValid()) {
    cc.vaddps(r, r, x_lo);
  }
  horner(ctx, q, r, compensated ? std::span<const float>(kExpQExact) : std::span<const float>(kExpQFast));
  cc.vmulps(r1, r, r);
  fmadd(ctx, q, r1, q, r);  // p = r + r^2 * Q(r)
  if (compensated)
    add_low_part(ctx, out.pm1, q, r_lo);
  else
    cc.vmovaps(out.pm1, q);
  return out;
}

void split_exponent(VecContext& ctx, const ax::Vec& f, const ax::Vec& kf, const ax::Vec& x) {
  ax::Compiler& cc = ctx.cc();
  const ax::Mem sqrt_half = bits_constant(ctx, kSqrtHalfBits);
  ax::Vec b = ctx.new_vec("bits");
  cc.vpsubd(b, x, sqrt_half);
  cc.vpsrad(kf, b, 23);
  cc.vcvtdq2ps(kf, kf);
  cc.vandps(f, b, bits_constant(ctx, kMantissaMask));
  cc.vpaddd(f, f, sqrt_half);
  cc.vsubps(f, f, ctx.constant(1.0f));
}

void emit_log_tail(VecContext& ctx, const ax::Vec& dst, const ax::Vec& f, const ax::Vec& kf, const ax::Vec& c) {
  ax::Compiler& cc = ctx.cc();
  ax::Vec lo = ctx.new_vec("lo");
  ax::Vec tail = ctx.new_vec("tail");
  if (c.isValid())
    fmadd(ctx, lo, kf, ctx.constant(kLogLn2Lo), c);
  else
    cc.vmulps(lo, kf, ctx.constant(kLogLn2Lo));
  if (ctx.mode() == MathMode::Exact)
    log1p_tail_exact(ctx, tail, f, lo);
  else
    log1p_tail_fast(ctx, tail, f, lo);
  cc.vaddps(tail, tail, f);
  fmadd(ctx, dst, kf, ctx.constant(kLogLn2Hi), tail);
}

}  // namespace canary::jit::x86::vecmath
