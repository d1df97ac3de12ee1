// The graph optimizer: a pipeline of named passes run on a shape-inferred
// graph at load, before it is compiled to bytecode.
//
// Levels, like ONNX Runtime's:
//   Off    the graph runs as imported.
//   Basic  rewrites that change no output bit: no-op removal (Identity,
//          inference Dropout, Cast to the same dtype, Reshape/Flatten/Squeeze/
//          Unsqueeze/Expand to the shape the value already has), constant
//          folding, common-subexpression elimination, dead nodes.
//   All    Basic plus rewrites that round differently from the graph as
//          written (within a few f32 ulps of each result): BatchNormalization
//          folded into the Conv or Gemm before it, a lone BatchNormalization
//          as one per-channel multiply-add, MatMul + bias Add as one Gemm.
// Every pass leaves a graph that passes shape inference (the pipeline re-runs
// it after each pass that changed something, so a wrong rewrite is an
// Error(Internal) naming the pass, never a wrong program). docs/graph-passes.md
// describes each pass and its conditions.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace canary::graph {

enum class OptimizationLevel { Off, Basic, All };

// "off", "basic", "all"; parse_optimization_level returns nullopt for anything else.
const char* optimization_level_name(OptimizationLevel level);
std::optional<OptimizationLevel> parse_optimization_level(std::string_view name);

// Evaluates one node whose inputs are all constants (given in input order,
// nullptr for an omitted optional input) and returns its outputs, or nullopt
// when it cannot (the node then stays). The graph layer cannot run kernels,
// so whoever runs the optimizer supplies this (runtime/ runs the node in the
// interpreter); without one, constant folding only folds what shapes alone
// determine (Shape, Size-like values already known as dims).
using ConstantEvaluator = std::function<std::optional<std::vector<Tensor>>(const Node&, const std::vector<const Tensor*>&)>;

struct OptimizerOptions {
  OptimizationLevel level = OptimizationLevel::All;
  ConstantEvaluator evaluate;
  // Largest tensor constant folding writes, in bytes; larger results stay computed at run time.
  std::size_t max_folded_bytes = std::size_t{64} << 20;
};

// What one pass did.
struct PassRecord {
  std::string pass;                  // "fold_batch_norm"
  int changes = 0;                   // rewrites applied
  int nodes_before = 0, nodes_after = 0;
  std::vector<std::string> details;  // one line per rewrite, e.g. "bn1 folded into conv1"
};

struct OptimizeResult {
  std::shared_ptr<Graph> graph;      // shape-inferred
  std::vector<PassRecord> passes;    // every pass that ran, in order
};

// Runs the passes of options.level on a copy of `g` (which must be
// shape-inferred; it is not changed). Subgraphs (Loop/If/Scan bodies) are
// carried over as they are.
OptimizeResult optimize_graph(const Graph& g, const OptimizerOptions& options);

}  // namespace canary::graph
