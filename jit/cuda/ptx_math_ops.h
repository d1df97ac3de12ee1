// PtxMath: the "math machine" the device math routines (ptx_math.h) and the
// op lowering (ew_lowering.h) are written against, emitting one PTX
// instruction per operation. CpuMath (math_model_cpu.h) implements the same
// interface on host floats, bit-exactly for every IEEE-rounded instruction,
// so the exact routines can be measured on a machine without a GPU.
//
// The interface (F float value, I 32-bit integer, P predicate):
//   c(float) ic(int32)                       constants
//   add sub mul fma div rcp sqrt             IEEE round-to-nearest (.rn), no FTZ
//   neg abs rint floor ceil                  rint: to nearest, ties to even
//   min_num max_num                          a NaN operand yields the other one
//   copysign(mag, sgn)                       |mag| with sgn's sign
//   ex2_approx lg2_approx rcp_approx div_approx   hardware approximations (Fast)
//   lt gt le ge eq (ordered: false on NaN)   is_nan is_finite  p_not p_or
//   select(p, a, b) = p ? a : b              iselect
//   bits(F) from_bits(I) f2i (to nearest) i2f iadd isub iand ishl isra
#pragma once

#include <cstdint>

#include "jit/cuda/ptx_builder.h"

namespace canary::jit::cuda {

class PtxMath {
 public:
  using F = PtxF;
  using I = PtxI;
  using P = PtxP;

  explicit PtxMath(PtxBuilder& builder) : b_(builder) {}
  PtxBuilder& builder() const { return b_; }

  F c(float value);
  I ic(std::int32_t value);

  F add(F a, F b) { return binary("add.rn.f32", a, b); }
  F sub(F a, F b) { return binary("sub.rn.f32", a, b); }
  F mul(F a, F b) { return binary("mul.rn.f32", a, b); }
  F div(F a, F b) { return binary("div.rn.f32", a, b); }
  F div_approx(F a, F b) { return binary("div.full.f32", a, b); }
  F min_num(F a, F b) { return binary("min.f32", a, b); }
  F max_num(F a, F b) { return binary("max.f32", a, b); }
  F fma(F a, F b, F c);
  F rcp(F a) { return unary("rcp.rn.f32", a); }
  F rcp_approx(F a) { return unary("rcp.approx.f32", a); }
  F sqrt(F a) { return unary("sqrt.rn.f32", a); }
  F neg(F a) { return unary("neg.f32", a); }
  F abs(F a) { return unary("abs.f32", a); }
  F rint(F a) { return unary("cvt.rni.f32.f32", a); }
  F floor(F a) { return unary("cvt.rmi.f32.f32", a); }
  F ceil(F a) { return unary("cvt.rpi.f32.f32", a); }
  F ex2_approx(F a) { return unary("ex2.approx.f32", a); }
  F lg2_approx(F a) { return unary("lg2.approx.f32", a); }
  F copysign(F mag, F sgn);

  P lt(F a, F b) { return compare("lt", a, b); }
  P gt(F a, F b) { return compare("gt", a, b); }
  P le(F a, F b) { return compare("le", a, b); }
  P ge(F a, F b) { return compare("ge", a, b); }
  P eq(F a, F b) { return compare("eq", a, b); }
  P is_nan(F a) { return test("notanumber", a); }
  P is_finite(F a) { return test("finite", a); }
  P p_not(P a);
  P p_or(P a, P b);
  F select(P p, F a, F b);
  I iselect(P p, I a, I b);

  I bits(F a);
  F from_bits(I a);
  I f2i(F a);
  F i2f(I a);
  I iadd(I a, I b) { return ibinary("add.s32", a, b); }
  I isub(I a, I b) { return ibinary("sub.s32", a, b); }
  I iand(I a, I b) { return ibinary("and.b32", a, b); }
  I ishl(I a, int n) { return ishift("shl.b32", a, n); }
  I isra(I a, int n) { return ishift("shr.s32", a, n); }

 private:
  F unary(const char* op, F a);
  F binary(const char* op, F a, F b);
  P compare(const char* cmp, F a, F b);
  P test(const char* property, F a);
  I ibinary(const char* op, I a, I b);
  I ishift(const char* op, I a, int n);

  PtxBuilder& b_;
};

}  // namespace canary::jit::cuda
