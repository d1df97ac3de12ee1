// Shape rules of DepthToSpace and SpaceToDepth (opset 13), EyeLike (opset 9),
// OneHot and TopK (opset 11): ops whose output dims come from a block size,
// the input's own shape, or a count held by an input.
#include <cmath>
#include <string>

#include "graph/shape_rules.h"

namespace canary::graph::rules {
namespace {

// The largest blocksize whose square fits an i64 (the kernels' bound too).
constexpr std::int64_t kLargestBlocksize = 3037000499;

// The blocksize attribute, positive and small enough to square; X of rank 4.
std::int64_t blocksize_of(InferContext& ctx) {
  const std::int64_t b = ctx.attr_int("blocksize");
  if (b < 1 || b > kLargestBlocksize)
    ctx.fail(ErrorKind::Model, "blocksize " + std::to_string(b) + " must be positive and at most " +
                                   std::to_string(kLargestBlocksize));
  const ValueType& x = ctx.input_type(0);
  if (x.rank() != 4)
    ctx.fail(ErrorKind::Shape, ctx.describe_input(0) + " " + x.to_string() + " must be [N, C, H, W] (rank 4)");
  return b;
}

// dim / b, failing when a constant dim is not a multiple of b; a fresh
// symbol when a symbolic one is not known to be.
Dim divided(InferContext& ctx, const Dim& dim, std::int64_t b, const std::string& what) {
  if (dim.is_constant() && dim.value() % b != 0)
    ctx.fail(ErrorKind::Shape, what + " " + dim.to_string() + " is not a multiple of " + std::to_string(b));
  if (std::optional<Dim> q = exact_quotient(dim, Dim(b))) return *q;
  return ctx.symbols().fresh();
}

// The one number a constant 0-D or 1-D input holds, as an integer (floats
// truncated toward zero); nullopt when the input is not constant.
std::optional<std::int64_t> constant_count(const InferContext& ctx, int i) {
  const Tensor* t = ctx.input_constant(i);
  if (t == nullptr || t->numel() != 1) return std::nullopt;
  const double v = t->element_as_double(0);
  if (!(std::fabs(v) < 9.2e18)) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

// Fails unless input i holds one number: 0-D, or 1-D of one element.
void expect_one_number(InferContext& ctx, int i, const char* what) {
  const ValueType& t = ctx.input_type(i);
  const bool one = t.rank() == 0 || (t.rank() == 1 && !(t.shape[0].is_constant() && t.shape[0].value() != 1));
  if (!one)
    ctx.fail(ErrorKind::Shape, ctx.describe_input(i) + " " + t.to_string() + " (" + what + ") must hold one number");
}

}  // namespace

// DepthToSpace: [N, C, H, W] to [N, C/(b*b), H*b, W*b].
void infer_depth_to_space(InferContext& ctx) {
  const std::string mode = ctx.attr_string("mode");
  if (mode != "DCR" && mode != "CRD") ctx.fail(ErrorKind::Model, "mode \"" + mode + "\" is not one of DCR, CRD");
  const std::int64_t b = blocksize_of(ctx);
  const ValueType& x = ctx.input_type(0);
  const Dim channels = divided(ctx, x.shape[1], b * b, "channel count");
  ctx.set_output(0, ValueType{x.dtype, {x.shape[0], channels, x.shape[2] * Dim(b), x.shape[3] * Dim(b)}});
}

// SpaceToDepth: [N, C, H, W] to [N, C*b*b, H/b, W/b].
void infer_space_to_depth(InferContext& ctx) {
  const std::int64_t b = blocksize_of(ctx);
  const ValueType& x = ctx.input_type(0);
  const Dim h = divided(ctx, x.shape[2], b, "height");
  const Dim w = divided(ctx, x.shape[3], b, "width");
  ctx.set_output(0, ValueType{x.dtype, {x.shape[0], x.shape[1] * Dim(b * b), h, w}});
}

// EyeLike: the 2-D input's shape, of `dtype` when given, else the input's.
void infer_eye_like(InferContext& ctx) {
  const ValueType& x = ctx.input_type(0);
  if (x.rank() != 2) ctx.fail(ErrorKind::Shape, ctx.describe_input(0) + " " + x.to_string() + " must be 2-D");
  DType dtype = x.dtype;
  if (ctx.has_attr("dtype")) {
    const std::string name = ctx.attr_string("dtype");
    std::optional<DType> parsed = parse_dtype(name);
    if (!parsed)
      ctx.fail(ErrorKind::Model, "attribute 'dtype' is '" + name + "', expected one of f32, f64, i64, i32, bool");
    dtype = *parsed;
  }
  ctx.set_output(0, ValueType{dtype, x.shape});
}

// OneHot: indices' shape with `depth` inserted at axis, of values' dtype.
void infer_one_hot(InferContext& ctx) {
  const std::initializer_list<DType> numbers = {DType::F32, DType::F64, DType::I64, DType::I32};
  ctx.expect_dtype(0, numbers);
  ctx.expect_dtype(1, numbers);
  expect_one_number(ctx, 1, "depth");
  ctx.expect_rank(2, 1);
  const ValueType& values = ctx.input_type(2);
  if (values.shape[0].is_constant() && values.shape[0].value() != 2)
    ctx.fail(ErrorKind::Shape, ctx.describe_input(2) + " " + values.to_string() + " must be [off, on] (2 elements)");
  const ValueType& indices = ctx.input_type(0);
  const int axis = ctx.normalize_axis(ctx.attr_int("axis"), indices.rank() + 1, "axis");
  Dim depth = ctx.symbols().fresh();
  if (std::optional<std::int64_t> d = constant_count(ctx, 1)) {
    if (*d < 1) ctx.fail(ErrorKind::Input, "depth " + std::to_string(*d) + " must be at least 1");
    depth = Dim(*d);
  }
  DimVector out = indices.shape;
  out.insert(out.begin() + axis, depth);
  ctx.set_output(0, ValueType{values.dtype, out});
}

// TopK: X's shape with K entries along axis; Values of X's dtype, Indices i64.
void infer_top_k(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::F32, DType::F64, DType::I64, DType::I32});
  ctx.expect_dtype(1, {DType::I64});
  ctx.expect_rank(1, 1);
  const ValueType& k_type = ctx.input_type(1);
  if (k_type.shape[0].is_constant() && k_type.shape[0].value() != 1)
    ctx.fail(ErrorKind::Shape, ctx.describe_input(1) + " " + k_type.to_string() + " (K) must hold one element");
  const ValueType& x = ctx.input_type(0);
  if (x.rank() == 0)
    ctx.fail(ErrorKind::Shape, ctx.describe_input(0) + " " + x.to_string() + " is a scalar; TopK needs an axis");
  const int axis = ctx.normalize_axis(ctx.attr_int("axis"), x.rank(), "axis");
  Dim k = ctx.symbols().fresh();
  if (std::optional<std::int64_t> known = constant_count(ctx, 1)) {
    const Dim& dim = x.shape[axis];
    if (*known < 0 || (dim.is_constant() && *known > dim.value()))
      ctx.fail(ErrorKind::Shape, "K " + std::to_string(*known) + " is outside [0, " + dim.to_string() +
                                     "] for axis " + std::to_string(axis) + " of " + x.to_string());
    k = Dim(*known);
  }
  DimVector out = x.shape;
  out[axis] = k;
  ctx.set_output(0, ValueType{x.dtype, out});
  if (ctx.has_output(1)) ctx.set_output(1, ValueType{DType::I64, out});
}

}  // namespace canary::graph::rules
