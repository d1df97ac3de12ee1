// No-op removal: nodes whose output is their first input, value for value.
//
// Identity; Dropout (inference only: its mask output unread); Cast to the
// dtype the value already has; Reshape, Flatten, Squeeze, Unsqueeze and
// Expand whose inferred output shape is the input's shape, dim for dim
// (symbolic dims compare as expressions, so [N, 8] -> [N, 8] goes but a
// Reshape whose target only the run-time values could prove equal stays);
// Pad whose pads are a constant of zeros (torch writes one before every
// AveragePool; it would cut a channels-last chain).
// Readers of the output read the input instead; an output that is also a
// graph output keeps its name by moving it to the input, which is only
// possible when the input is some other node's output.
#include "graph/passes/passes.h"

namespace canary::graph::passes {
namespace {

// Same dtype and the same dims, structurally.
bool same_type(const ValueType& a, const ValueType& b) {
  if (a.dtype != b.dtype || a.shape.size() != b.shape.size()) return false;
  for (std::size_t i = 0; i < a.shape.size(); ++i)
    if (!(a.shape[i] == b.shape[i])) return false;
  return true;
}

// True when input `i` of node is a constant whose every element is zero.
bool constant_zeros(const GraphEdit& edit, const Node& node, std::size_t i) {
  if (node.inputs.size() <= i || !node.inputs[i].valid()) return false;
  const Tensor* t = edit.constant(node.inputs[i]);
  if (t == nullptr) return false;
  for (std::int64_t k = 0; k < t->numel(); ++k)
    if (t->element_as_double(k) != 0.0) return false;
  return true;
}

// Why a node passes its first input through unchanged, or nullptr.
const char* no_op_reason(const GraphEdit& edit, const Node& node) {
  if (node.inputs.empty() || !node.inputs[0].valid() || node.outputs.empty() || !node.outputs[0].valid())
    return nullptr;
  const ValueType& in = edit.graph().value(node.inputs[0]).type;
  const ValueType& out = edit.graph().value(node.outputs[0]).type;
  switch (node.op) {
    case OpKind::Identity: return "Identity";
    case OpKind::Dropout:
      if (node.outputs.size() > 1 && node.outputs[1].valid() && edit.uses(node.outputs[1]) > 0) return nullptr;
      return "inference Dropout";
    case OpKind::Cast: return same_type(in, out) ? "Cast to the same dtype" : nullptr;
    case OpKind::Reshape:
    case OpKind::Flatten:
    case OpKind::Squeeze:
    case OpKind::Unsqueeze:
    case OpKind::Expand: return same_type(in, out) ? "keeps the shape" : nullptr;
    case OpKind::Pad: return same_type(in, out) && constant_zeros(edit, node, 1) ? "pads nothing" : nullptr;
    default: return nullptr;
  }
}

}  // namespace

void remove_no_ops(PassContext& ctx) {
  GraphEdit& edit = ctx.edit;
  const std::size_t count = edit.graph().nodes().size();
  for (std::uint32_t i = 0; i < count; ++i) {
    const NodeId n{i};
    if (edit.removed(n)) continue;
    const Node& node = edit.graph().node(n);
    const char* reason = no_op_reason(edit, node);
    if (reason == nullptr) continue;
    const ValueId in = edit.current(node.inputs[0]);
    const ValueId out = node.outputs[0];
    if (!edit.can_replace(out, in)) continue;
    edit.replace(out, in);
    edit.remove_node(n);
    edit.count_change();
    ctx.details.push_back(node_label(edit.graph(), node) + " (" + std::string(op_name(node.op)) + "): " + reason);
  }
}

}  // namespace canary::graph::passes
