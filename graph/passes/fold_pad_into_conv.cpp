// Pad -> Conv as one Conv: a constant-mode Pad by zeros that only widens the
// spatial dims of a convolution's input becomes part of the Conv's own pads.
// Exporters write explicit Pads for causal and "same" 1-D convolutions
// (PyTorch's ConstantPad1d, F.pad before a Conv1d): without the fold every
// such layer copies its whole input once more and holds a second buffer of
// it. The Conv reads the zeros it would have read from the copy, so every
// output is the same sum of the same products.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/passes/passes.h"

namespace canary::graph::passes {
namespace {

// The pads of a Pad node whose mode is constant and whose value is zero (or
// absent), when they are constants: [begins..., ends...], else empty.
std::vector<std::int64_t> zero_pads(const GraphEdit& edit, const Node& pad) {
  if (auto mode = pad.attrs.find("mode"); mode != pad.attrs.end() && std::get<std::string>(mode->second) != "constant")
    return {};
  if (pad.inputs.size() > 3) return {};  // opset 18 axes: not folded
  if (pad.inputs.size() > 2 && pad.inputs[2].valid()) {
    const Tensor* value = edit.constant(pad.inputs[2]);
    if (value == nullptr || value->numel() != 1 || value->dtype() != DType::F32 || value->data<float>()[0] != 0.0f)
      return {};
  }
  const Tensor* pads = pad.inputs.size() > 1 ? edit.constant(pad.inputs[1]) : nullptr;
  if (pads == nullptr || pads->dtype() != DType::I64 || pads->rank() != 1) return {};
  return std::vector<std::int64_t>(pads->data<std::int64_t>(), pads->data<std::int64_t>() + pads->numel());
}

// True when node reads `v` only as its input X and pads explicitly (auto_pad NOTSET).
bool conv_reads_as_input(const Node& node, ValueId v) {
  if (node.op != OpKind::Conv || node.inputs.empty() || node.inputs[0] != v) return false;
  for (std::size_t i = 1; i < node.inputs.size(); ++i)
    if (node.inputs[i] == v) return false;
  if (auto it = node.attrs.find("channels_last"); it != node.attrs.end() && std::get<std::int64_t>(it->second))
    return false;
  const auto auto_pad = node.attrs.find("auto_pad");
  return auto_pad == node.attrs.end() || std::get<std::string>(auto_pad->second) == "NOTSET";
}

// The Conv's pads with the Pad's spatial pads added ([begins..., ends...] of
// `spatial` dims each); empty when the Conv's own pads are malformed.
std::vector<std::int64_t> merged_pads(const Node& conv, const std::vector<std::int64_t>& pad, int rank) {
  const std::size_t spatial = static_cast<std::size_t>(rank - 2);
  std::vector<std::int64_t> pads(2 * spatial, 0);
  if (auto it = conv.attrs.find("pads"); it != conv.attrs.end()) {
    pads = std::get<std::vector<std::int64_t>>(it->second);
    if (pads.size() != 2 * spatial) return {};
  }
  for (std::size_t k = 0; k < spatial; ++k) {
    pads[k] += pad[k + 2];
    pads[k + spatial] += pad[k + 2 + static_cast<std::size_t>(rank)];
  }
  return pads;
}

}  // namespace

void fold_pad_into_conv(PassContext& ctx) {
  GraphEdit& edit = ctx.edit;
  const std::size_t count = edit.graph().nodes().size();
  for (std::uint32_t i = 0; i < count; ++i) {
    const NodeId pad_id{i};
    if (edit.removed(pad_id) || edit.graph().node(pad_id).op != OpKind::Pad) continue;
    const Node pad = edit.graph().node(pad_id);
    const ValueId x = edit.current(pad.inputs[0]), y = pad.outputs[0];
    const ValueType& type = edit.graph().value(y).type;
    const int rank = type.rank();
    const std::vector<std::int64_t> pads = zero_pads(edit, pad);
    if (rank < 3 || type.dtype != DType::F32 || static_cast<int>(pads.size()) != 2 * rank) continue;
    // Batch and channel dims stay; spatial pads only widen (a negative one crops).
    bool foldable = pads[0] == 0 && pads[1] == 0 && pads[static_cast<std::size_t>(rank)] == 0 &&
                    pads[static_cast<std::size_t>(rank) + 1] == 0;
    for (std::int64_t p : pads) foldable = foldable && p >= 0;
    if (!foldable || edit.is_graph_output(y)) continue;
    const std::vector<NodeId> readers = edit.readers(y);
    if (readers.empty() || static_cast<int>(readers.size()) != edit.uses(y)) continue;
    bool all_convs = true;
    for (NodeId r : readers) all_convs = all_convs && !edit.removed(r) && conv_reads_as_input(edit.graph().node(r), y);
    if (!all_convs) continue;
    std::vector<std::vector<std::int64_t>> merged;
    for (NodeId r : readers) merged.push_back(merged_pads(edit.graph().node(r), pads, rank));
    bool merged_ok = true;
    for (const auto& m : merged) merged_ok = merged_ok && !m.empty();
    if (!merged_ok) continue;
    for (std::size_t k = 0; k < readers.size(); ++k) {
      Node& conv = edit.graph().node(readers[k]);
      conv.attrs["pads"] = merged[k];
      edit.set_input(readers[k], 0, x);
      ctx.details.push_back(node_label(edit.graph(), pad) + " into the pads of " + node_label(edit.graph(), conv));
    }
    edit.remove_node(pad_id);
    edit.count_change();
  }
}

}  // namespace canary::graph::passes
