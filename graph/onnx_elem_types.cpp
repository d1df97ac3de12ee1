// Element types of the values an ONNX graph computes, known at import time
// from ONNX's own type inference. Canary infers its types after import, but
// some function bodies are built per input element type (the loss ops'
// bodies: NegativeLogLikelihoodLoss makes constants of its input's type),
// and their inputs are often computed values: an op's output in the model,
// or a value inside another function's body (SoftmaxCrossEntropyLoss's
// body feeds a computed log-probability to NegativeLogLikelihoodLoss). The
// importer follows element types node by node with these helpers, and only
// for models that have an op it may import as a function body.
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <exception>
#include <unordered_map>

#include "graph/onnx_import_internal.h"

namespace canary::graph::onnx_import {

std::vector<std::int32_t> infer_elem_types(const onnx::NodeProto& node, std::int64_t opset,
                                           const std::vector<onnx::TypeProto>& input_types) {
  std::vector<std::int32_t> types(static_cast<std::size_t>(node.output_size()), onnx::TensorProto::UNDEFINED);
  if (!node.domain().empty() && node.domain() != "ai.onnx") return types;
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), "");
  if (schema == nullptr || input_types.size() != static_cast<std::size_t>(node.input_size())) return types;
  // Every present input typed, as onnx::shape_inference would give them: an
  // inference function may read the type of any input the node names.
  std::unordered_map<std::string, onnx::TypeProto*> by_name;
  std::vector<onnx::TypeProto> inputs = input_types;
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty()) continue;
    if (inputs[static_cast<std::size_t>(i)].tensor_type().elem_type() == onnx::TensorProto::UNDEFINED) return types;
    by_name[node.input(i)] = &inputs[static_cast<std::size_t>(i)];
  }
  try {
    // Checked against its schema first, as the checker does before libonnx's
    // inference runs: an inference function expects a well-formed node.
    schema->Verify(node);
    onnx::NodeProto copy = node;
    onnx::shape_inference::InferenceContextImpl ctx(copy, by_name, {}, {});
    schema->GetTypeAndShapeInferenceFunction()(ctx);
    for (std::size_t i = 0; i < types.size(); ++i) {
      const onnx::TypeProto* t = ctx.getOutputType(i);
      if (t->has_tensor_type()) types[i] = t->tensor_type().elem_type();
    }
  } catch (const std::exception&) {
    // Malformed for its schema, or a type this node's inference cannot give
    // without more (a subgraph's outputs): the types stay unknown, and
    // Canary's own checks report what is wrong with the node.
    std::fill(types.begin(), types.end(), onnx::TensorProto::UNDEFINED);
  }
  return types;
}

bool has_op_without_kernel(const onnx::GraphProto& graph, std::int64_t opset) {
  for (const onnx::NodeProto& node : graph.node()) {
    if (!is_constant_node(node) && !lookup_op(node, opset).op) return true;
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.has_g() && has_op_without_kernel(a.g(), opset)) return true;
      for (const onnx::GraphProto& sub : a.graphs())
        if (has_op_without_kernel(sub, opset)) return true;
    }
  }
  return false;
}

}  // namespace canary::graph::onnx_import
