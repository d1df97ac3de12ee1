// Contraction epilogues: the unary ops after a MatMul, Gemm or Conv that its
// oneDNN call absorbs as post-ops (ContractionStep in plan.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "jit/plan.h"
#include "jit/plan_fusion.h"

namespace canary::jit {

// The contraction step for trace op i and the run of ops after it that its
// epilogue absorbs (`last`: the trace index of the last one); nullopt when op
// i is not an f32 contraction on oneDNN or the op after it cannot be absorbed.
// A MatMul's first absorbed op may be an Add of a residual (a register of
// the product's own shape; step.addend), which oneDNN adds as a binary
// post-op before the unary ones; a broadcast bias is not (it slowed the
// matmul more than the fused pass costs, bench/jit/epilogue.cpp).
// An op is absorbed when it is Relu, LeakyRelu, Clip or Abs (oneDNN post-ops
// that compute what the reference does at the cost of a few instructions;
// its Tanh, Sigmoid and Sqrt post-ops are exact enough but measured slower
// than Canary's own fused kernels, bench/jit/epilogue.cpp), reads the
// previous op's result and nothing else, and that result is dead afterwards
// (its live range ends there, so no exit or later instruction needs it).
// Not matched either when the op after the chain would join the chain's
// fused group or take it as a row kernel's prologue: the group then costs its
// pass anyway, and post-ops would save nothing. The caller plans
// `step.separate`.
struct ContractionMatch {
  ContractionStep step;
  std::size_t last = 0;
};
std::optional<ContractionMatch> match_contraction(const vm::Program& program, const Trace& trace, std::size_t i,
                                                  const ScalarConstants& constants);

// Results that fit in the core's L2 cache stay there between the
// contraction and a separate fused kernel, whose pass then costs less than
// the post-ops slow the contraction down (bench/jit/epilogue.cpp): the
// smallest result, in f32 elements, worth post-ops by default. From the L2
// size the C library reports (sysconf), 2^18 when it reports none.
std::int64_t default_epilogue_min_elements();

// The per-call choice: true to run the epilogue as post-ops, false to run the
// contraction alone and then the separate fused group. Post-ops when the
// result (its size computed from the operands' shapes a and b) has
// step.min_elements or more, and for Relu or Clip, whose post-ops need
// every operand scanned for non-finite values first, only when the operands
// (a, b and `extra` elements of bias) are no larger than the result.
bool prefer_epilogue(const ContractionStep& step, std::span<const std::int64_t> a, std::span<const std::int64_t> b,
                     std::int64_t extra);

// "conv + relu + clip(0.000000, 6.000000) (oneDNN post-ops on large results)":
// what a listing shows of the step.
std::string describe_contraction(const ContractionStep& step);

}  // namespace canary::jit
