// MatMul + Add -> Gemm: a MatMul of a 2-D input by a constant 2-D matrix whose
// result only an Add reads, with a constant bias of one value per column
// ([N] or [1, N]) on the Add's other side, is one Gemm with that bias as C.
// Kernels then add the bias in the product's epilogue instead of in a second
// pass over the result. Higher-rank MatMuls stay (Gemm is 2-D only).
#include "graph/passes/passes.h"

namespace canary::graph::passes {
namespace {

// True for a constant bias row of n columns in the graph's dtype.
bool is_bias_row(const Tensor* c, std::int64_t n, DType dtype) {
  if (c == nullptr || c->dtype() != dtype || c->numel() != n) return false;
  return c->rank() == 1 || (c->rank() == 2 && c->dim(0) == 1);
}

}  // namespace

void fuse_matmul_add(PassContext& ctx) {
  GraphEdit& edit = ctx.edit;
  const std::size_t count = edit.graph().nodes().size();
  for (std::uint32_t i = 0; i < count; ++i) {
    const NodeId add_id{i};
    if (edit.removed(add_id) || edit.graph().node(add_id).op != OpKind::Add) continue;
    const Node add = edit.graph().node(add_id);
    for (int side = 0; side < 2; ++side) {
      const ValueId y = edit.current(add.inputs[side]);
      const ValueId bias = edit.current(add.inputs[1 - side]);
      const NodeId mm_id = edit.producer(y);
      if (!mm_id.valid() || edit.removed(mm_id) || edit.uses(y) != 1 || edit.is_graph_output(y)) continue;
      Node& mm = edit.graph().node(mm_id);
      if (mm.op != OpKind::MatMul) continue;
      const ValueType& a = edit.graph().value(mm.inputs[0]).type;
      const Tensor* w = edit.constant(mm.inputs[1]);
      const ValueType& out = edit.graph().value(add.outputs[0]).type;
      if (a.rank() != 2 || w == nullptr || w->rank() != 2 || out.rank() != 2) continue;
      if (!(out.shape[0] == edit.graph().value(y).type.shape[0]) || !(out.shape[1] == Dim(w->dim(1)))) continue;
      if (!is_bias_row(edit.constant(bias), w->dim(1), a.dtype) || !edit.can_replace(add.outputs[0], y)) continue;
      ctx.details.push_back(node_label(edit.graph(), mm) + " and " + node_label(edit.graph(), add) + " as one Gemm");
      mm.op = OpKind::Gemm;
      mm.attrs.clear();
      edit.set_input(mm_id, 2, bias);
      edit.replace(add.outputs[0], y);
      edit.remove_node(add_id);
      edit.count_change();
      break;
    }
  }
}

}  // namespace canary::graph::passes
