// Shape rules of elementwise ops: NumPy broadcasting, dtype agreement, and
// known-dims folding of integer arithmetic on shape values.
#include <optional>

#include "graph/shape_rules.h"

namespace canary::graph::rules {
namespace {

constexpr std::initializer_list<DType> kNumeric = {DType::F32, DType::F64, DType::I64, DType::I32};
constexpr std::initializer_list<DType> kFloating = {DType::F32, DType::F64};

// Requires input i to have the same dtype as input 0.
void expect_same_dtype(const InferContext& ctx, int i, int reference = 0) {
  DType want = ctx.input_type(reference).dtype;
  DType got = ctx.input_type(i).dtype;
  if (got == want) return;
  ctx.fail(ErrorKind::Model, ctx.describe_input(i) + " has dtype " + std::string(dtype_name(got)) + ", expected " +
                                 std::string(dtype_name(want)) + " (the dtype of " + ctx.describe_input(reference) +
                                 ")");
}

// The broadcast shape of every present input.
DimVector broadcast_inputs(const InferContext& ctx) {
  DimVector shape;
  bool first = true;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    shape = first ? ctx.input_type(i).shape : ctx.broadcast(shape, ctx.input_type(i).shape);
    first = false;
  }
  return shape;
}

// Applies the op to one pair of known dims.
Dim fold_dims(OpKind op, const Dim& a, const Dim& b) {
  switch (op) {
    case OpKind::Add: return a + b;
    case OpKind::Sub: return a - b;
    case OpKind::Mul: return a * b;
    default: return floor_div(a, b);
  }
}

// Folds integer arithmetic of two known-dims values (broadcasting length 1).
void fold_known_dims(InferContext& ctx) {
  if (!is_integer(ctx.input_type(0).dtype)) return;
  std::optional<DimVector> a = ctx.input_dims_value(0);
  std::optional<DimVector> b = ctx.input_dims_value(1);
  if (!a || !b) return;
  if (a->size() != b->size() && a->size() != 1 && b->size() != 1) return;
  if (ctx.node().op == OpKind::Div) {
    for (const Dim& d : *b)
      if (d.is_constant() && d.value() == 0) return;
  }
  std::size_t n = std::max(a->size(), b->size());
  DimVector out;
  for (std::size_t k = 0; k < n; ++k) {
    out.push_back(fold_dims(ctx.node().op, (*a)[a->size() == 1 ? 0 : k], (*b)[b->size() == 1 ? 0 : k]));
  }
  ctx.set_output_known_dims(0, std::move(out));
}

}  // namespace

// Add Sub Mul Div: same numeric dtype, broadcast shapes.
void infer_arithmetic(InferContext& ctx) {
  ctx.expect_dtype(0, kNumeric);
  expect_same_dtype(ctx, 1);
  ctx.set_output(0, ValueType{ctx.input_type(0).dtype, broadcast_inputs(ctx)});
  fold_known_dims(ctx);
}

// Pow: numeric base and exponent (dtypes may differ); the base's dtype.
void infer_pow(InferContext& ctx) {
  ctx.expect_dtype(0, kNumeric);
  ctx.expect_dtype(1, kNumeric);
  ctx.set_output(0, ValueType{ctx.input_type(0).dtype, broadcast_inputs(ctx)});
}

// Max Min: any number of same-dtype numeric inputs.
void infer_variadic(InferContext& ctx) {
  ctx.expect_dtype(0, kNumeric);
  for (int i = 1; i < ctx.num_inputs(); ++i) expect_same_dtype(ctx, i);
  ctx.set_output(0, ValueType{ctx.input_type(0).dtype, broadcast_inputs(ctx)});
}

// IsNaN, IsInf: a floating input, a bool of its shape.
void infer_float_test(InferContext& ctx) {
  ctx.expect_dtype(0, kFloating);
  ctx.set_output(0, ValueType{DType::Bool, ctx.input_type(0).shape});
}

// Mean: as Max, Min and Sum, for floating dtypes only.
void infer_mean(InferContext& ctx) {
  ctx.expect_dtype(0, kFloating);
  infer_variadic(ctx);
}

// PRelu: x and its slope share a numeric dtype; the slope broadcasts to x
// (one way: each of its dims, aligned from the right, is 1 or x's).
void infer_prelu(InferContext& ctx) {
  ctx.expect_dtype(0, kNumeric);
  expect_same_dtype(ctx, 1);
  const DimVector& x = ctx.input_type(0).shape;
  const DimVector& slope = ctx.input_type(1).shape;
  if (slope.size() > x.size())
    ctx.fail(ErrorKind::Shape, "the slope " + dims_to_string(slope) + " has more dims than x " + dims_to_string(x));
  for (std::size_t k = 0; k < slope.size(); ++k) {
    const Dim& s = slope[slope.size() - 1 - k];
    if (s.is_constant() && s.value() == 1) continue;
    ctx.assert_equal(x[x.size() - 1 - k], s, "the slope's dim " + std::to_string(slope.size() - 1 - k) +
                                                 " (it must be 1 or x's dim: the slope broadcasts to x)");
  }
  ctx.set_output(0, ctx.input_type(0));
}

// Equal Less Greater: same dtype on both sides, a bool result.
void infer_comparison(InferContext& ctx) {
  if (ctx.node().op == OpKind::Equal) ctx.expect_dtype(0, {DType::F32, DType::F64, DType::I64, DType::I32, DType::Bool});
  else ctx.expect_dtype(0, kNumeric);
  expect_same_dtype(ctx, 1);
  ctx.set_output(0, ValueType{DType::Bool, broadcast_inputs(ctx)});
}

// Where: bool condition, same-dtype branches, all three broadcast.
void infer_where(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::Bool});
  expect_same_dtype(ctx, 2, 1);
  ctx.set_output(0, ValueType{ctx.input_type(1).dtype, broadcast_inputs(ctx)});
}

// Exp Log Sqrt Tanh Sigmoid Erf: floating input, same type out.
void infer_unary_float(InferContext& ctx) {
  ctx.expect_dtype(0, kFloating);
  ctx.set_output(0, ctx.input_type(0));
}

// Neg Abs Relu Sign: numeric input, same type out. Neg of integer known dims
// folds too: ONNX's LayerNormalization body counts its reduced axes as the
// negated axis, and the shape it builds from that count must stay known.
void infer_unary_numeric(InferContext& ctx) {
  ctx.expect_dtype(0, kNumeric);
  ctx.set_output(0, ctx.input_type(0));
  if (ctx.node().op != OpKind::Neg || !is_integer(ctx.input_type(0).dtype)) return;
  std::optional<DimVector> known = ctx.input_dims_value(0);
  if (!known) return;
  for (Dim& d : *known) d = Dim(0) - d;
  ctx.set_output_known_dims(0, std::move(*known));
}

// Gelu: floating input; approximate is "none" or "tanh".
void infer_gelu(InferContext& ctx) {
  std::string approximate = ctx.attr_string("approximate");
  if (approximate != "none" && approximate != "tanh") {
    ctx.fail(ErrorKind::Model, "attribute 'approximate' is '" + approximate + "', expected 'none' or 'tanh'");
  }
  infer_unary_float(ctx);
}

// Clip: numeric input; optional min and max are scalars of the same dtype.
void infer_clip(InferContext& ctx) {
  ctx.expect_dtype(0, kNumeric);
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    expect_same_dtype(ctx, i);
    ctx.expect_rank(i, 0);
  }
  ctx.set_output(0, ctx.input_type(0));
}

}  // namespace canary::graph::rules
