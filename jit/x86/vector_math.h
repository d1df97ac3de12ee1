// Vector math emitted inline by AsmJit: exp, log, tanh, sigmoid, erf, GELU,
// softplus as polynomial approximations, in an exact and a fast variant, for
// each Isa tier. Used by every x86 kernel generator.
//
// Accuracy contract (checked by tests/jit/test_vector_math.cpp against libm
// over the whole float range, denormals included):
//   Exact: max error 4 ulp (relative to the correctly rounded float of the
//          double-precision libm result); NaN in -> NaN out; +-Inf and
//          overflow/underflow as libm (exp(-inf) = 0, exp(+big) = +inf,
//          log(0) = -inf, log(<0) = NaN, tanh(+-big) = +-1, sigmoid(-big) = 0,
//          erf(+-big) = +-1); denormal inputs and results handled.
//   Fast:  the bound documented next to each function below; same NaN/Inf
//          behaviour; denormal results may flush to zero.
// Bounds below are the largest errors measured on every 17th float bit
// pattern (2.5e8 values), special values and, for GELU, every float in
// [-16, -2^-10], on the Avx2 and Avx512 tiers (Scalar runs Avx2's
// instructions on xmm). Fast drops exp's compensated reduction (shorter
// polynomial), log's division (longer polynomial), erfc's quotient correction
// and the two-float argument of GELU's tanh form; divisions stay vdivps in
// both modes. The code assumes the default MXCSR (round to nearest, no
// FTZ/DAZ).
#pragma once

#include <asmjit/x86.h>

#include "jit/fused_kernel.h"
#include "jit/x86/isa.h"

namespace canary::jit::x86 {

// The emission context: the compiler, the tier and the math mode. Owns a
// per-function pool of broadcast constants so a constant used in a loop is
// loaded from memory once per use, not rebuilt.
class VecContext {
 public:
  VecContext(asmjit::x86::Compiler& cc, Isa isa, MathMode mode);

  asmjit::x86::Compiler& cc() const { return cc_; }
  Isa isa() const { return isa_; }
  MathMode mode() const { return mode_; }

  // A new virtual vector register of the tier's width (xmm/ymm/zmm).
  asmjit::x86::Vec new_vec(const char* name = "v") const;
  // A memory operand holding `value` in every lane (from the constant pool).
  asmjit::x86::Mem constant(float value);
  // dst = value in every lane.
  void load_constant(const asmjit::x86::Vec& dst, float value);

 private:
  asmjit::x86::Compiler& cc_;
  Isa isa_;
  MathMode mode_;
};

// Each emitter computes dst = f(src) lane-wise; dst may equal src. They may
// allocate temporaries with ctx.new_vec() and use constant-pool values.
// exp: Exact 1 ulp; Fast 5 ulp.
void emit_exp(VecContext& ctx, const asmjit::x86::Vec& dst, const asmjit::x86::Vec& src);
// log: Exact 1 ulp; Fast 2 ulp.
void emit_log(VecContext& ctx, const asmjit::x86::Vec& dst, const asmjit::x86::Vec& src);
// tanh: Exact 2 ulp; Fast 2 ulp.
void emit_tanh(VecContext& ctx, const asmjit::x86::Vec& dst, const asmjit::x86::Vec& src);
// sigmoid: Exact 2 ulp; Fast 2 ulp.
void emit_sigmoid(VecContext& ctx, const asmjit::x86::Vec& dst, const asmjit::x86::Vec& src);
// erf: Exact 2 ulp; Fast 2 ulp.
void emit_erf(VecContext& ctx, const asmjit::x86::Vec& dst, const asmjit::x86::Vec& src);
// approximate_tanh selects ONNX Gelu's "tanh" form; otherwise the erf form.
// GELU(-inf) is NaN, as 0.5 x (1 + ...) gives.
// erf form: Exact 3 ulp; Fast 4 ulp.
// tanh form: Exact 3 ulp; Fast 214 ulp (relative 2.6e-5: the argument of
// exp is rounded once, which exp magnifies for x < -4; 19 ulp for x >= -4).
void emit_gelu(VecContext& ctx, const asmjit::x86::Vec& dst, const asmjit::x86::Vec& src, bool approximate_tanh);
// log(1 + exp(x)), without overflow for large x.
// softplus: Exact 2 ulp; Fast 3 ulp.
void emit_softplus(VecContext& ctx, const asmjit::x86::Vec& dst, const asmjit::x86::Vec& src);

}  // namespace canary::jit::x86
