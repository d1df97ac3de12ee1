// The value of each EwOp node written against a math machine M (PtxMath
// emits it, CpuMath evaluates it), with the reference evaluator's semantics
// (jit/fused_kernel.cpp): NaN-propagating Max/Min, Relu and Clip passing NaN
// through, HardSigmoid's fmin/fmax order, GELU's order of operations.
#pragma once

#include "jit/cuda/ptx_math.h"
#include "jit/fused_kernel.h"

namespace canary::jit::cuda {

// The result of a binary node: a (op) b.
template <class M>
typename M::F lower_binary(M& m, EwOp op, typename M::F a, typename M::F b) {
  switch (op) {
    case EwOp::Add: return m.add(a, b);
    case EwOp::Sub: return m.sub(a, b);
    case EwOp::Mul: return m.mul(a, b);
    case EwOp::Div: return m.div(a, b);
    // a < b ? b : a, NaN when either is NaN (a NaN already falls through to a).
    case EwOp::Max: return m.select(m.is_nan(b), b, m.select(m.lt(a, b), b, a));
    case EwOp::Min: return m.select(m.is_nan(b), b, m.select(m.lt(b, a), b, a));
    default: return m.c(std::numeric_limits<float>::quiet_NaN());
  }
}

// HardSigmoid: fmax(0, fmin(1, alpha x + beta)) with the product rounded
// on its own; NaN gives 1, -0 gives +0.
template <class M>
typename M::F lower_hard_sigmoid(M& m, typename M::F a, float alpha, float beta) {
  const typename M::F y = m.add(m.mul(m.c(alpha), a), m.c(beta));
  const typename M::F one = m.c(1.0f);
  const typename M::F t = m.select(m.is_nan(y), one, m.select(m.lt(y, one), y, one));
  const typename M::F zero = m.c(0.0f);
  return m.select(m.gt(t, zero), t, zero);
}

// Clip: v < low ? (low > high ? high : low) : (v > high ? high : v).
template <class M>
typename M::F lower_clip(M& m, typename M::F a, float low, float high) {
  const float below = low > high ? high : low;
  const typename M::F upper = m.select(m.gt(a, m.c(high)), m.c(high), a);
  return m.select(m.lt(a, m.c(low)), m.c(below), upper);
}

// The result of a unary node on a.
template <class M>
typename M::F lower_unary(M& m, const EwNode& n, typename M::F a, MathMode mode) {
  using F = typename M::F;
  const F zero = m.c(0.0f);
  switch (n.op) {
    case EwOp::Neg: return m.neg(a);
    case EwOp::Abs: return m.abs(a);
    case EwOp::Exp: return ptx_math::exp(m, a, mode);
    case EwOp::Log: return ptx_math::log(m, a, mode);
    case EwOp::Sqrt: return m.sqrt(a);
    case EwOp::Tanh: return ptx_math::tanh(m, a, mode);
    case EwOp::Sigmoid: return ptx_math::sigmoid(m, a, mode);
    case EwOp::Relu: return m.select(m.lt(a, zero), zero, a);
    case EwOp::Erf: return ptx_math::erf(m, a, mode);
    case EwOp::Reciprocal: return m.rcp(a);
    case EwOp::Floor: return m.floor(a);
    case EwOp::Ceil: return m.ceil(a);
    case EwOp::Round: return m.rint(a);
    case EwOp::Softplus: return ptx_math::softplus(m, a, mode);
    case EwOp::Gelu: return ptx_math::gelu(m, a, n.imm0 == 1.0f, mode);
    case EwOp::LeakyRelu: return m.select(m.lt(a, zero), m.mul(m.c(n.imm0), a), a);
    case EwOp::HardSigmoid: return lower_hard_sigmoid(m, a, n.imm0, n.imm1);
    case EwOp::HardSwish: return m.mul(a, lower_hard_sigmoid(m, a, n.imm0, n.imm1));
    case EwOp::Clip: return lower_clip(m, a, n.imm0, n.imm1);
    default: return m.c(std::numeric_limits<float>::quiet_NaN());
  }
}

// The value of node n (not Input) from the values of earlier nodes.
template <class M, class Values>
typename M::F lower_node(M& m, const EwNode& n, const Values& values, MathMode mode) {
  if (n.op == EwOp::Constant) return m.c(n.imm0);
  if (ew_arity(n.op) == 2) return lower_binary(m, n.op, values[n.a], values[n.b]);
  return lower_unary(m, n, values[n.a], mode);
}

}  // namespace canary::jit::cuda
