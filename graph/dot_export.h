// Graphviz DOT of a graph, decorated with clusters of nodes and marked values.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"

namespace canary::graph {

// A group of nodes drawn in one box, by display name (the node's name, or its
// first output's name when unnamed, as the bytecode names nodes).
struct DotCluster {
  std::string label;
  std::vector<std::string> nodes;
};

struct DotDecoration {
  std::vector<DotCluster> clusters;        // a node lands in the first cluster that lists it
  std::vector<std::string> marked_values;  // value names drawn in red (guarded values)
};

// "digraph G { ... }": inputs and outputs as ellipses, constants as notes,
// nodes as boxes ("name\nOp"), edges labelled with value names. Subgraphs of
// Loop/If/Scan are drawn inside a cluster of their node, their captures as
// dashed edges from the outer value. Decoration clusters nest inside the
// cluster of the scope their first node belongs to.
std::string export_dot(const Graph& graph, const DotDecoration& decoration);

}  // namespace canary::graph
