// The optimizer's pipeline: the passes of each level, in order, each followed
// by a rebuild and shape inference of the graph it produced.
#include "graph/passes/optimizer.h"

#include <set>

#include "canary/error.h"
#include "graph/op_registry.h"
#include "graph/passes/passes.h"

namespace canary::graph {
namespace {

using PassFn = void (*)(passes::PassContext&);

struct PassEntry {
  const char* name;
  OptimizationLevel level;  // the lowest level that runs it
  PassFn run;               // nullptr: dead-node elimination (the rebuild alone)
};

// Order matters: no-ops go first so that folding and fusion see through them;
// constants fold before fusion reads weights; dead nodes go at every rebuild.
constexpr PassEntry kPipeline[] = {
    {"eliminate_dead_nodes", OptimizationLevel::Basic, nullptr},
    {"remove_no_ops", OptimizationLevel::Basic, passes::remove_no_ops},
    {"fold_constants", OptimizationLevel::Basic, passes::fold_constants},
    {"reduce_strength", OptimizationLevel::Basic, passes::reduce_strength},
    {"eliminate_common_subexpressions", OptimizationLevel::Basic, passes::eliminate_common_subexpressions},
    {"fold_batch_norm", OptimizationLevel::All, passes::fold_batch_norm},
    {"fold_pad_into_conv", OptimizationLevel::All, passes::fold_pad_into_conv},
    {"fuse_matmul_add", OptimizationLevel::All, passes::fuse_matmul_add},
    {"fuse_layer_norm", OptimizationLevel::All, passes::fuse_layer_norm},
    {"channels_last", OptimizationLevel::All, passes::convert_to_channels_last},
};

int level_rank(OptimizationLevel level) { return static_cast<int>(level); }

// The names of the nodes of g that `next` no longer has (dead-node details).
std::vector<std::string> dropped_nodes(const Graph& g, const Graph& next) {
  std::multiset<std::string> kept;
  for (const Node& n : next.nodes()) kept.insert(n.name);
  std::vector<std::string> dropped;
  for (const Node& n : g.nodes()) {
    auto it = kept.find(n.name);
    if (it != kept.end()) {
      kept.erase(it);
      continue;
    }
    dropped.push_back(node_label(g, n) + " (" + std::string(op_name(n.op)) + ") is unused");
  }
  return dropped;
}

// Re-infers a pass's result; a failure is the pass's bug, reported as such.
void check_result(Graph& g, const char* pass) {
  try {
    infer_shapes(g);
  } catch (const Error& e) {
    throw Error(ErrorKind::Internal, std::string("graph pass '") + pass + "' produced an invalid graph: " + e.detail());
  }
}

}  // namespace

const char* optimization_level_name(OptimizationLevel level) {
  switch (level) {
    case OptimizationLevel::Off: return "off";
    case OptimizationLevel::Basic: return "basic";
    case OptimizationLevel::All: return "all";
  }
  return "?";
}

std::optional<OptimizationLevel> parse_optimization_level(std::string_view name) {
  for (OptimizationLevel l : {OptimizationLevel::Off, OptimizationLevel::Basic, OptimizationLevel::All})
    if (name == optimization_level_name(l)) return l;
  return std::nullopt;
}

OptimizeResult optimize_graph(const Graph& g, const OptimizerOptions& options) {
  OptimizeResult result;
  result.graph = std::make_shared<Graph>(g);  // shares tensors and subgraphs, never changes them
  for (const PassEntry& entry : kPipeline) {
    if (level_rank(options.level) < level_rank(entry.level)) continue;
    PassRecord record;
    record.pass = entry.name;
    record.nodes_before = static_cast<int>(result.graph->nodes().size());
    Graph work = *result.graph;  // the pass's own copy: it may append constants and nodes
    GraphEdit edit(work);
    if (entry.run != nullptr) {
      passes::PassContext ctx{edit, options, record.details};
      entry.run(ctx);
    }
    if (entry.run == nullptr || edit.changes() > 0) {
      std::shared_ptr<Graph> next = edit.rebuild();
      check_result(*next, entry.name);
      if (entry.run == nullptr) record.details = dropped_nodes(*result.graph, *next);
      result.graph = std::move(next);
    }
    record.changes = entry.run == nullptr ? static_cast<int>(record.details.size()) : edit.changes();
    record.nodes_after = static_cast<int>(result.graph->nodes().size());
    result.passes.push_back(std::move(record));
  }
  return result;
}

}  // namespace canary::graph
