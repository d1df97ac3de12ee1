// Constant folding: a node whose present inputs are all constants is run once
// at load (OptimizerOptions::evaluate) and its outputs become constants; an
// integer value whose contents shape inference already knows as constant dims
// (Shape of a static shape, and the Gather/Concat/Unsqueeze/Cast chains that
// exporters build on it) becomes a constant without running anything.
//
// Left alone: nodes with subgraphs, outputs that are graph outputs (a
// constant cannot carry an output's name), results with a symbolic dim, and
// results above max_folded_bytes. Ops that make large tensors from small
// inputs (ConstantOfShape, Expand, Tile, Range) fold only up to 64 KiB, so a
// model does not grow by what it computes cheaply at run time.
#include "graph/passes/passes.h"

#include <algorithm>

namespace canary::graph::passes {
namespace {

constexpr std::size_t kGeneratorFoldBytes = std::size_t{64} << 10;

// The static dims of a type, or nullopt when one is symbolic.
std::optional<Shape> static_shape(const ValueType& t) {
  Shape shape;
  for (const Dim& d : t.shape) {
    if (!d.is_constant()) return std::nullopt;
    shape.push_back(d.value());
  }
  return shape;
}

bool makes_large_from_small(OpKind op) {
  return op == OpKind::ConstantOfShape || op == OpKind::Expand || op == OpKind::Tile || op == OpKind::Range;
}

bool has_subgraph(const Node& node) {
  for (const auto& [name, value] : node.attrs)
    if (std::holds_alternative<std::shared_ptr<Graph>>(value)) return true;
  return false;
}

// Bytes of a static type, or nullopt when it overflows.
std::optional<std::size_t> static_bytes(DType dtype, const Shape& shape) {
  std::size_t bytes = dtype_size(dtype);
  for (std::int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(bytes, static_cast<std::size_t>(d), &bytes)) return std::nullopt;
  return bytes;
}

// The constant a known-dims integer value stands for, or nullopt.
std::optional<Tensor> known_dims_constant(const ValueInfo& info) {
  if (!info.known_dims || (info.type.dtype != DType::I64 && info.type.dtype != DType::I32)) return std::nullopt;
  if (info.type.rank() > 1) return std::nullopt;
  std::vector<std::int64_t> values;
  for (const Dim& d : *info.known_dims) {
    if (!d.is_constant()) return std::nullopt;
    values.push_back(d.value());
  }
  const Shape shape = info.type.rank() == 0 ? Shape{} : Shape{static_cast<std::int64_t>(values.size())};
  if (info.type.rank() == 0 && values.size() != 1) return std::nullopt;
  if (info.type.dtype == DType::I64) return Tensor::from_vector(values, shape);
  std::vector<std::int32_t> narrow(values.begin(), values.end());
  return Tensor::from_vector(narrow, shape);
}

// The node's outputs computed by the evaluator, each checked against its
// inferred type; nullopt when the node does not fold.
std::optional<std::vector<Tensor>> evaluate_node(PassContext& ctx, const Node& node) {
  if (!ctx.options.evaluate || has_subgraph(node) || node.op == OpKind::Shape) return std::nullopt;
  std::vector<const Tensor*> inputs;
  std::size_t input_bytes = 0;
  for (ValueId v : node.inputs) {
    if (!v.valid()) {
      inputs.push_back(nullptr);
      continue;
    }
    const Tensor* t = ctx.edit.constant(v);
    if (t == nullptr) return std::nullopt;
    inputs.push_back(t);
    input_bytes += t->nbytes();
  }
  if (inputs.empty()) return std::nullopt;
  std::vector<Shape> shapes;
  for (ValueId v : node.outputs) {
    if (!v.valid()) continue;
    if (ctx.edit.is_graph_output(v)) return std::nullopt;
    const ValueInfo& info = ctx.edit.graph().value(v);
    std::optional<Shape> shape = static_shape(info.type);
    if (!shape) return std::nullopt;
    const std::optional<std::size_t> bytes = static_bytes(info.type.dtype, *shape);
    if (!bytes || *bytes > ctx.options.max_folded_bytes) return std::nullopt;
    if (makes_large_from_small(node.op) && *bytes > std::max(input_bytes, kGeneratorFoldBytes)) return std::nullopt;
    shapes.push_back(*shape);
  }
  std::optional<std::vector<Tensor>> results = ctx.options.evaluate(node, inputs);
  if (!results || results->size() != shapes.size()) return std::nullopt;
  std::size_t k = 0;
  for (ValueId v : node.outputs) {
    if (!v.valid()) continue;
    const Tensor& t = (*results)[k];
    if (!t.defined() || t.dtype() != ctx.edit.graph().value(v).type.dtype || t.shape() != shapes[k]) return std::nullopt;
    ++k;
  }
  return results;
}

}  // namespace

void fold_constants(PassContext& ctx) {
  GraphEdit& edit = ctx.edit;
  const std::size_t count = edit.graph().nodes().size();
  for (std::uint32_t i = 0; i < count; ++i) {
    const NodeId n{i};
    if (edit.removed(n)) continue;
    const Node node = edit.graph().node(n);  // a copy: adding constants may move the node table
    // Every output known from shapes alone: no evaluation needed.
    std::vector<Tensor> known;
    for (ValueId v : node.outputs) {
      if (!v.valid() || edit.is_graph_output(v)) break;
      std::optional<Tensor> t = known_dims_constant(edit.graph().value(v));
      if (!t) break;
      known.push_back(std::move(*t));
    }
    const bool all_known = !known.empty() && known.size() == node.outputs.size();
    std::optional<std::vector<Tensor>> values = all_known ? std::optional(std::move(known)) : evaluate_node(ctx, node);
    if (!values) continue;
    std::size_t k = 0;
    for (ValueId v : node.outputs) {
      if (!v.valid()) continue;
      const ValueId c = edit.add_constant(edit.graph().value(v).name + "_folded", std::move((*values)[k++]));
      edit.replace(v, c);
    }
    edit.remove_node(n);
    edit.count_change();
    ctx.details.push_back(node_label(edit.graph(), node) + " (" + std::string(op_name(node.op)) + ")" +
                          (all_known ? " known from shapes" : " computed at load"));
  }
}

}  // namespace canary::graph::passes
