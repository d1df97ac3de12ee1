// Layer normalisation exported as primitives (torch's LayerNorm before
// opset 17, and hand-written ones):
//
//   mean = ReduceMean(x) over the last axis      d = Sub(x, mean)
//   var  = ReduceMean(d * d) over the last axis  (Pow(d, 2), or Mul(d, d)
//                                                 once reduce_strength ran)
//   y    = Div(d, Sqrt(Add(var, epsilon)))       [* scale] [+ shift]
//
// becomes one LayerNormalization(x, scale, shift) over the last axis, where
// scale and shift are constants of one value per feature (scale 1 when
// absent). The JIT then runs one row kernel (its statistics in double)
// instead of two row reductions and two fused groups, and the interpreter
// one kernel instead of nine. Every intermediate must be read only inside
// the pattern; the result rounds differently (better), so the pass is of
// level All.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "graph/passes/passes.h"

namespace canary::graph::passes {
namespace {

// The live node producing v when it is an `op`, else null.
const Node* producer_of(const GraphEdit& edit, ValueId v, OpKind op) {
  const NodeId id = edit.producer(v);
  if (!id.valid() || edit.removed(id)) return nullptr;
  const Node& n = edit.graph().node(id);
  return n.op == op ? &n : nullptr;
}

// True when v is read once, by a node, and is no graph output.
bool read_once(const GraphEdit& edit, ValueId v) { return edit.uses(v) == 1 && !edit.is_graph_output(v); }

// A ReduceMean of one input over exactly the last axis of a rank-`rank` value, keeping dims.
bool last_axis_mean(const Node* n, int rank) {
  if (n == nullptr || n->inputs.size() != 1) return false;
  const auto keep = n->attrs.find("keepdims");
  if (keep != n->attrs.end() && std::get<std::int64_t>(keep->second) != 1) return false;
  const auto axes = n->attrs.find("axes");
  if (axes == n->attrs.end()) return false;
  const auto& list = std::get<std::vector<std::int64_t>>(axes->second);
  return list.size() == 1 && (list[0] == -1 || list[0] == rank - 1);
}

// The value of a one-element constant of dtype `dtype`, or nullopt.
std::optional<double> scalar_of(const GraphEdit& edit, ValueId v, DType dtype) {
  const Tensor* c = edit.constant(v);
  if (c == nullptr || c->dtype() != dtype || c->numel() != 1) return std::nullopt;
  return c->element_as_double(0);
}

// A constant of one value per feature ([C], or [1, ..., C] no longer than
// the normalised value) as a [C] tensor, or nullopt.
std::optional<Tensor> per_feature(const GraphEdit& edit, ValueId v, std::int64_t features, int rank, DType dtype) {
  const Tensor* c = edit.constant(v);
  if (c == nullptr || c->dtype() != dtype || c->rank() < 1 || c->rank() > rank || c->numel() != features ||
      c->dim(c->rank() - 1) != features)
    return std::nullopt;
  const std::int64_t dims[1] = {features};
  return c->reshaped(dims);
}

// The square of d inside the pattern: Mul(d, d) or Pow(d, 2).
bool squares(const GraphEdit& edit, const Node* sq, ValueId d, DType dtype) {
  if (sq == nullptr || sq->inputs.size() != 2 || edit.current(sq->inputs[0]) != d) return false;
  if (sq->op == OpKind::Mul) return edit.current(sq->inputs[1]) == d;
  return sq->op == OpKind::Pow && scalar_of(edit, sq->inputs[1], dtype) == 2.0;
}

// A matched normalisation: its input, epsilon, nodes and normalised result.
struct LayerNormMatch {
  ValueId x;
  double epsilon = 0;
  std::vector<NodeId> nodes;  // every node the rewrite removes
  ValueId out;
};

// The pattern ending in Div node `div_id`, without scale and shift.
std::optional<LayerNormMatch> match_normalisation(const GraphEdit& edit, NodeId div_id) {
  const Node& div = edit.graph().node(div_id);
  if (div.inputs.size() != 2) return std::nullopt;
  const ValueId d = edit.current(div.inputs[0]), s = edit.current(div.inputs[1]);
  const Node* sqrt = producer_of(edit, s, OpKind::Sqrt);
  if (sqrt == nullptr || !read_once(edit, s)) return std::nullopt;
  const ValueId shifted_var = edit.current(sqrt->inputs[0]);
  const Node* add_eps = producer_of(edit, shifted_var, OpKind::Add);
  if (add_eps == nullptr || !read_once(edit, shifted_var)) return std::nullopt;
  const Node* sub = producer_of(edit, d, OpKind::Sub);
  if (sub == nullptr || edit.is_graph_output(d)) return std::nullopt;
  const ValueId x = edit.current(sub->inputs[0]), mean = edit.current(sub->inputs[1]);
  const ValueType& type = edit.graph().value(x).type;
  if ((type.dtype != DType::F32 && type.dtype != DType::F64) || type.rank() < 1) return std::nullopt;
  const Node* mean_node = producer_of(edit, mean, OpKind::ReduceMean);
  if (!last_axis_mean(mean_node, type.rank()) || !read_once(edit, mean) || edit.current(mean_node->inputs[0]) != x)
    return std::nullopt;
  // Epsilon on either side of the Add, the variance on the other.
  for (int side = 0; side < 2; ++side) {
    const std::optional<double> eps = scalar_of(edit, add_eps->inputs[side], type.dtype);
    const ValueId var = edit.current(add_eps->inputs[1 - side]);
    if (!eps || !(*eps >= 0.0) || !std::isfinite(*eps)) continue;
    const Node* var_node = producer_of(edit, var, OpKind::ReduceMean);
    if (!last_axis_mean(var_node, type.rank()) || !read_once(edit, var)) continue;
    const ValueId sq = edit.current(var_node->inputs[0]);
    const NodeId sq_id = edit.producer(sq);
    if (!sq_id.valid() || edit.removed(sq_id) || !read_once(edit, sq)) continue;
    if (!squares(edit, &edit.graph().node(sq_id), d, type.dtype)) continue;
    // d feeds the square and the Div only.
    const std::vector<NodeId> d_readers = edit.readers(d);
    if (d_readers.size() != 2) continue;
    LayerNormMatch m;
    m.x = x;
    m.epsilon = *eps;
    m.nodes = {edit.producer(mean), edit.producer(d), sq_id, edit.producer(var), edit.producer(shifted_var),
               edit.producer(s), div_id};
    m.out = div.outputs[0];
    return m;
  }
  return std::nullopt;
}

// The node reading v, when v is read once by a live `op` node.
const Node* sole_reader(const GraphEdit& edit, ValueId v, OpKind op, NodeId& id) {
  if (!read_once(edit, v)) return nullptr;
  const std::vector<NodeId> readers = edit.readers(v);
  if (readers.size() != 1 || edit.removed(readers[0])) return nullptr;
  const Node& n = edit.graph().node(readers[0]);
  if (n.op != op || n.inputs.size() != 2) return nullptr;
  id = readers[0];
  return &n;
}

// The per-feature constant on the other side of a binary node that reads v, or nullopt.
std::optional<Tensor> other_side(const GraphEdit& edit, const Node& n, ValueId v, std::int64_t features, int rank,
                                 DType dtype) {
  for (int side = 0; side < 2; ++side)
    if (edit.current(n.inputs[side]) == v) return per_feature(edit, n.inputs[1 - side], features, rank, dtype);
  return std::nullopt;
}

}  // namespace

void fuse_layer_norm(PassContext& ctx) {
  GraphEdit& edit = ctx.edit;
  const std::size_t count = edit.graph().nodes().size();
  for (std::uint32_t i = 0; i < count; ++i) {
    const NodeId div_id{i};
    if (edit.removed(div_id) || edit.graph().node(div_id).op != OpKind::Div) continue;
    std::optional<LayerNormMatch> m = match_normalisation(edit, div_id);
    if (!m) continue;
    const ValueType type = edit.graph().value(m->x).type;
    const Dim& last = type.shape.back();
    if (!last.is_constant() || last.value() < 1) continue;
    const std::int64_t features = last.value();
    // An optional scale, then an optional shift.
    std::optional<Tensor> scale, shift;
    NodeId mul_id, add_id;
    if (const Node* mul = sole_reader(edit, m->out, OpKind::Mul, mul_id)) {
      scale = other_side(edit, *mul, m->out, features, type.rank(), type.dtype);
      if (scale) {
        m->nodes.push_back(mul_id);
        m->out = mul->outputs[0];
        if (const Node* add = sole_reader(edit, m->out, OpKind::Add, add_id)) {
          shift = other_side(edit, *add, m->out, features, type.rank(), type.dtype);
          if (shift) {
            m->nodes.push_back(add_id);
            m->out = add->outputs[0];
          }
        }
      }
    }
    if (!scale) {
      scale = type.dtype == DType::F32
                  ? Tensor::from_vector<float>(std::vector<float>(static_cast<std::size_t>(features), 1.0f), {features})
                  : Tensor::from_vector<double>(std::vector<double>(static_cast<std::size_t>(features), 1.0), {features});
    }
    std::vector<ValueId> inputs{m->x, edit.add_constant("layer_norm_scale", std::move(*scale))};
    if (shift) inputs.push_back(edit.add_constant("layer_norm_shift", std::move(*shift)));
    Attributes attrs;
    attrs["axis"] = std::int64_t{-1};
    attrs["epsilon"] = m->epsilon;
    const std::string name = edit.unique_name("layer_norm");
    const NodeId ln = edit.add_node(OpKind::LayerNormalization, name, std::move(inputs), {name},
                                    {edit.graph().value(m->out).type}, std::move(attrs));
    const ValueId y = edit.graph().node(ln).outputs[0];
    if (!edit.can_replace(m->out, y)) {
      edit.remove_node(ln);
      continue;
    }
    ctx.details.push_back(node_label(edit.graph(), edit.graph().node(m->nodes.front())) + " .. " +
                          node_label(edit.graph(), edit.graph().node(m->nodes.back())) + " as one LayerNormalization");
    edit.replace(m->out, y);
    for (NodeId n : m->nodes) edit.remove_node(n);
    edit.count_change();
  }
}

}  // namespace canary::graph::passes
