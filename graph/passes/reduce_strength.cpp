// Strength reduction: Pow(x, 2) with a constant exponent of exactly 2 (any
// shape of constant that does not broadcast x up) becomes Mul(x, x).
//
// Exporters write a variance or a LayerNorm as Pow(x - mean, 2): a libm
// powf per element, which no tier vectorises and the JIT cannot fuse (it
// took 39% of a TransformerEncoder call). x * x is the correctly rounded
// square, which pow's result is too (NaN, infinities and signed zeros
// included), so the values do not change, and Mul fuses with its
// neighbours.
#include "graph/passes/passes.h"

namespace canary::graph::passes {
namespace {

// True when every element of c is 2 and c broadcasts into x's type without
// growing it (its rank is at most x's and every dim is 1).
bool is_exponent_two(const Tensor* c, const ValueType& x) {
  if (c == nullptr || c->dtype() != x.dtype || c->numel() < 1 || c->rank() > x.rank()) return false;
  for (std::int64_t d : c->shape())
    if (d != 1) return false;
  return c->element_as_double(0) == 2.0;
}

}  // namespace

void reduce_strength(PassContext& ctx) {
  GraphEdit& edit = ctx.edit;
  const std::size_t count = edit.graph().nodes().size();
  for (std::uint32_t i = 0; i < count; ++i) {
    const NodeId id{i};
    if (edit.removed(id) || edit.graph().node(id).op != OpKind::Pow) continue;
    Node& pow = edit.graph().node(id);
    const ValueId x = edit.current(pow.inputs[0]);
    const ValueType& type = edit.graph().value(x).type;
    if (type.dtype != DType::F32 && type.dtype != DType::F64) continue;
    if (!is_exponent_two(edit.constant(pow.inputs[1]), type)) continue;
    ctx.details.push_back(node_label(edit.graph(), pow) + " (Pow by 2) as Mul(x, x)");
    pow.op = OpKind::Mul;
    edit.set_input(id, 1, x);
    edit.count_change();
  }
}

}  // namespace canary::graph::passes
