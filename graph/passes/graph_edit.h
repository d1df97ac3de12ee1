// GraphEdit: what one graph pass changes, applied by rebuilding the graph.
//
// Graph is append-only (values and nodes are referred to by index), so a pass
// does not delete in place. It reads the graph, adds what it needs (new
// constants and nodes go to the end of the pass's own copy of the graph),
// marks nodes removed and values replaced, and rebuild() writes a new graph:
// readers of a replaced value read its replacement, nodes come out in a
// topological order that keeps the original order where it already was one
// (added nodes land before their first reader), and what no graph output
// needs any more (dead nodes, unused constants) is left out. Subgraphs are
// rebuilt with their captures pointing at the new value ids.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"

namespace canary::graph {

class GraphEdit {
 public:
  // Edits of `g`, which the pass may also extend (add_constant, add_node).
  explicit GraphEdit(Graph& g);

  Graph& graph() { return graph_; }
  const Graph& graph() const { return graph_; }

  // Readers of v: node inputs, subgraph captures, and 1 for each time it is
  // a graph output. Counted when the edit was made, plus what the pass added.
  int uses(ValueId v) const;
  bool is_graph_output(ValueId v) const;
  // The nodes that read v (once per reading node), in node order.
  std::vector<NodeId> readers(ValueId v) const;
  // The producer of v when it is a node output, else an invalid id.
  NodeId producer(ValueId v) const { return graph_.value(v).producer; }
  // The constant contents of v (after replacements), or nullptr.
  const Tensor* constant(ValueId v) const;
  // The value that readers of v read now (v itself unless it was replaced).
  ValueId current(ValueId v) const { return resolve(v); }

  // A value name not used in the graph yet, built from `base`.
  std::string unique_name(std::string_view base) const;
  // Adds a constant named after `base` and returns its id.
  ValueId add_constant(std::string_view base, Tensor value);
  // Adds a node whose outputs are named after `bases`, with its outputs'
  // types copied from `types` (shape inference recomputes them later).
  NodeId add_node(OpKind op, std::string_view name, std::vector<ValueId> inputs,
                  const std::vector<std::string>& bases, const std::vector<ValueType>& types, Attributes attrs = {});

  // Node n reads v as input i (the input list grows with omitted inputs to reach i).
  void set_input(NodeId n, std::size_t i, ValueId v);
  void remove_node(NodeId n);
  bool removed(NodeId n) const { return removed_.at(n.index); }
  // Every reader of `from` reads `to` instead. When `from` is a graph output,
  // `to` takes its name in the rebuilt graph, so `to` must then be a node
  // output that is not a graph input, constant or graph output itself
  // (can_replace says whether it is).
  void replace(ValueId from, ValueId to);
  bool can_replace(ValueId from, ValueId to) const;

  // Changes made so far (for the pass report).
  int changes() const { return changes_; }
  void count_change() { ++changes_; }

  // The graph these edits describe, dead nodes and unused constants left out.
  std::shared_ptr<Graph> rebuild() const;

 private:
  void grow();
  ValueId resolve(ValueId v) const;

  Graph& graph_;
  std::vector<int> uses_;
  std::vector<bool> outputs_;
  std::vector<bool> removed_;
  std::vector<ValueId> replaced_by_;
  int changes_ = 0;
};

// How pass reports name a node: 'name', or for an unnamed one 'Op -> first output'.
std::string node_label(const Graph& g, const Node& node);

// The graph itself rebuilt with outer values renumbered by `outer_map` (old
// id of the enclosing graph -> new id), no other change: how rebuild() copies
// subgraphs.
std::shared_ptr<Graph> rebuild_subgraph(const Graph& g, const std::vector<ValueId>& outer_map);

}  // namespace canary::graph
