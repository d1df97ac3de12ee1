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
// An op is absorbed when it is a unary op oneDNN computes as the reference
// does (kernels::EpilogueOp), reads the previous op's result and nothing
// else, and that result is dead afterwards (its live range ends there, so no
// exit or later instruction needs it).
struct ContractionMatch {
  ContractionStep step;
  std::size_t last = 0;
};
std::optional<ContractionMatch> match_contraction(const vm::Program& program, const Trace& trace, std::size_t i,
                                                  const ScalarConstants& constants);

// "conv + relu + tanh (oneDNN post-ops)": what a listing shows of the step.
std::string describe_contraction(const ContractionStep& step);

}  // namespace canary::jit
