// Loop-invariant hoisting for loop traces: steps whose inputs no instruction
// of the loop body writes (model constants, values captured from outside the
// loop, results of other hoisted steps) run on the first iteration of each
// trace run only; later iterations put their saved results back in place.
#pragma once

#include "jit/plan.h"

namespace canary::jit {

// Marks the hoistable compute steps (kernel calls, fused groups, row kernels,
// contractions) of a loop plan with Step::hoisted; returns how many. Does
// nothing for a plan that does not loop.
std::size_t hoist_loop_invariants(const vm::Program& program, const Trace& trace, Plan& plan);

// Per trace op: a kernel call of a loop trace that reads only loop
// invariants, as a step of its own would be hoisted (all false for a trace
// that does not loop). Grouping keeps these in place, so they stay hoistable.
std::vector<bool> loop_invariant_ops(const vm::Program& program, const Trace& trace);

}  // namespace canary::jit
