// Shape rules of the elementwise ops exporters emit beyond the core set:
// Not, And, Or, Mod and Dropout (the unary float ops reuse infer_unary_float).
#include "graph/shape_rules.h"

namespace canary::graph::rules {
namespace {

// Requires input i to have the same dtype as input 0.
void expect_dtype_of_first(const InferContext& ctx, int i) {
  ctx.expect_dtype(i, {ctx.input_type(0).dtype});
}

// Requires an optional input, when present, to be a scalar of one of the dtypes.
void expect_optional_scalar(InferContext& ctx, int i, std::initializer_list<DType> allowed) {
  if (!ctx.has_input(i)) return;
  ctx.expect_dtype(i, allowed);
  ctx.expect_rank(i, 0);
}

}  // namespace

// Not: bool in, bool out.
void infer_not(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::Bool});
  ctx.set_output(0, ctx.input_type(0));
}

// And Or: bool operands, broadcast shapes, bool result.
void infer_logical(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::Bool});
  ctx.expect_dtype(1, {DType::Bool});
  ctx.set_output(0, ValueType{DType::Bool, ctx.broadcast(ctx.input_type(0).shape, ctx.input_type(1).shape)});
}

// Mod: same numeric dtype, broadcast shapes; fmod is 0 or 1. (Float operands
// with fmod 0 are accepted and take the divisor's sign, as Python's %.)
void infer_mod(InferContext& ctx) {
  std::int64_t fmod = ctx.attr_int("fmod");
  if (fmod != 0 && fmod != 1) {
    ctx.fail(ErrorKind::Model, "attribute 'fmod' is " + std::to_string(fmod) + ", expected 0 or 1");
  }
  ctx.expect_dtype(0, {DType::F32, DType::F64, DType::I64, DType::I32});
  expect_dtype_of_first(ctx, 1);
  ctx.set_output(0, ValueType{ctx.input_type(0).dtype,
                              ctx.broadcast(ctx.input_type(0).shape, ctx.input_type(1).shape)});
}

// Dropout (inference): output like the input, optional bool mask of its
// shape; ratio a float scalar, training_mode a bool scalar that is not a
// constant true.
void infer_dropout(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::F32, DType::F64});
  expect_optional_scalar(ctx, 1, {DType::F32, DType::F64});
  expect_optional_scalar(ctx, 2, {DType::Bool});
  if (const Tensor* mode = ctx.input_constant(2); mode && mode->data<bool>()[0]) {
    ctx.fail(ErrorKind::Model, "training mode is not supported (" + ctx.describe_input(2) + " is the constant true)");
  }
  const ValueType& in = ctx.input_type(0);
  ctx.set_output(0, in);
  ctx.set_output(1, ValueType{DType::Bool, in.shape});
}

}  // namespace canary::graph::rules
