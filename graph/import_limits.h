// Limits a model must stay within to be imported (ONNX or the text format),
// so a hostile or runaway file is a typed error instead of an exhausted stack
// or memory. Runtime::load fills them from Options::max_graph_nodes and
// Options::max_graph_depth.
#pragma once

#include <cstddef>
#include <string>

namespace canary::graph {

// The deepest subgraph nesting any limit may allow: each level costs the
// importer, shape inference and the bytecode compiler a few stack frames,
// and this keeps them well inside a default 8 MiB thread stack.
inline constexpr int kMaxImportDepthCeiling = 256;

struct ImportLimits {
  // Nodes in the whole model, subgraph nodes and constants included.
  std::size_t max_nodes = 1'000'000;
  // Levels of subgraph nesting (the main graph is level 0; a Loop body
  // inside it level 1). At most kMaxImportDepthCeiling.
  int max_depth = 64;
};

// Error(Resource) "the model has more than N nodes (limit max_graph_nodes)"
// when `nodes` exceeds the limit; `where` names the graph being read.
void check_node_count(const ImportLimits& limits, std::size_t nodes, const std::string& where);
// max_depth clamped to [0, kMaxImportDepthCeiling].
int effective_depth(const ImportLimits& limits);
// Error(Resource) naming the graph when `depth` exceeds effective_depth.
void check_nesting_depth(const ImportLimits& limits, int depth, const std::string& where);

}  // namespace canary::graph
