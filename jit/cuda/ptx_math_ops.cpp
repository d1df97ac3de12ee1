// PtxMath: each math-machine operation as one PTX instruction on fresh
// virtual registers.
#include "jit/cuda/ptx_math_ops.h"

namespace canary::jit::cuda {

PtxF PtxMath::c(float value) {
  const F d = b_.new_f();
  b_.emit("mov.f32 " + ptx_reg(d) + ", " + ptx_f32_literal(value));
  return d;
}

PtxI PtxMath::ic(std::int32_t value) {
  const I d = b_.new_i();
  b_.emit("mov.b32 " + ptx_reg(d) + ", " + std::to_string(value));
  return d;
}

PtxF PtxMath::fma(F a, F b, F c) {
  const F d = b_.new_f();
  b_.emit("fma.rn.f32 " + ptx_reg(d) + ", " + ptx_reg(a) + ", " + ptx_reg(b) + ", " + ptx_reg(c));
  return d;
}

PtxF PtxMath::copysign(F mag, F sgn) {
  // PTX copysign takes the sign source first.
  const F d = b_.new_f();
  b_.emit("copysign.f32 " + ptx_reg(d) + ", " + ptx_reg(sgn) + ", " + ptx_reg(mag));
  return d;
}

PtxP PtxMath::p_not(P a) {
  const P d = b_.new_p();
  b_.emit("not.pred " + ptx_reg(d) + ", " + ptx_reg(a));
  return d;
}

PtxP PtxMath::p_or(P a, P b) {
  const P d = b_.new_p();
  b_.emit("or.pred " + ptx_reg(d) + ", " + ptx_reg(a) + ", " + ptx_reg(b));
  return d;
}

PtxF PtxMath::select(P p, F a, F b) {
  const F d = b_.new_f();
  b_.emit("selp.f32 " + ptx_reg(d) + ", " + ptx_reg(a) + ", " + ptx_reg(b) + ", " + ptx_reg(p));
  return d;
}

PtxI PtxMath::iselect(P p, I a, I b) {
  const I d = b_.new_i();
  b_.emit("selp.b32 " + ptx_reg(d) + ", " + ptx_reg(a) + ", " + ptx_reg(b) + ", " + ptx_reg(p));
  return d;
}

PtxI PtxMath::bits(F a) {
  const I d = b_.new_i();
  b_.emit("mov.b32 " + ptx_reg(d) + ", " + ptx_reg(a));
  return d;
}

PtxF PtxMath::from_bits(I a) {
  const F d = b_.new_f();
  b_.emit("mov.b32 " + ptx_reg(d) + ", " + ptx_reg(a));
  return d;
}

PtxI PtxMath::f2i(F a) {
  const I d = b_.new_i();
  b_.emit("cvt.rni.s32.f32 " + ptx_reg(d) + ", " + ptx_reg(a));
  return d;
}

PtxF PtxMath::i2f(I a) {
  const F d = b_.new_f();
  b_.emit("cvt.rn.f32.s32 " + ptx_reg(d) + ", " + ptx_reg(a));
  return d;
}

PtxF PtxMath::unary(const char* op, F a) {
  const F d = b_.new_f();
  b_.emit(std::string(op) + " " + ptx_reg(d) + ", " + ptx_reg(a));
  return d;
}

PtxF PtxMath::binary(const char* op, F a, F b) {
  const F d = b_.new_f();
  b_.emit(std::string(op) + " " + ptx_reg(d) + ", " + ptx_reg(a) + ", " + ptx_reg(b));
  return d;
}

PtxP PtxMath::compare(const char* cmp, F a, F b) {
  const P d = b_.new_p();
  b_.emit(std::string("setp.") + cmp + ".f32 " + ptx_reg(d) + ", " + ptx_reg(a) + ", " + ptx_reg(b));
  return d;
}

PtxP PtxMath::test(const char* property, F a) {
  const P d = b_.new_p();
  b_.emit(std::string("testp.") + property + ".f32 " + ptx_reg(d) + ", " + ptx_reg(a));
  return d;
}

PtxI PtxMath::ibinary(const char* op, I a, I b) {
  const I d = b_.new_i();
  b_.emit(std::string(op) + " " + ptx_reg(d) + ", " + ptx_reg(a) + ", " + ptx_reg(b));
  return d;
}

PtxI PtxMath::ishift(const char* op, I a, int n) {
  const I d = b_.new_i();
  b_.emit(std::string(op) + " " + ptx_reg(d) + ", " + ptx_reg(a) + ", " + std::to_string(n));
  return d;
}

}  // namespace canary::jit::cuda
