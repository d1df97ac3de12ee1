// The shape-inference driver: verify the structure once, then validate and
// infer every node in order, storing output types and known dims.
#include "graph/op_registry.h"
#include "graph/shape_rules.h"

namespace canary::graph {
namespace {

// Validates and infers one node, then writes its outputs into the graph.
void infer_node(Graph& graph, const Node& node) {
  validate_node(graph, node);
  const OpSchema& schema = op_schema(node.op);
  InferContext ctx(graph, node, graph.symbols());
  try {
    schema.infer(ctx);
  } catch (const Error& e) {
    // Errors raised below the rule (symbolic arithmetic, tensors) get the node's name too.
    if (e.detail().rfind("node '", 0) == 0) throw;
    fail_node(node, e.kind(), e.detail());
  }
  for (std::size_t i = 0; i < node.outputs.size(); ++i) {
    if (!node.outputs[i].valid()) continue;
    if (!ctx.outputs()[i]) fail_node(node, ErrorKind::Internal, "output " + std::to_string(i) + " was not inferred");
    if (ctx.outputs()[i]->shape.size() > kMaxTensorRank)
      fail_node(node, ErrorKind::Shape, "output " + std::to_string(i) + " would have rank " +
                                            std::to_string(ctx.outputs()[i]->shape.size()) + ", above the maximum of " +
                                            std::to_string(kMaxTensorRank));
    ValueInfo& out = graph.value(node.outputs[i]);
    out.type = *ctx.outputs()[i];
    out.known_dims = ctx.output_known_dims()[i];
  }
}

}  // namespace

// Validates and infers every node of a graph in order.
void infer_subgraph(Graph& graph) {
  for (const Node& node : graph.nodes()) infer_node(graph, node);
}

// Verifies the structure once, then infers every node.
void infer_shapes(Graph& graph) {
  verify_graph(graph);
  infer_subgraph(graph);
}

}  // namespace canary::graph
