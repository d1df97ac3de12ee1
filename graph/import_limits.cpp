// The import limits' checks, shared by the ONNX importer and the text parser
// so both report an exceeded limit in the same words.
#include "graph/import_limits.h"

#include <algorithm>

#include "canary/error.h"

namespace canary::graph {

void check_node_count(const ImportLimits& limits, std::size_t nodes, const std::string& where) {
  if (nodes <= limits.max_nodes) return;
  throw Error(ErrorKind::Resource, where + ": the model has more than " + std::to_string(limits.max_nodes) +
                                       " nodes (Options::max_graph_nodes)");
}

int effective_depth(const ImportLimits& limits) { return std::clamp(limits.max_depth, 0, kMaxImportDepthCeiling); }

void check_nesting_depth(const ImportLimits& limits, int depth, const std::string& where) {
  const int limit = effective_depth(limits);
  if (depth <= limit) return;
  throw Error(ErrorKind::Resource, where + ": subgraphs nest deeper than " + std::to_string(limit) +
                                       " levels (Options::max_graph_depth)");
}

}  // namespace canary::graph
