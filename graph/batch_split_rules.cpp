// Batch-split rules: for each op family, how the categories of a node's
// inputs (the same in every slice, per-sample data with the batch on one axis,
// or an integer computed from the batch size) decide its outputs', and which
// nodes would mix samples or read the batch size. The driver (batch_split.cpp)
// calls categorise once per node, in order, and checks each output afterwards.
#include "graph/batch_split_rules.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "graph/op_registry.h"

namespace canary::graph::batch_rules {

// "node 'conv1' (Conv)"; an unnamed node is named by its first output.
std::string describe(const Graph& g, const Node& node) {
  const std::string op(op_name(node.op));
  if (!node.name.empty()) return "node '" + node.name + "' (" + op + ")";
  for (ValueId v : node.outputs)
    if (v.valid()) return "the node giving '" + g.value(v).name + "' (" + op + ")";
  return "a node (" + op + ")";
}

namespace {

// The rule families: which function decides an op's outputs.
enum class Family {
  Unary, Broadcast, PerSample, LayerNorm, Softmax, Reduce, ArgReduce, MatMul, Gemm, Transpose, Reshape, Flatten,
  Squeeze, Unsqueeze, Expand, ConstantOfShape, Concat, Split, Slice, Gather, Pad, Tile, Recurrent, Shape, Range,
  CumSum, Trilu, Subgraph, Unsupported
};

// The rule family of each op (a flat table: every op of op_kinds.def is listed).
Family family_of(OpKind op) {
  switch (op) {
#define CANARY_UNARY_OP(o, ...) case OpKind::o:
#include "runtime/core/unary_ops.def"
#undef CANARY_UNARY_OP
    case OpKind::Gelu: case OpKind::Clip: case OpKind::Not: case OpKind::Dropout: case OpKind::Cast:
    case OpKind::Identity: case OpKind::IsNaN: case OpKind::IsInf: return Family::Unary;
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Pow: case OpKind::Max:
    case OpKind::Min: case OpKind::Equal: case OpKind::Less: case OpKind::Greater: case OpKind::Where:
    case OpKind::And: case OpKind::Or: case OpKind::Xor: case OpKind::Mod: case OpKind::PRelu: case OpKind::Sum:
    case OpKind::Mean: return Family::Broadcast;
    case OpKind::Conv: case OpKind::ConvTranspose: case OpKind::MaxPool: case OpKind::AveragePool:
    case OpKind::GlobalAveragePool: case OpKind::BatchNormalization: case OpKind::LRN: return Family::PerSample;
    case OpKind::LayerNormalization: return Family::LayerNorm;
    // Hardmax, like Softmax (opset 13), looks along its one axis only.
    case OpKind::Softmax: case OpKind::LogSoftmax: case OpKind::Hardmax: return Family::Softmax;
    case OpKind::CumSum: return Family::CumSum;
    case OpKind::ReduceSum: case OpKind::ReduceMean: case OpKind::ReduceMax: case OpKind::ReduceMin:
    case OpKind::ReduceProd: case OpKind::ReduceL1: case OpKind::ReduceL2: case OpKind::ReduceSumSquare:
    case OpKind::ReduceLogSum: case OpKind::ReduceLogSumExp: return Family::Reduce;
    case OpKind::ArgMax: case OpKind::ArgMin: return Family::ArgReduce;
    case OpKind::MatMul: return Family::MatMul;
    case OpKind::Gemm: return Family::Gemm;
    case OpKind::Transpose: return Family::Transpose;
    case OpKind::Reshape: return Family::Reshape;
    case OpKind::Flatten: return Family::Flatten;
    case OpKind::Squeeze: return Family::Squeeze;
    case OpKind::Unsqueeze: return Family::Unsqueeze;
    case OpKind::Expand: return Family::Expand;
    case OpKind::ConstantOfShape: return Family::ConstantOfShape;
    case OpKind::Concat: return Family::Concat;
    case OpKind::Split: return Family::Split;
    case OpKind::Slice: return Family::Slice;
    case OpKind::Gather: return Family::Gather;
    // Their indices (and updates) carry the batch too; not split until a rule checks them all.
    case OpKind::GatherElements: case OpKind::GatherND: case OpKind::ScatterND: case OpKind::ScatterElements:
      return Family::Unsupported;
    // Resize's sizes or scales name the batch dim too.
    case OpKind::Resize: return Family::Unsupported;
    case OpKind::Pad: return Family::Pad;
    case OpKind::Tile: return Family::Tile;
    case OpKind::LSTM: case OpKind::GRU: case OpKind::RNN: return Family::Recurrent;
    case OpKind::Shape: return Family::Shape;
    // The element count of a batched value is the batch size times the
    // rest: a slice would count its own samples only, so it is not split.
    case OpKind::Size: return Family::Unsupported;
    case OpKind::Trilu: return Family::Trilu;
    // DepthToSpace and SpaceToDepth mix C, H and W, EyeLike's diagonal pairs
    // the two axes, and OneHot's depth and TopK's k are inputs that may come
    // from the batch: each keeps samples apart only when the batch is on an
    // axis it leaves alone, which no rule checks yet.
    case OpKind::DepthToSpace: case OpKind::SpaceToDepth: case OpKind::EyeLike: case OpKind::OneHot:
    case OpKind::TopK: return Family::Unsupported;
    case OpKind::Range: return Family::Range;
    case OpKind::Loop: case OpKind::If: case OpKind::Scan: return Family::Subgraph;
  }
  return Family::Unsupported;
}

// An attribute as given on the node, else the schema's default; nullptr when neither.
const AttrValue* find_attr(const Node& node, std::string_view name) {
  auto it = node.attrs.find(name);
  if (it != node.attrs.end()) return &it->second;
  for (const AttrSpec& spec : op_schema(node.op).attrs)
    if (spec.name == name && spec.default_value) return &*spec.default_value;
  return nullptr;
}

// The contents of a small integer tensor known at build time: an initializer's
// elements, or known dims that are all constants.
std::optional<std::vector<std::int64_t>> known_ints(const ValueInfo& v) {
  std::vector<std::int64_t> out;
  if (v.constant) {
    const Tensor& t = *v.constant;
    if (t.rank() > 1 || (t.dtype() != DType::I64 && t.dtype() != DType::I32)) return std::nullopt;
    for (std::int64_t k = 0; k < t.numel(); ++k)
      out.push_back(t.dtype() == DType::I64 ? t.data<std::int64_t>()[k] : t.data<std::int32_t>()[k]);
    return out;
  }
  if (!v.known_dims) return std::nullopt;
  for (const Dim& d : *v.known_dims) {
    if (!d.is_constant()) return std::nullopt;
    out.push_back(d.value());
  }
  return out;
}

// Whether a dim is the constant 1.
bool is_one(const Dim& d) { return d.is_constant() && d.value() == 1; }

// Whether an operand, right-aligned against an output of rank out_rank (NumPy
// broadcasting), has no dim or a 1 on output axis `axis`: then every slice
// meets the same elements of it.
bool broadcasts_on(const DimVector& shape, int out_rank, int axis) {
  const int p = axis - (out_rank - static_cast<int>(shape.size()));
  return p < 0 || is_one(shape[static_cast<std::size_t>(p)]);
}

}  // namespace

// --- NodeScope: input checks, build-time contents, attributes -------------

std::string NodeScope::input_text(int i) const {
  return "input " + std::to_string(i) + (has(i) ? " ('" + info(i).name + "')" : std::string(" (absent)"));
}

void NodeScope::expect_constant(int i) const {
  if (in(i).role == Role::Batched) reject("takes per-sample data as " + input_text(i) + ", which must be a constant");
  if (in(i).role == Role::ShapeValue) reject("depends on the batch size through " + input_text(i));
}

void NodeScope::expect_not_batched(int i) const {
  if (in(i).role == Role::Batched) reject("takes per-sample data as " + input_text(i) + ", which must be a shape");
}

int NodeScope::batch_axis(int i) const {
  if (in(i).role != Role::Batched) reject("needs per-sample data as " + input_text(i));
  return in(i).axis;
}

void NodeScope::expect_batched_on(int i, int axis, int like) const {
  if (!has(i)) return;
  if (in(i).role != Role::Batched || in(i).axis != axis)
    reject("needs " + input_text(i) + " absent or per-sample data batched on axis " + std::to_string(axis));
  expect_same_grouping(i, like);
}

void NodeScope::expect_same_grouping(int i, int j) const {
  const Category a = in(i), b = in(j);
  if (!same_dim(a.outer, b.outer) || !same_dim(a.inner, b.inner))
    reject("meets " + input_text(i) + " and " + input_text(j) +
           ", whose samples a Reshape grouped differently on the batch axis");
}

int NodeScope::output_batch_axis() const {
  const ValueInfo& v = out_info();
  std::vector<int> axes;
  for (int k = 0; k < v.type.rank(); ++k)
    if (batch_.is_batch(v.type.shape[static_cast<std::size_t>(k)])) axes.push_back(k);
  if (axes.size() == 1) return axes[0];
  const std::string head = "gives '" + v.name + "' " + v.type.to_string() + ", which has the batch " + batch_.name();
  if (axes.empty()) reject(head + " on no axis");
  std::string list;
  for (int k : axes) list += (list.empty() ? "" : ", ") + std::to_string(k);
  reject(head + " on several axes (" + list + ")");
}

std::vector<std::int64_t> NodeScope::ints(int i) const {
  std::optional<std::vector<std::int64_t>> v = known_ints(info(i));
  if (!v) reject("has " + input_text(i) + " with contents unknown at build time");
  return *v;
}

std::int64_t NodeScope::attr_int(std::string_view name) const {
  const AttrValue* v = find_attr(node_, name);
  if (v == nullptr || !std::holds_alternative<std::int64_t>(*v))
    reject("lacks the int attribute '" + std::string(name) + "'");
  return std::get<std::int64_t>(*v);
}

std::optional<std::vector<std::int64_t>> NodeScope::attr_ints(std::string_view name) const {
  const AttrValue* v = find_attr(node_, name);
  if (v == nullptr) return std::nullopt;
  if (!std::holds_alternative<std::vector<std::int64_t>>(*v))
    reject("has attribute '" + std::string(name) + "' of the wrong type");
  return std::get<std::vector<std::int64_t>>(*v);
}

int NodeScope::normalize(std::int64_t axis, int rank, std::string_view what) const {
  if (axis < -rank || axis >= rank)
    reject("has " + std::string(what) + " " + std::to_string(axis) + " out of range for rank " +
           std::to_string(rank));
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

namespace {

// --- rules: per-sample data in, categories of the outputs out -------------

// Dropout copies its input only in inference mode: training_mode absent or a
// constant false (random masks would differ between a whole call and slices).
void expect_inference_dropout(const NodeScope& s) {
  if (!s.has(2)) return;
  const ValueInfo& mode = s.info(2);
  if (mode.constant && mode.constant->dtype() == DType::Bool && mode.constant->numel() == 1 &&
      !mode.constant->data<bool>()[0])
    return;
  s.reject("may run in training mode: " + s.input_text(2) + " is not a constant false");
}

// Unary elementwise ops, Cast, Identity, Dropout: each element comes from the
// same element of input 0, so the batch stays on its axis. Parameters (Clip's
// bounds, Dropout's ratio) must be the same in every slice.
Categories rule_unary(const NodeScope& s) {
  for (int i = 1; i < s.num_inputs(); ++i) s.expect_constant(i);
  const int axis = s.batch_axis(0);
  if (s.op() == OpKind::Dropout) expect_inference_dropout(s);
  return s.all(s.in(0).on_axis(axis));
}

// The output category of a broadcasting op: operands align on the right, so
// axis a of a rank-k operand lands on a + out_rank - k, the same axis and
// grouping for every batched operand.
Category broadcast_landing(const NodeScope& s) {
  std::optional<int> landing, first;
  for (int i = 0; i < s.num_inputs(); ++i) {
    if (s.in(i).role == Role::ShapeValue) s.reject("depends on the batch size through " + s.input_text(i));
    if (s.in(i).role != Role::Batched) continue;
    const int l = s.in(i).axis + s.out_rank() - s.rank(i);
    if (landing && *landing != l)
      s.reject("puts the batch of its operands on different axes (" + std::to_string(*landing) + " and " +
               std::to_string(l) + ")");
    if (first) s.expect_same_grouping(i, *first);
    landing = l;
    if (!first) first = i;
  }
  return s.in(*first).on_axis(*landing);
}

// Elementwise ops with NumPy broadcasting. A constant operand must not reach
// the batch axis except with a 1 there, or one sample would meet another
// sample's constants.
Categories rule_broadcast(const NodeScope& s) {
  const Category out = broadcast_landing(s);
  const int landing = out.axis;
  for (int i = 0; i < s.num_inputs(); ++i) {
    if (!s.has(i) || s.in(i).role != Role::Constant) continue;
    if (!broadcasts_on(s.info(i).type.shape, s.out_rank(), landing))
      s.reject("broadcasts constant " + s.input_text(i) + " along the batch axis " + std::to_string(landing));
  }
  return s.all(out);
}

// Conv, ConvTranspose, pooling, BatchNormalization (inference), LRN (a
// window over the channels of one sample): each sample of axis 0 alone, with
// constant weights. A second output (MaxPool's Indices, which are flattened
// over the batch, or training statistics) is rejected.
Categories rule_per_sample(const NodeScope& s) {
  for (int i = 1; i < s.num_inputs(); ++i) s.expect_constant(i);
  const int axis = s.batch_axis(0);
  if (axis != 0)
    s.reject("needs the batch on axis 0 of " + s.input_text(0) + ", it is on axis " + std::to_string(axis));
  for (int o = 1; o < s.num_outputs(); ++o)
    if (s.has_output(o)) s.reject("has output " + std::to_string(o) + ", which mixes the samples");
  return s.all(s.in(0).on_axis(0));
}

// LayerNormalization normalises the axes from `axis` to the end; the batch
// must come before them. Mean and InvStdDev keep X's leading dims.
Categories rule_layer_norm(const NodeScope& s) {
  s.expect_constant(1);
  s.expect_constant(2);
  const int axis = s.batch_axis(0);
  const int from = s.normalize(s.attr_int("axis"), s.rank(0), "attribute 'axis'");
  if (axis >= from)
    s.reject("normalises axes " + std::to_string(from) + " to the end, which include the batch axis " +
             std::to_string(axis));
  return s.all(s.in(0).on_axis(axis));
}

// Softmax, LogSoftmax: opset-13 semantics (the importer takes opsets 13 to 17,
// so there is no coercion to 2-D): only the one axis is normalised.
Categories rule_softmax(const NodeScope& s) {
  const int axis = s.batch_axis(0);
  if (s.normalize(s.attr_int("axis"), s.rank(0), "attribute 'axis'") == axis)
    s.reject("normalises over the batch axis " + std::to_string(axis));
  return s.all(s.in(0).on_axis(axis));
}

// The output category of a reduction over `reduced` (normalised axes): the
// batch must survive, shifted down past dropped axes when keepdims is 0.
Category after_reduction(const NodeScope& s, int axis, const std::vector<int>& reduced) {
  if (std::find(reduced.begin(), reduced.end(), axis) != reduced.end())
    s.reject("reduces over the batch axis " + std::to_string(axis));
  if (s.attr_int("keepdims") != 0) return s.in(0).on_axis(axis);
  const auto before = std::count_if(reduced.begin(), reduced.end(), [&](int r) { return r < axis; });
  return s.in(0).on_axis(axis - static_cast<int>(before));
}

// The axes a reduction reduces: ReduceSum's axes input or the others' axes
// attribute; an empty list means all axes, except for ReduceSum with
// noop_with_empty_axes, which then reduces none.
std::vector<int> reduced_axes(const NodeScope& s) {
  const int rank = s.rank(0);
  std::vector<std::int64_t> given;
  if (s.op() == OpKind::ReduceSum) given = s.has(1) ? s.ints(1) : std::vector<std::int64_t>{};
  else given = s.attr_ints("axes").value_or(std::vector<std::int64_t>{});
  std::vector<int> axes;
  for (std::int64_t a : given) axes.push_back(s.normalize(a, rank, "reduction axis"));
  if (!given.empty() || (s.op() == OpKind::ReduceSum && s.attr_int("noop_with_empty_axes") != 0)) return axes;
  for (int k = 0; k < rank; ++k) axes.push_back(k);
  return axes;
}

// The ReduceX family.
Categories rule_reduce(const NodeScope& s) {
  s.expect_constant(1);
  const int axis = s.batch_axis(0);
  return s.all(after_reduction(s, axis, reduced_axes(s)));
}

// ArgMax, ArgMin: one reduced axis.
Categories rule_arg_reduce(const NodeScope& s) {
  const int axis = s.batch_axis(0);
  return s.all(after_reduction(s, axis, {s.normalize(s.attr_int("axis"), s.rank(0), "attribute 'axis'")}));
}

// MatMul's leading output dims: A [..., M, K] @ B [..., K, P] gives
// [lead..., M, P] with the leading dims broadcast right-aligned (a 1-D
// operand is promoted to 2-D and its added axis dropped, so it has none).
int matmul_lead(const NodeScope& s) { return std::max(std::max(s.rank(0), 2), std::max(s.rank(1), 2)) - 2; }

// Where operand i's batch axis lands in MatMul's output. A contracted axis (A's
// last, B's second to last, a vector's only one) would sum over samples; the
// batch on B's columns is rejected too, to keep the rule to leading dims and rows.
int matmul_landing(const NodeScope& s, int i, int lead) {
  const int rank = s.rank(i), axis = s.in(i).axis;
  if (axis < rank - 2) return axis + lead - (rank - 2);
  if (i == 0 && axis == rank - 2) return lead;
  if (i == 1 && rank >= 2 && axis == rank - 1) s.reject("has the batch on the column axis of " + s.input_text(1));
  s.reject("contracts the batch axis " + std::to_string(axis) + " of " + s.input_text(i));
}

// A constant MatMul operand must be 1 (or absent) on the leading output dim
// the batch lands on; rows and columns never meet the other operand's batch.
void expect_matmul_broadcast(const NodeScope& s, int i, int landing, int lead) {
  const int leading = std::max(s.rank(i), 2) - 2;
  if (landing >= lead || leading == 0) return;
  const DimVector leading_dims(s.info(i).type.shape.begin(), s.info(i).type.shape.begin() + leading);
  if (!broadcasts_on(leading_dims, lead, landing))
    s.reject("broadcasts constant " + s.input_text(i) + " along the batch axis " + std::to_string(landing));
}

// MatMul: each batched operand's batch lands on one output axis, the same for
// both when both are batched (attention's Q @ K^T on [N, H, T, d]).
Categories rule_matmul(const NodeScope& s) {
  const int lead = matmul_lead(s);
  std::optional<int> landing, first;
  for (int i : {0, 1}) {
    if (s.in(i).role == Role::ShapeValue) s.reject("depends on the batch size through " + s.input_text(i));
    if (s.in(i).role != Role::Batched) continue;
    const int l = matmul_landing(s, i, lead);
    if (landing && *landing != l)
      s.reject("puts the batch of its operands on different output axes (" + std::to_string(*landing) + " and " +
               std::to_string(l) + ")");
    if (first) s.expect_same_grouping(i, *first);
    landing = l;
    if (!first) first = i;
  }
  for (int i : {0, 1})
    if (s.in(i).role == Role::Constant) expect_matmul_broadcast(s, i, *landing, lead);
  return s.all(s.in(*first).on_axis(*landing));
}

// Gemm: A batched on its rows (axis 0, or axis 1 with transA), B and C constant;
// C must not vary along the rows.
Categories rule_gemm(const NodeScope& s) {
  s.expect_constant(1);
  s.expect_constant(2);
  const int rows = s.attr_int("transA") != 0 ? 1 : 0;
  if (s.batch_axis(0) != rows) s.reject("needs the batch on the row axis " + std::to_string(rows) + " of input 0");
  if (s.has(2) && !broadcasts_on(s.info(2).type.shape, 2, 0))
    s.reject("broadcasts constant " + s.input_text(2) + " along the batch axis 0");
  return s.all(s.in(0).on_axis(0));
}

// Transpose: the batch moves to its position in perm (reversed when absent).
Categories rule_transpose(const NodeScope& s) {
  const int axis = s.batch_axis(0), rank = s.rank(0);
  const std::optional<std::vector<std::int64_t>> perm = s.attr_ints("perm");
  if (perm && static_cast<int>(perm->size()) != rank) s.reject("has a perm of the wrong length");
  for (int k = 0; k < rank; ++k) {
    const int from = perm ? s.normalize((*perm)[static_cast<std::size_t>(k)], rank, "perm entry") : rank - 1 - k;
    if (from == axis) return s.all(s.in(0).on_axis(k));
  }
  s.reject("has a perm without the batch axis");
}

// The product of dims [from, to) of a shape.
Dim product(const DimVector& dims, std::size_t from, std::size_t to) {
  Dim p(1);
  for (std::size_t k = from; k < to; ++k) p = p * dims[k];
  return p;
}

// Reshape of per-sample data by a constant or batch-sized shape. In
// row-major order, with the batch on axis a grouped as outer * N * inner,
// sample n's elements lie at flat offsets (p * N + n) * S + q, where p runs
// over the P = dims[0, a) * outer entries before the batch and q over the
// S = inner * dims(a, rank) entries after it. The output keeps that
// structure on the one axis b whose dim involves the batch when the dims
// before b divide P and those after b divide S: b is then the batch grouped
// with outer P / dims[0, b) and inner S / dims(b, rank) (attention's heads
// split off the channels, [T, N, 64] to [T, 4*N, 16], and merged back,
// [T, 4*N, 4] to [T*N, 16]). Anything else (N itself split, or [T, N, C]
// read as [N, T, C], which is not a transpose) would scatter samples, so
// is rejected; check_output confirms b's dim.
Categories rule_reshape(const NodeScope& s) {
  s.expect_not_batched(1);
  const int axis = s.batch_axis(0);
  const Category from = s.in(0);
  const DimVector& in = s.info(0).type.shape;
  const ValueType& out = s.out_info().type;
  const std::size_t a = static_cast<std::size_t>(axis);
  const Dim before = s.symbols().canonical(from.outer * product(in, 0, a));
  const Dim after = s.symbols().canonical(from.inner * product(in, a + 1, in.size()));
  std::optional<std::size_t> b;
  for (std::size_t k = 0; k < out.shape.size(); ++k) {
    if (!s.batch().mentions(out.shape[k])) continue;
    if (b) s.reject("reshapes data batched on axis " + std::to_string(axis) + " into " + out.to_string() +
                    ", which involves the batch size on several axes");
    b = k;
  }
  if (!b) s.reject("reshapes data batched on axis " + std::to_string(axis) + " into " + out.to_string() +
                   ", which has the batch on no axis");
  const std::optional<Dim> outer = exact_quotient(before, s.symbols().canonical(product(out.shape, 0, *b)));
  const std::optional<Dim> inner =
      exact_quotient(after, s.symbols().canonical(product(out.shape, *b + 1, out.shape.size())));
  Category to = Category::batched(static_cast<int>(*b));
  if (outer && inner) {
    to.outer = *outer;
    to.inner = *inner;
  }
  if (!outer || !inner || !s.batch().is_grouped_batch(out.shape[*b], to))
    s.reject("reshapes data batched on axis " + std::to_string(axis) + " (" + s.info(0).type.to_string() +
             ") into " + out.to_string() + ", which does not keep each sample's elements together on one axis");
  return s.all(to);
}

// Flatten at axis >= 1 of data batched on axis 0: dim 0 becomes the product of
// the dims before `axis`, the batch grouped with those after it.
Categories rule_flatten(const NodeScope& s) {
  const int axis = s.batch_axis(0);
  const std::int64_t at = s.attr_int("axis");
  const std::int64_t to = at < 0 ? at + s.rank(0) : at;
  if (axis != 0 || to < 1) s.reject("flattens the batch axis " + std::to_string(axis) + " into another");
  Category c = s.in(0);
  c.inner = s.symbols().canonical(c.inner * product(s.info(0).type.shape, 1, static_cast<std::size_t>(to)));
  return s.all(c);
}

// Squeeze: the batch shifts down past removed axes; removing it is rejected.
Categories rule_squeeze(const NodeScope& s) {
  s.expect_constant(1);
  const int axis = s.batch_axis(0), rank = s.rank(0);
  std::vector<int> removed;
  if (s.has(1)) {
    for (std::int64_t a : s.ints(1)) removed.push_back(s.normalize(a, rank, "squeeze axis"));
  } else {
    for (int k = 0; k < rank; ++k)
      if (is_one(s.info(0).type.shape[static_cast<std::size_t>(k)])) removed.push_back(k);
  }
  if (std::find(removed.begin(), removed.end(), axis) != removed.end()) s.reject("removes the batch axis");
  const auto before = std::count_if(removed.begin(), removed.end(), [&](int r) { return r < axis; });
  return s.all(s.in(0).on_axis(axis - static_cast<int>(before)));
}

// Unsqueeze: the batch moves to the output position of its input axis.
Categories rule_unsqueeze(const NodeScope& s) {
  s.expect_constant(1);
  const int axis = s.batch_axis(0);
  const std::vector<std::int64_t> given = s.ints(1);
  const int rank = s.rank(0) + static_cast<int>(given.size());
  std::vector<int> inserted;
  for (std::int64_t a : given) inserted.push_back(s.normalize(a, rank, "unsqueeze axis"));
  for (int k = 0, next = 0; k < rank; ++k) {
    if (std::find(inserted.begin(), inserted.end(), k) != inserted.end()) continue;
    if (next++ == axis) return s.all(s.in(0).on_axis(k));
  }
  s.reject("has unsqueeze axes that leave no place for the batch");
}

// Expand of per-sample data: the batch lands right-aligned; check_output
// requires the output dim there to stay the batch (a shape entry of 1 or N).
Categories rule_expand(const NodeScope& s) {
  s.expect_not_batched(1);
  const int axis = s.batch_axis(0);
  return s.all(s.in(0).on_axis(axis + s.out_rank() - s.rank(0)));
}

// Concat of per-sample operands, all batched on one axis, along another axis.
// A constant operand has no samples to pair with the others' (its dim on the
// batch axis would be fixed), so mixing one in is rejected.
Categories rule_concat(const NodeScope& s) {
  std::optional<int> batch;
  for (int i = 0; i < s.num_inputs(); ++i) {
    if (s.in(i).role != Role::Batched)
      s.reject("concatenates " + s.input_text(i) + ", which is not per-sample data, with per-sample data");
    if (batch && *batch != s.in(i).axis) s.reject("concatenates operands batched on different axes");
    if (batch) s.expect_same_grouping(i, 0);
    batch = s.in(i).axis;
  }
  if (s.normalize(s.attr_int("axis"), s.out_rank(), "attribute 'axis'") == *batch)
    s.reject("concatenates along the batch axis " + std::to_string(*batch));
  return s.all(s.in(0).on_axis(*batch));
}

// Split along an axis other than the batch, with constant sizes.
Categories rule_split(const NodeScope& s) {
  s.expect_constant(1);
  const int axis = s.batch_axis(0);
  if (s.normalize(s.attr_int("axis"), s.rank(0), "attribute 'axis'") == axis)
    s.reject("splits along the batch axis " + std::to_string(axis));
  return s.all(s.in(0).on_axis(axis));
}

// The axes a Slice slices: its axes input, else the first len(starts) axes.
std::vector<int> sliced_axes(const NodeScope& s) {
  const int rank = s.rank(0);
  std::vector<int> axes;
  if (s.has(3)) {
    for (std::int64_t a : s.ints(3)) axes.push_back(s.normalize(a, rank, "slice axis"));
    return axes;
  }
  const DimVector& starts = s.info(1).type.shape;
  if (starts.size() != 1 || !starts[0].is_constant()) s.reject("slices an unknown number of leading axes");
  for (int k = 0; k < std::min<std::int64_t>(starts[0].value(), rank); ++k) axes.push_back(k);
  return axes;
}

// Slice of axes other than the batch, with bounds the same in every slice
// (bounds from the batch size, such as x[:, :N], would differ between slices).
Categories rule_slice(const NodeScope& s) {
  for (int i = 1; i < s.num_inputs(); ++i) s.expect_constant(i);
  const int axis = s.batch_axis(0);
  const std::vector<int> axes = sliced_axes(s);
  if (std::find(axes.begin(), axes.end(), axis) != axes.end())
    s.reject("slices the batch axis " + std::to_string(axis));
  return s.all(s.in(0).on_axis(axis));
}

// Gather: per-sample data with constant indices along another axis (the
// indices' dims replace the gathered axis), or constant data picked by
// per-sample indices (an embedding lookup: the batch lands at axis + b).
Categories rule_gather(const NodeScope& s) {
  const int gather = s.normalize(s.attr_int("axis"), s.rank(0), "attribute 'axis'");
  if (s.in(0).role == Role::Constant && s.in(1).role == Role::Batched)
    return s.all(s.in(1).on_axis(gather + s.in(1).axis));
  s.expect_constant(1);
  const int axis = s.batch_axis(0);
  if (axis == gather) s.reject("gathers along the batch axis " + std::to_string(axis));
  return s.all(s.in(0).on_axis(axis < gather ? axis : axis + s.rank(1) - 1));
}

// CumSum along an axis other than the batch, given by a constant (a sum
// along the batch would carry one sample's values into the next).
Categories rule_cumsum(const NodeScope& s) {
  s.expect_constant(1);
  const int axis = s.batch_axis(0);
  const std::vector<std::int64_t> along = s.ints(1);
  if (along.size() != 1) s.reject("has " + s.input_text(1) + " with " + std::to_string(along.size()) + " values");
  if (s.normalize(along[0], s.rank(0), "axis") == axis) s.reject("sums along the batch axis " + std::to_string(axis));
  return s.all(s.in(0).on_axis(axis));
}

// Trilu masks the last two axes by row and column index, so the batch must
// come before them; k the same in every slice.
Categories rule_trilu(const NodeScope& s) {
  s.expect_constant(1);
  const int axis = s.batch_axis(0);
  if (axis >= s.rank(0) - 2)
    s.reject("masks the last two axes, which include the batch axis " + std::to_string(axis));
  return s.all(s.in(0).on_axis(axis));
}

// Pad with constant pads that leave the batch axis alone.
Categories rule_pad(const NodeScope& s) {
  s.expect_constant(1);
  s.expect_constant(2);
  const int axis = s.batch_axis(0), rank = s.rank(0);
  const std::vector<std::int64_t> pads = s.ints(1);
  if (static_cast<int>(pads.size()) != 2 * rank)
    s.reject("has " + std::to_string(pads.size()) + " pads for rank " + std::to_string(rank));
  if (pads[static_cast<std::size_t>(axis)] != 0 || pads[static_cast<std::size_t>(axis + rank)] != 0)
    s.reject("pads the batch axis " + std::to_string(axis));
  return s.all(s.in(0).on_axis(axis));
}

// Tile with constant repeats that are 1 on the batch axis.
Categories rule_tile(const NodeScope& s) {
  s.expect_constant(1);
  const int axis = s.batch_axis(0);
  const std::vector<std::int64_t> repeats = s.ints(1);
  if (axis >= static_cast<int>(repeats.size()) || repeats[static_cast<std::size_t>(axis)] != 1)
    s.reject("repeats along the batch axis " + std::to_string(axis));
  return s.all(s.in(0).on_axis(axis));
}

// LSTM, GRU, RNN (inputs X W R B sequence_lens initial_h [initial_c P]): layout 0
// has X [T, N, I], states [D, N, H], Y [T, D, N, H]; layout 1 puts N first in
// all three. Weights must be constant, sequence_lens and states per-sample.
Categories rule_recurrent(const NodeScope& s) {
  const bool batch_first = s.attr_int("layout") == 1;
  const int x_axis = batch_first ? 0 : 1, state_axis = batch_first ? 0 : 1;
  for (int i : {1, 2, 3, 7}) s.expect_constant(i);
  if (s.batch_axis(0) != x_axis)
    s.reject("needs X batched on axis " + std::to_string(x_axis) + " for its layout, it is on axis " +
             std::to_string(s.in(0).axis));
  s.expect_batched_on(4, 0, 0);
  for (int i : {5, 6}) s.expect_batched_on(i, state_axis, 0);
  Categories out = s.all(s.in(0).on_axis(state_axis));
  if (!out.empty()) out[0] = s.in(0).on_axis(batch_first ? 0 : 2);
  return out;
}

// --- rules: the batch size in, per-sample data out ------------------------

// ConstantOfShape, and Expand of a constant, whose shape comes from the batch
// size: a tensor the same along the axis whose dim is the batch (one fill
// value, or a constant that broadcasts there), so the slice of a call builds
// exactly the whole call's rows on that axis. Any one axis will do: an
// exported GRU's initial state is ConstantOfShape([D, N, H]), batched on axis
// 1 as a layout-0 GRU wants. The batch on no axis (a tensor sized by, say, 2N)
// or on several ([N, N]: a slice of n samples would build n x n, not n rows of
// length N) is rejected; check_output then rejects the batch size in any
// other dim.
Categories rule_sized_by_batch(const NodeScope& s) {
  const int axis = s.output_batch_axis();
  // Implied by shape inference (a constant dim c other than 1 broadcasts to c,
  // not to the batch), but it is what makes each row the same, so checked.
  if (s.op() == OpKind::Expand && !broadcasts_on(s.info(0).type.shape, s.out_rank(), axis))
    s.reject("broadcasts constant " + s.input_text(0) + " along the batch axis " + std::to_string(axis));
  return s.all(Category::batched(axis));
}

// --- dispatch -----------------------------------------------------------------

// A node with per-sample inputs: the rule of its family.
Categories categorise_batched(const NodeScope& s, Family f) {
  switch (f) {
    case Family::Unary: return rule_unary(s);
    case Family::Broadcast: return rule_broadcast(s);
    case Family::PerSample: return rule_per_sample(s);
    case Family::LayerNorm: return rule_layer_norm(s);
    case Family::Softmax: return rule_softmax(s);
    case Family::Reduce: return rule_reduce(s);
    case Family::ArgReduce: return rule_arg_reduce(s);
    case Family::MatMul: return rule_matmul(s);
    case Family::Gemm: return rule_gemm(s);
    case Family::Transpose: return rule_transpose(s);
    case Family::Reshape: return rule_reshape(s);
    case Family::Flatten: return rule_flatten(s);
    case Family::Squeeze: return rule_squeeze(s);
    case Family::Unsqueeze: return rule_unsqueeze(s);
    case Family::Expand: return rule_expand(s);
    case Family::Concat: return rule_concat(s);
    case Family::Split: return rule_split(s);
    case Family::Slice: return rule_slice(s);
    case Family::Gather: return rule_gather(s);
    case Family::Pad: return rule_pad(s);
    case Family::Tile: return rule_tile(s);
    case Family::CumSum: return rule_cumsum(s);
    case Family::Trilu: return rule_trilu(s);
    case Family::Recurrent: return rule_recurrent(s);
    case Family::ConstantOfShape: s.reject("takes its shape from per-sample data");
    case Family::Range: s.reject("takes its bounds from per-sample data");
    case Family::Shape: case Family::Subgraph: case Family::Unsupported: break;
  }
  s.reject("has no batch-split rule");
}

// A node computing from the batch size without per-sample data: shape
// arithmetic gives ShapeValues; ConstantOfShape and Expand of a constant build
// a tensor sized by it (rule_sized_by_batch), while Expand of a ShapeValue is
// more shape arithmetic. Anything else (Range over the batch size, ...) is
// rejected.
Categories categorise_shape_arithmetic(const NodeScope& s, Family f) {
  switch (f) {
    case Family::ConstantOfShape: return rule_sized_by_batch(s);
    case Family::Expand:
      return s.in(0).role == Role::Constant ? rule_sized_by_batch(s) : s.all(Category::shape_value());
    case Family::Unary: case Family::Broadcast: case Family::Reduce: case Family::Reshape: case Family::Squeeze:
    case Family::Unsqueeze: case Family::Concat: case Family::Slice: case Family::Gather:
      return s.all(Category::shape_value());
    case Family::Range: s.reject("depends on the batch size");
    default: s.reject("computes with the batch size, which differs between slices");
  }
}

}  // namespace

// The categories of one node's outputs from its inputs'.
Categories categorise(const NodeScope& s) {
  const Family f = family_of(s.op());
  // A subgraph may read per-sample values through captures; not analysed.
  if (f == Family::Subgraph) s.reject("runs a subgraph");
  if (f == Family::Shape) return s.all(s.in(0).role == Role::Batched ? Category::shape_value() : Category::constant());
  if (!s.any_input(Role::Batched) && !s.any_input(Role::ShapeValue)) return s.all(Category::constant());
  if (!s.any_input(Role::Batched)) return categorise_shape_arithmetic(s, f);
  return categorise_batched(s, f);
}

}  // namespace canary::graph::batch_rules
