// Shape rules of reductions, normalisations and scans along an axis: the
// ReduceX family, ArgMax/ArgMin, Softmax (and LogSoftmax, Hardmax), CumSum,
// LayerNormalization.
#include <optional>
#include <set>

#include "graph/shape_rules.h"

namespace canary::graph::rules {
namespace {

constexpr std::initializer_list<DType> kNumeric = {DType::F32, DType::F64, DType::I64, DType::I32};

// The reduction axes when they are known: the attribute, or ReduceSum's
// constant input; nullopt when ReduceSum's axes input is not constant.
std::optional<std::vector<std::int64_t>> reduce_axes(const InferContext& ctx) {
  if (ctx.node().op != OpKind::ReduceSum) {
    if (!ctx.has_attr("axes")) return std::vector<std::int64_t>{};
    return ctx.attr_ints("axes");
  }
  if (!ctx.has_input(1)) return std::vector<std::int64_t>{};
  ctx.expect_dtype(1, {DType::I64});
  std::optional<DimVector> dims = ctx.input_dims_value(1);
  if (!dims) return std::nullopt;
  std::vector<std::int64_t> axes;
  for (const Dim& d : *dims) {
    if (!d.is_constant()) return std::nullopt;
    axes.push_back(d.value());
  }
  return axes;
}

// The output of a reduction whose axes are not known at build time.
DimVector reduce_unknown_axes(InferContext& ctx, int rank, bool keepdims) {
  if (keepdims) {
    DimVector out;
    for (int k = 0; k < rank; ++k) out.push_back(ctx.symbols().fresh());
    return out;
  }
  const DimVector& axes_shape = ctx.input_type(1).shape;
  if (axes_shape.size() != 1 || !axes_shape[0].is_constant()) {
    ctx.fail(ErrorKind::Shape, "axes input is not constant and its length is not static (rank not static)");
  }
  DimVector out;
  for (std::int64_t k = 0; k < rank - axes_shape[0].value(); ++k) out.push_back(ctx.symbols().fresh());
  return out;
}

}  // namespace

// The ReduceX family: reduce the given axes (all when empty). Up to opset
// 17 only ReduceSum takes its axes as an input and has noop_with_empty_axes;
// the others take an axes attribute.
void infer_reduce(InferContext& ctx) {
  ctx.expect_dtype(0, kNumeric);
  const ValueType& in = ctx.input_type(0);
  bool keepdims = ctx.attr_int("keepdims") != 0;
  std::optional<std::vector<std::int64_t>> axes = reduce_axes(ctx);
  if (!axes) {
    ctx.set_output(0, ValueType{in.dtype, reduce_unknown_axes(ctx, in.rank(), keepdims)});
    return;
  }
  if (axes->empty() && ctx.node().op == OpKind::ReduceSum && ctx.attr_int("noop_with_empty_axes") != 0) {
    ctx.set_output(0, in);
    return;
  }
  std::set<int> reduced;
  for (std::int64_t a : *axes) {
    if (!reduced.insert(ctx.normalize_axis(a, in.rank(), "reduction axis")).second) {
      ctx.fail(ErrorKind::Model, "reduction axis " + std::to_string(a) + " is repeated");
    }
  }
  DimVector out;
  for (int k = 0; k < in.rank(); ++k) {
    bool reduce = axes->empty() || reduced.count(k) != 0;
    if (!reduce) out.push_back(in.shape[k]);
    else if (keepdims) out.push_back(Dim(1));
  }
  ctx.set_output(0, ValueType{in.dtype, out});
}

// ArgMax ArgMin: the index (i64) of the extreme along one axis, which is
// kept as 1 or dropped; the axis must not be empty.
void infer_arg_reduce(InferContext& ctx) {
  ctx.expect_dtype(0, kNumeric);
  const ValueType& in = ctx.input_type(0);
  const int axis = ctx.normalize_axis(ctx.attr_int("axis"), in.rank(), "attribute 'axis'");
  const Dim& length = in.shape[static_cast<std::size_t>(axis)];
  if (length.is_constant() && length.value() == 0)
    ctx.fail(ErrorKind::Shape, "reduces over the empty axis " + std::to_string(axis) + " of " + in.to_string());
  const std::int64_t select_last = ctx.attr_int("select_last_index");
  if (select_last != 0 && select_last != 1)
    ctx.fail(ErrorKind::Model, "attribute 'select_last_index' is " + std::to_string(select_last) + ", expected 0 or 1");
  const bool keepdims = ctx.attr_int("keepdims") != 0;
  DimVector out;
  for (int k = 0; k < in.rank(); ++k) {
    if (k != axis) out.push_back(in.shape[k]);
    else if (keepdims) out.push_back(Dim(1));
  }
  ctx.set_output(0, ValueType{DType::I64, out});
}

// Softmax, LogSoftmax, Hardmax: floating input, axis in range; same type out.
void infer_softmax(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::F32, DType::F64});
  ctx.normalize_axis(ctx.attr_int("axis"), ctx.input_type(0).rank(), "attribute 'axis'");
  ctx.set_output(0, ctx.input_type(0));
}

// CumSum (opset 14): y like x (numeric, rank >= 1); axis is a 0-D i64/i32
// tensor, checked against the rank when its value is known at build time.
void infer_cumsum(InferContext& ctx) {
  ctx.expect_dtype(0, kNumeric);
  ctx.expect_dtype(1, {DType::I64, DType::I32});
  const ValueType& x = ctx.input_type(0);
  const ValueType& axis = ctx.input_type(1);
  if (axis.rank() != 0)
    ctx.fail(ErrorKind::Shape, ctx.describe_input(1) + " " + axis.to_string() + " must be a scalar (the axis)");
  if (x.rank() == 0) ctx.fail(ErrorKind::Shape, ctx.describe_input(0) + " is a scalar; CumSum needs rank >= 1");
  const std::optional<DimVector> known = ctx.input_dims_value(1);
  if (known && known->size() == 1 && known->front().is_constant())
    ctx.normalize_axis(known->front().value(), x.rank(), "axis");
  ctx.set_output(0, x);
}

// LayerNormalization: Y like X; Mean and InvStdDev keep X[:axis] and 1s after.
void infer_layer_norm(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::F32, DType::F64});
  const ValueType& x = ctx.input_type(0);
  int axis = ctx.normalize_axis(ctx.attr_int("axis"), x.rank(), "attribute 'axis'");
  DimVector normalized(x.shape.begin() + axis, x.shape.end());
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    ctx.expect_dtype(i, {x.dtype});
    if (ctx.input_type(i).rank() > static_cast<int>(normalized.size()) ||
        ctx.broadcast(ctx.input_type(i).shape, normalized).size() != normalized.size()) {
      ctx.fail(ErrorKind::Shape, ctx.describe_input(i) + " " + ctx.input_type(i).to_string() +
                                     " does not broadcast to the normalized dims " + dims_to_string(normalized));
    }
  }
  std::int64_t stash = ctx.attr_int("stash_type");
  if (stash != 1 && stash != 11) {
    ctx.fail(ErrorKind::Model, "attribute 'stash_type' is " + std::to_string(stash) + ", expected 1 (f32) or 11 (f64)");
  }
  ctx.set_output(0, x);
  DimVector stats(x.shape.begin(), x.shape.begin() + axis);
  stats.resize(x.shape.size(), Dim(1));
  ValueType stat_type{stash == 1 ? DType::F32 : DType::F64, stats};
  ctx.set_output(1, stat_type);
  ctx.set_output(2, stat_type);
}

}  // namespace canary::graph::rules
