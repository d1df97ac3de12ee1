// BatchNormalization folding. In inference BatchNormalization is an affine
// map per channel c: y = x * s[c] + t[c] with s = scale / sqrt(var + eps) and
// t = B - mean * s. So:
//   - after a Conv (weights [M, C/g, k...], channel = output map M) or a Gemm
//     (output [M, N], channel = column N) whose result only the BN reads, and
//     whose weights and bias are constants, it is folded into them:
//     W'[m, ...] = W[m, ...] * s[m], bias' = bias * s + t;
//   - anywhere else, with a static channel count, it becomes Mul by s and Add
//     of t, shaped [C, 1, ...] to broadcast over the spatial dims, which the
//     JIT fuses with the elementwise ops around it.
// s and t are computed in double and each folded number rounded once to the
// graph's dtype, so a result differs from the unfolded graph's by rounding
// only (docs/graph-passes.md measures it against the fp64 reference).
#include "graph/passes/passes.h"

#include <cmath>

namespace canary::graph::passes {
namespace {

// The per-channel affine map of one BatchNormalization.
struct ChannelAffine {
  std::vector<double> scale, shift;
};

// s and t of a BN whose four parameters are constants of one dtype; nullopt otherwise.
std::optional<ChannelAffine> channel_affine(const GraphEdit& edit, const Node& bn) {
  const Tensor* p[4];
  for (int i = 0; i < 4; ++i) {
    p[i] = edit.constant(bn.inputs[1 + i]);
    if (p[i] == nullptr || p[i]->rank() != 1 || p[i]->numel() != p[0]->numel()) return std::nullopt;
  }
  double epsilon = 1e-5;
  if (auto it = bn.attrs.find("epsilon"); it != bn.attrs.end()) epsilon = std::get<double>(it->second);
  ChannelAffine a;
  for (std::int64_t c = 0; c < p[0]->numel(); ++c) {
    const double s = p[0]->element_as_double(c) / std::sqrt(p[3]->element_as_double(c) + epsilon);
    a.scale.push_back(s);
    a.shift.push_back(p[1]->element_as_double(c) - p[2]->element_as_double(c) * s);
  }
  return a;
}

// A tensor of `dtype` and `shape` holding `values` (rounded once when f32).
Tensor make_tensor(DType dtype, const Shape& shape, const std::vector<double>& values) {
  Tensor t = Tensor::empty(dtype, shape);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::F32)
      t.data<float>()[i] = static_cast<float>(values[i]);
    else
      t.data<double>()[i] = values[i];
  }
  return t;
}

std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> v(static_cast<std::size_t>(t.numel()));
  for (std::int64_t i = 0; i < t.numel(); ++i) v[i] = t.element_as_double(i);
  return v;
}

double float_attr(const Node& node, const char* name, double fallback) {
  auto it = node.attrs.find(name);
  return it == node.attrs.end() ? fallback : std::get<double>(it->second);
}

std::int64_t int_attr(const Node& node, const char* name, std::int64_t fallback) {
  auto it = node.attrs.find(name);
  return it == node.attrs.end() ? fallback : std::get<std::int64_t>(it->second);
}

bool is_float(const Tensor* t, DType dtype) { return t != nullptr && t->dtype() == dtype && (dtype == DType::F32 || dtype == DType::F64); }

// Points a Conv's or Gemm's weights (input 1) and bias (input 2) at new
// constants holding the folded values, named after the node.
void install_folded(GraphEdit& edit, NodeId id, const char* fallback, DType dtype, const Shape& w_shape,
                    const std::vector<double>& weights, const std::vector<double>& bias) {
  const std::string& name = edit.graph().node(id).name;
  const std::string base = name.empty() ? fallback : name;
  const Shape b_shape{static_cast<std::int64_t>(bias.size())};
  const ValueId new_w = edit.add_constant(base + "_bn_weight", make_tensor(dtype, w_shape, weights));
  const ValueId new_b = edit.add_constant(base + "_bn_bias", make_tensor(dtype, b_shape, bias));
  edit.set_input(id, 1, new_w);
  edit.set_input(id, 2, new_b);
}

// Folds into a Conv: scales each output map's weights and bias.
bool fold_into_conv(GraphEdit& edit, NodeId conv_id, const ChannelAffine& a, DType dtype) {
  const Node& conv = edit.graph().node(conv_id);
  const Tensor* w = edit.constant(conv.inputs[1]);
  const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2].valid();
  const Tensor* b = has_bias ? edit.constant(conv.inputs[2]) : nullptr;
  if (!is_float(w, dtype) || (has_bias && !is_float(b, dtype))) return false;
  const std::int64_t maps = static_cast<std::int64_t>(a.scale.size());
  if (w->rank() < 3 || w->dim(0) != maps) return false;
  std::vector<double> weights = as_doubles(*w);
  const std::int64_t per_map = w->numel() / maps;
  for (std::int64_t m = 0; m < maps; ++m)
    for (std::int64_t i = 0; i < per_map; ++i) weights[m * per_map + i] *= a.scale[m];
  std::vector<double> bias(maps);
  for (std::int64_t m = 0; m < maps; ++m) bias[m] = (b ? b->element_as_double(m) : 0.0) * a.scale[m] + a.shift[m];
  install_folded(edit, conv_id, "conv", dtype, Shape(w->shape()), weights, bias);
  return true;
}

// Folds into a Gemm y = alpha A op(B) + beta C: scales op(B)'s columns and
// makes C the folded bias row (beta 1).
bool fold_into_gemm(GraphEdit& edit, NodeId gemm_id, const ChannelAffine& a, DType dtype) {
  const Node& gemm = edit.graph().node(gemm_id);
  const Tensor* w = edit.constant(gemm.inputs[1]);
  const bool has_c = gemm.inputs.size() > 2 && gemm.inputs[2].valid();
  const Tensor* c = has_c ? edit.constant(gemm.inputs[2]) : nullptr;
  const std::int64_t n = static_cast<std::int64_t>(a.scale.size());
  if (!is_float(w, dtype) || w->rank() != 2 || (has_c && !is_float(c, dtype))) return false;
  const bool trans_b = int_attr(gemm, "transB", 0) != 0;
  if ((trans_b ? w->dim(0) : w->dim(1)) != n) return false;
  // C must be one value per column (or one value): [N], [1, N], [] or [1].
  if (c && !(c->numel() == 1 || (c->numel() == n && c->shape().back() == n))) return false;
  const double beta = float_attr(gemm, "beta", 1.0);
  std::vector<double> weights = as_doubles(*w);
  const std::int64_t k = w->numel() / n;
  for (std::int64_t col = 0; col < n; ++col)
    for (std::int64_t j = 0; j < k; ++j) weights[trans_b ? col * k + j : j * n + col] *= a.scale[col];
  std::vector<double> bias(n);
  for (std::int64_t col = 0; col < n; ++col) {
    const double cv = c ? c->element_as_double(c->numel() == 1 ? 0 : col) : 0.0;
    bias[col] = beta * cv * a.scale[col] + a.shift[col];
  }
  install_folded(edit, gemm_id, "gemm", dtype, Shape(w->shape()), weights, bias);
  edit.graph().node(gemm_id).attrs["beta"] = 1.0;
  return true;
}

// The Conv or Gemm that only this BN reads, or an invalid id.
NodeId foldable_producer(const GraphEdit& edit, ValueId x) {
  const NodeId p = edit.producer(x);
  if (!p.valid() || edit.removed(p) || edit.uses(x) != 1 || edit.is_graph_output(x)) return NodeId{};
  const OpKind op = edit.graph().node(p).op;
  if (op == OpKind::Conv) return p;
  if (op == OpKind::Gemm && edit.graph().value(x).type.rank() == 2) return p;
  return NodeId{};
}

// Replaces the BN by Mul and Add of [C, 1, ...] constants.
bool split_into_multiply_add(GraphEdit& edit, NodeId bn_id, const ChannelAffine& a, DType dtype) {
  const Node bn = edit.graph().node(bn_id);
  const ValueId x = edit.current(bn.inputs[0]);
  const ValueType type = edit.graph().value(bn.outputs[0]).type;
  if (type.rank() < 2) return false;
  Shape shape{static_cast<std::int64_t>(a.scale.size())};
  shape.resize(static_cast<std::size_t>(type.rank() - 1), 1);
  const std::string base = bn.name.empty() ? "batch_norm" : bn.name;
  const ValueId s = edit.add_constant(base + "_scale", make_tensor(dtype, shape, a.scale));
  const ValueId t = edit.add_constant(base + "_shift", make_tensor(dtype, shape, a.shift));
  const NodeId mul = edit.add_node(OpKind::Mul, base + "_scale", {x, s}, {base + "_scaled"}, {type});
  const ValueId scaled = edit.graph().node(mul).outputs[0];
  const NodeId add = edit.add_node(OpKind::Add, base + "_shift", {scaled, t}, {base + "_shifted"}, {type});
  const ValueId out = bn.outputs[0];
  const ValueId shifted = edit.graph().node(add).outputs[0];
  if (!edit.can_replace(out, shifted)) return false;
  edit.replace(out, shifted);
  return true;
}

}  // namespace

void fold_batch_norm(PassContext& ctx) {
  GraphEdit& edit = ctx.edit;
  const std::size_t count = edit.graph().nodes().size();
  for (std::uint32_t i = 0; i < count; ++i) {
    const NodeId n{i};
    if (edit.removed(n) || edit.graph().node(n).op != OpKind::BatchNormalization) continue;
    const Node bn = edit.graph().node(n);
    if (bn.outputs.size() > 1 && ((bn.outputs[1].valid() && edit.uses(bn.outputs[1]) > 0) ||
                                  (bn.outputs.size() > 2 && bn.outputs[2].valid() && edit.uses(bn.outputs[2]) > 0)))
      continue;
    const DType dtype = edit.graph().value(bn.outputs[0]).type.dtype;
    std::optional<ChannelAffine> a = channel_affine(edit, bn);
    if (!a || !is_float(edit.constant(bn.inputs[1]), dtype)) continue;
    const ValueId x = edit.current(bn.inputs[0]);
    const NodeId p = foldable_producer(edit, x);
    const std::string producer_name = p.valid() ? node_label(edit.graph(), edit.graph().node(p)) : std::string();
    const std::string bn_name = node_label(edit.graph(), bn);
    const bool into_conv = p.valid() && edit.graph().node(p).op == OpKind::Conv;
    if (p.valid() && (into_conv ? fold_into_conv(edit, p, *a, dtype) : fold_into_gemm(edit, p, *a, dtype))) {
      edit.replace(bn.outputs[0], x);
      ctx.details.push_back(bn_name + " folded into " + producer_name);
    } else if (split_into_multiply_add(edit, n, *a, dtype)) {
      ctx.details.push_back(bn_name + " as a per-channel multiply-add");
    } else {
      continue;
    }
    edit.remove_node(n);
    edit.count_change();
  }
}

}  // namespace canary::graph::passes
