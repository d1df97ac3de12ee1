// Contraction epilogues: the unary ops after a MatMul, Gemm or Conv that its
// oneDNN call absorbs as post-ops (ContractionStep in plan.h).
#pragma once

#include <cstddef>
#include <optional>

#include "jit/plan.h"
#include "jit/plan_fusion.h"

namespace canary::jit {

// The contraction step for trace op i and the run of ops after it that its
// epilogue absorbs (`last`: the trace index of the last one); nullopt when op
// i is not an f32 contraction on oneDNN or the op after it cannot be absorbed.
// An op is absorbed when it is Relu, LeakyRelu, Clip or Abs (oneDNN post-ops
// that compute what the reference does at the cost of a few instructions;
// its Tanh, Sigmoid and Sqrt post-ops are exact enough but measured slower
// than Canary's own fused kernels, bench/jit/epilogue.cpp), reads the
// previous op's result and nothing else, and that result is dead afterwards
// (its live range ends there, so no exit or later instruction needs it).
// The caller plans `step.separate`.
struct ContractionMatch {
  ContractionStep step;
  std::size_t last = 0;
};
std::optional<ContractionMatch> match_contraction(const vm::Program& program, const Trace& trace, std::size_t i,
                                                  const ScalarConstants& constants);

// Results smaller than this many elements stay in cache between the
// contraction and a separate fused kernel, whose pass then costs less than
// the post-ops slow the contraction down (bench/jit/epilogue.cpp).
inline constexpr std::int64_t kMinEpilogueElements = std::int64_t{1} << 17;

// The per-call choice: true to run the epilogue as post-ops, false to run the
// contraction alone and then the separate fused group. Post-ops when the
// result (estimated from the operands a and b) has kMinEpilogueElements or
// more, and for Relu or Clip, whose post-ops need every operand scanned for
// non-finite values first, only when the operands are no larger than the result.
bool prefer_epilogue(const ContractionStep& step, const Tensor& a, const Tensor& b);

// "conv + relu + clip(0, 6) (oneDNN post-ops)": what a listing shows of the step.
std::string describe_contraction(const ContractionStep& step);

}  // namespace canary::jit
