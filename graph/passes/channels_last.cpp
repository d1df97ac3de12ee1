// Channels-last layout through convolution chains.
//
// oneDNN's direct convolution kernels read and write [N, H, W, C]; on the
// model's [N, C, H, W] tensors every Conv pays two reorders, which on
// MobileNet- and ResNet-like nets cost as much as the convolutions. 1-D
// convolutions ([N, C, T], temporal nets) pay the same as the transposes of
// their tiled path. This pass gives every 1-D and 2-D f32 Conv a
// channels-last twin (the Conv with channels_last = 1, fed by a Transpose to
// [N, T, C] or [N, H, W, C]) and then carries the layout forward through the
// ops that do not care where the channel axis is: unary elementwise ops,
// binary ones whose other operand is a twin, a scalar or a per-channel
// constant, MaxPool/AveragePool (channels_last = 1), GlobalAveragePool (a
// ReduceMean over the spatial axes), ReduceMean/ReduceSum/ReduceMax over the
// spatial axes (a [N, C] result needs no transpose back), Concat along
// channels and Gather along a spatial axis (a TCN's last time step).
// Every converted value also gets a Transpose back to [N, C, H, W] for the
// readers that stay channels-first; the rebuild drops the ones nobody reads,
// so transposes remain only at the edges of each region. Like ONNX Runtime's
// NCHWc transformer, with oneDNN's own channels-last layout instead of a
// blocked one (channel counts need no padding).
#include "graph/passes/passes.h"

#include <algorithm>
#include <map>

namespace canary::graph::passes {
namespace {

// [N, C, spatial...] -> [N, spatial..., C], and back.
std::vector<std::int64_t> to_last_perm(std::size_t rank) {
  std::vector<std::int64_t> perm{0};
  for (std::size_t d = 2; d < rank; ++d) perm.push_back(static_cast<std::int64_t>(d));
  perm.push_back(1);
  return perm;
}
std::vector<std::int64_t> to_first_perm(std::size_t rank) {
  std::vector<std::int64_t> perm{0, static_cast<std::int64_t>(rank) - 1};
  for (std::size_t d = 1; d + 1 < rank; ++d) perm.push_back(static_cast<std::int64_t>(d));
  return perm;
}

// The layouts the pass converts: f32 [N, C, T] and [N, C, H, W].
bool is_f32_spatial(const ValueType& t) { return t.dtype == DType::F32 && (t.rank() == 3 || t.rank() == 4); }

// The spatial axes of a rank-r channels-first tensor, and where they go channels-last.
std::vector<std::int64_t> spatial_axes(std::size_t rank, std::int64_t first) {
  std::vector<std::int64_t> axes;
  for (std::size_t d = 2; d < rank; ++d) axes.push_back(static_cast<std::int64_t>(d) - 2 + first);
  return axes;
}

ValueType permuted(const ValueType& t, const std::vector<std::int64_t>& perm) {
  ValueType out{t.dtype, {}};
  for (std::int64_t p : perm) out.shape.push_back(t.shape[static_cast<std::size_t>(p)]);
  return out;
}

// One value in, one value out, element by element: any layout will do.
bool is_layout_free_unary(OpKind op) { return is_unary_elementwise(op) || op == OpKind::Clip || op == OpKind::Gelu; }

bool is_spatial_reduce(OpKind op) {
  return op == OpKind::ReduceMean || op == OpKind::ReduceSum || op == OpKind::ReduceMax;
}

bool is_binary_elementwise(OpKind op) {
  return op == OpKind::Add || op == OpKind::Sub || op == OpKind::Mul || op == OpKind::Div || op == OpKind::Max ||
         op == OpKind::Min || op == OpKind::PRelu;
}

class ChannelsLast {
 public:
  explicit ChannelsLast(PassContext& ctx) : ctx_(ctx), edit_(ctx.edit) {}

  void run() {
    const std::size_t count = edit_.graph().nodes().size();
    for (std::uint32_t i = 0; i < count; ++i) {
      const NodeId n{i};
      if (edit_.removed(n)) continue;
      const Node node = edit_.graph().node(n);  // a copy: adding nodes moves the table
      if (node.outputs.empty() || !node.outputs[0].valid()) continue;
      if (convert(node)) {
        edit_.remove_node(n);
        edit_.count_change();
      }
    }
    if (converted_ > 0)
      ctx_.details.push_back(std::to_string(converted_) + " ops channels-last, " + std::to_string(convs_) +
                             " of them Conv");
  }

 private:
  // Converts one node when its op and inputs allow; true when it did.
  bool convert(const Node& node) {
    const ValueType& out = edit_.graph().value(node.outputs[0]).type;
    if (node.op == OpKind::Conv) return convert_conv(node);
    if (is_spatial_reduce(node.op)) return convert_spatial_reduce(node);
    if (node.op == OpKind::Gather) return convert_gather(node);
    if (!is_f32_spatial(out) && node.op != OpKind::GlobalAveragePool) return false;
    if (is_layout_free_unary(node.op)) return convert_unary(node);
    if (is_binary_elementwise(node.op) && node.inputs.size() == 2) return convert_binary(node);
    if (node.op == OpKind::MaxPool || node.op == OpKind::AveragePool) return convert_pool(node);
    if (node.op == OpKind::GlobalAveragePool) return convert_global_pool(node);
    if (node.op == OpKind::Concat) return convert_concat(node);
    return false;
  }

  // The channels-last twin of v, if it has one.
  ValueId twin(ValueId v) const {
    auto it = twins_.find(edit_.current(v).index);
    return it == twins_.end() ? ValueId::none() : it->second;
  }

  // v's twin, made by a Transpose when v has none yet.
  ValueId to_last(ValueId v) {
    if (ValueId t = twin(v); t.valid()) return t;
    const ValueId from = edit_.current(v);
    const ValueInfo& info = edit_.graph().value(from);
    const ValueType type = permuted(info.type, to_last_perm(info.type.rank()));
    const std::string name = info.name + "_to_channels_last";
    const NodeId n =
        edit_.add_node(OpKind::Transpose, name, {from}, {name}, {type}, {{"perm", to_last_perm(info.type.rank())}});
    const ValueId t = edit_.graph().node(n).outputs[0];
    twins_[from.index] = t;
    return t;
  }

  // Adds the channels-last version of `node` (same op unless `op` says
  // otherwise) and the Transpose back that its old readers read instead.
  // A spatial reduction's [N, C, 1, 1] is [N, 1, 1, C] channels-last; its
  // [N, C] (keepdims = 0), like a Gather's of one time step, is the same in
  // both layouts and needs no transpose.
  bool emit(const Node& node, std::vector<ValueId> inputs, Attributes attrs, OpKind op) {
    const ValueId y = node.outputs[0];
    const ValueInfo& info = edit_.graph().value(y);
    const ValueType first_type = info.type;
    if (first_type.rank() == 2) return emit_same_layout(node, std::move(inputs), std::move(attrs), op);
    const ValueType last_type = permuted(first_type, to_last_perm(first_type.rank()));
    const std::string base = info.name;
    const NodeId converted = edit_.add_node(op, node.name, std::move(inputs), {base + "_channels_last"},
                                            {last_type}, std::move(attrs));
    const ValueId yl = edit_.graph().node(converted).outputs[0];
    const std::string back_name = base + "_to_channels_first";
    const NodeId back = edit_.add_node(OpKind::Transpose, back_name, {yl}, {back_name}, {first_type},
                                       {{"perm", to_first_perm(first_type.rank())}});
    const ValueId yf = edit_.graph().node(back).outputs[0];
    if (!edit_.can_replace(y, yf)) return false;
    edit_.replace(y, yf);
    twins_[yf.index] = yl;
    ++converted_;
    return true;
  }

  // Adds the channels-last version of a node whose result has no channel
  // layout ([N, C]); its readers read it in place of the old result.
  bool emit_same_layout(const Node& node, std::vector<ValueId> inputs, Attributes attrs, OpKind op) {
    const ValueId y = node.outputs[0];
    const ValueInfo& info = edit_.graph().value(y);
    const NodeId converted = edit_.add_node(op, node.name, std::move(inputs), {info.name + "_from_channels_last"},
                                            {info.type}, std::move(attrs));
    const ValueId yc = edit_.graph().node(converted).outputs[0];
    if (!edit_.can_replace(y, yc)) return false;
    edit_.replace(y, yc);
    ++converted_;
    return true;
  }

  bool convert_conv(const Node& node) {
    const ValueType& x = edit_.graph().value(node.inputs[0]).type;
    const Tensor* w = edit_.constant(node.inputs[1]);
    if (!is_f32_spatial(x) || w == nullptr || w->rank() != x.rank()) return false;
    if (auto it = node.attrs.find("channels_last"); it != node.attrs.end() && std::get<std::int64_t>(it->second))
      return false;
    std::vector<ValueId> inputs = node.inputs;
    inputs[0] = to_last(node.inputs[0]);
    Attributes attrs = node.attrs;
    attrs["channels_last"] = std::int64_t{1};
    if (!emit(node, std::move(inputs), std::move(attrs), OpKind::Conv)) return false;
    ++convs_;
    return true;
  }

  bool convert_unary(const Node& node) {
    const ValueId t = twin(node.inputs[0]);
    if (!t.valid()) return false;
    for (std::size_t i = 1; i < node.inputs.size(); ++i)  // Clip's bounds: scalars
      if (node.inputs[i].valid() && edit_.graph().value(edit_.current(node.inputs[i])).type.rank() > 0) return false;
    std::vector<ValueId> inputs = node.inputs;
    inputs[0] = t;
    return emit(node, std::move(inputs), node.attrs, node.op);
  }

  // A constant operand in the channels-last layout of a rank-r result: a
  // single value as it is, a per-channel vector ([C, 1...] or [1, C, 1...],
  // r - 2 trailing ones) as [C]; none otherwise.
  ValueId constant_operand(ValueId v, std::int64_t channels, std::size_t rank) {
    const Tensor* c = edit_.constant(v);
    if (c == nullptr) return ValueId::none();
    if (c->numel() == 1) return edit_.current(v);
    const Shape& s = c->shape();
    if (c->numel() != channels || s.size() + 1 < rank || s.size() > rank) return ValueId::none();
    const std::size_t channel_axis = s.size() - (rank - 1);
    for (std::size_t d = 0; d < s.size(); ++d)
      if (s[d] != (d == channel_axis ? channels : 1)) return ValueId::none();
    auto it = vectors_.find(edit_.current(v).index);
    if (it != vectors_.end()) return it->second;
    const ValueId vec = edit_.add_constant(edit_.graph().value(edit_.current(v)).name + "_channels_last",
                                           c->reshaped(std::vector<std::int64_t>{channels}));
    vectors_[edit_.current(v).index] = vec;
    return vec;
  }

  bool convert_binary(const Node& node) {
    const ValueType& out = edit_.graph().value(node.outputs[0]).type;
    const Dim& c = out.shape[1];
    if (!c.is_constant()) return false;
    std::vector<ValueId> inputs;
    bool any_twin = false;
    for (ValueId v : node.inputs) {
      ValueId t = twin(v);
      any_twin = any_twin || t.valid();
      // A twin that broadcasts (a squeeze-excitation scale [N, C, 1, 1]
      // against [N, C, H, W]) has the output's rank (twins exist for ranks 3
      // and 4 only, and a binary op's result has its largest operand's rank),
      // and permuting every operand's dims alike permutes the broadcast
      // result's.
      if (t.valid() && edit_.graph().value(t).type.rank() != out.rank()) return false;
      if (!t.valid()) t = constant_operand(v, c.value(), out.rank());
      if (!t.valid()) return false;
      inputs.push_back(t);
    }
    if (!any_twin) return false;
    return emit(node, std::move(inputs), node.attrs, node.op);
  }

  bool convert_pool(const Node& node) {
    const ValueId t = twin(node.inputs[0]);
    if (!t.valid() || (node.outputs.size() > 1 && node.outputs[1].valid())) return false;
    Attributes attrs = node.attrs;
    attrs["channels_last"] = std::int64_t{1};
    return emit(node, {t}, std::move(attrs), node.op);
  }

  bool convert_global_pool(const Node& node) {
    const ValueId t = twin(node.inputs[0]);
    const std::size_t rank = edit_.graph().value(node.outputs[0]).type.rank();
    if (!t.valid() || rank != static_cast<std::size_t>(edit_.graph().value(t).type.rank())) return false;
    Attributes attrs{{"axes", spatial_axes(rank, 1)}, {"keepdims", std::int64_t{1}}};
    return emit(node, {t}, std::move(attrs), OpKind::ReduceMean);
  }

  // ReduceMean/ReduceSum/ReduceMax over exactly the spatial axes (axes from
  // the attribute: ReduceSum's axes input stays channels-first).
  bool convert_spatial_reduce(const Node& node) {
    const ValueId t = twin(node.inputs[0]);
    if (!t.valid() || node.inputs.size() != 1) return false;
    auto axes = node.attrs.find("axes");
    if (axes == node.attrs.end()) return false;
    const std::size_t rank = edit_.graph().value(t).type.rank();
    std::vector<std::int64_t> a = std::get<std::vector<std::int64_t>>(axes->second);
    for (std::int64_t& d : a) d = d < 0 ? d + static_cast<std::int64_t>(rank) : d;
    std::sort(a.begin(), a.end());
    if (a != spatial_axes(rank, 2)) return false;
    Attributes attrs = node.attrs;
    attrs["axes"] = spatial_axes(rank, 1);
    return emit(node, {t}, std::move(attrs), node.op);
  }

  bool convert_concat(const Node& node) {
    const std::int64_t rank = static_cast<std::int64_t>(edit_.graph().value(node.outputs[0]).type.rank());
    const std::int64_t axis = std::get<std::int64_t>(node.attrs.at("axis"));
    if (axis != 1 && axis != 1 - rank) return false;
    std::vector<ValueId> inputs;
    for (ValueId v : node.inputs) {
      const ValueId t = twin(v);
      if (!t.valid()) return false;
      inputs.push_back(t);
    }
    Attributes attrs = node.attrs;
    attrs["axis"] = rank - 1;
    return emit(node, std::move(inputs), std::move(attrs), OpKind::Concat);
  }

  // Gather along a spatial axis with indices of rank 0 or 1 (a TCN's last
  // time step, a window of steps): the same Gather one axis earlier. Its
  // result keeps the channel axis second channels-first and last here.
  bool convert_gather(const Node& node) {
    const ValueId t = twin(node.inputs[0]);
    if (!t.valid()) return false;
    const std::int64_t rank = static_cast<std::int64_t>(edit_.graph().value(t).type.rank());
    std::int64_t axis = std::get<std::int64_t>(node.attrs.at("axis"));
    axis = axis < 0 ? axis + rank : axis;
    const std::size_t indices_rank = edit_.graph().value(edit_.current(node.inputs[1])).type.rank();
    if (axis < 2 || axis >= rank || indices_rank > 1) return false;
    Attributes attrs = node.attrs;
    attrs["axis"] = axis - 1;
    return emit(node, {t, edit_.current(node.inputs[1])}, std::move(attrs), OpKind::Gather);
  }

  PassContext& ctx_;
  GraphEdit& edit_;
  std::map<std::uint32_t, ValueId> twins_;    // value (as readers see it) -> its channels-last twin
  std::map<std::uint32_t, ValueId> vectors_;  // per-channel constant -> its [C] form
  int converted_ = 0, convs_ = 0;
};

}  // namespace

void convert_to_channels_last(PassContext& ctx) { ChannelsLast(ctx).run(); }

}  // namespace canary::graph::passes
