// vm::compile: turns a shape-inferred graph into an immutable Program.
#pragma once

#include <memory>

#include "graph/graph.h"
#include "vm/program.h"

namespace canary::vm {

struct CompileOptions {
  // fp64 reference mode: every f32 value, constant and Cast-to-f32 becomes
  // f64; f32 inputs are converted at entry; outputs stay f64.
  bool promote_f32_to_f64 = false;
};

// Compiles g (already shape-inferred). Throws canary::Error(Model) naming the
// node for anything it cannot lower.
std::shared_ptr<const Program> compile(const graph::Graph& g, const CompileOptions& opts = {});

}  // namespace canary::vm
