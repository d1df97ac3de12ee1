// Entry guards of a plan: which checks protect a trace's entry values, chosen
// from the recorded shapes and what the policy has learned.
#pragma once

#include "jit/plan.h"

namespace canary::jit {

// Fills plan.guards, plan.entry_regs, plan.entry_names, plan.symbols and one
// EntryGuard exit per guard (so exits[i] belongs to guard i).
void plan_entry_guards(const vm::Program& program, const Trace& trace, const ShapeKnowledge& knowledge,
                       Plan& plan);

}  // namespace canary::jit
