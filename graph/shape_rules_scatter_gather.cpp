// Shape rules of GatherND (opset 13), ScatterND and ScatterElements (opset
// 18): ops that read or write data at positions an index input names. The
// scatters keep data's type; GatherND's shape depends on the length of its
// index tuples, the last dim of indices, which must therefore be known.
#include <algorithm>
#include <string>

#include "graph/shape_rules.h"

namespace canary::graph::rules {
namespace {

// Fails unless input i has input 0's dtype.
void expect_data_dtype(const InferContext& ctx, int i) {
  const DType want = ctx.input_type(0).dtype, got = ctx.input_type(i).dtype;
  if (got != want)
    ctx.fail(ErrorKind::Model, ctx.describe_input(i) + " has dtype " + std::string(dtype_name(got)) +
                                   ", expected " + std::string(dtype_name(want)) + " (the dtype of " +
                                   ctx.describe_input(0) + ")");
}

// Fails unless input i has rank >= 1.
void expect_not_scalar(const InferContext& ctx, int i) {
  const ValueType& t = ctx.input_type(i);
  if (t.rank() == 0)
    ctx.fail(ErrorKind::Shape, ctx.describe_input(i) + " " + t.to_string() + " is a scalar; " +
                                   std::string(op_name(ctx.node().op)) + " needs rank >= 1");
}

// The scatters' `reduction`: "none", "add", "mul" (opset 16), "max", "min" (opset 18).
void check_reduction(const InferContext& ctx) {
  const std::string r = ctx.attr_string("reduction");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    ctx.fail(ErrorKind::Model, "reduction \"" + r + "\" is not one of none, add, mul, max, min");
}

// GatherND's batch_dims b, in [0, min(rank of data, rank of indices)).
std::int64_t batch_dims_of(InferContext& ctx) {
  const std::int64_t b = ctx.attr_int("batch_dims");
  const int r = ctx.input_type(0).rank(), q = ctx.input_type(1).rank();
  if (b < 0) ctx.fail(ErrorKind::Model, "batch_dims " + std::to_string(b) + " is negative");
  if (b >= std::min(r, q))
    ctx.fail(ErrorKind::Shape, "batch_dims " + std::to_string(b) + " must be below the rank of data (" +
                                   std::to_string(r) + ") and of indices (" + std::to_string(q) + ")");
  return b;
}

// GatherND's tuple length: the last dim of indices, a constant in [1, r - b].
std::int64_t tuple_length(InferContext& ctx, std::int64_t b) {
  const ValueType& indices = ctx.input_type(1);
  const Dim& last = indices.shape.back();
  const std::int64_t r = ctx.input_type(0).rank();
  if (!last.is_constant())
    ctx.fail(ErrorKind::Shape, "the last dim of " + ctx.describe_input(1) + " " + indices.to_string() +
                                   " must be known: it is the length of each index tuple and sets the output rank");
  if (last.value() < 1 || last.value() > r - b)
    ctx.fail(ErrorKind::Shape, "the last dim of " + ctx.describe_input(1) + " " + indices.to_string() +
                                   " must be in [1, " + std::to_string(r - b) + "] (the rank of data after " +
                                   std::to_string(b) + " batch dims)");
  return last.value();
}

// Fails unless a ScatterND tuple length k (known, or implied by the ranks)
// is in [1, rank of data].
void expect_scatter_tuple_range(InferContext& ctx, std::int64_t k) {
  const ValueType& indices = ctx.input_type(1);
  const int r = ctx.input_type(0).rank();
  if (k < 1 || k > r)
    ctx.fail(ErrorKind::Shape, "the last dim of " + ctx.describe_input(1) + " " + indices.to_string() + " is " +
                                   std::to_string(k) + " (known or implied by the ranks), outside [1, " +
                                   std::to_string(r) + "], the rank of data");
}

// ScatterND's tuple length k: the last dim of indices, which the ranks fix
// (updates has rank q - 1 + r - k) when it is symbolic.
std::int64_t scatter_tuple_length(InferContext& ctx) {
  const ValueType& data = ctx.input_type(0);
  const ValueType& indices = ctx.input_type(1);
  const ValueType& updates = ctx.input_type(2);
  const Dim& last = indices.shape.back();
  const std::int64_t implied = indices.rank() - 1 + data.rank() - updates.rank();
  expect_scatter_tuple_range(ctx, last.is_constant() ? last.value() : implied);
  if (last.is_constant() && last.value() != implied)
    ctx.fail(ErrorKind::Shape, ctx.describe_input(2) + " " + updates.to_string() + " must have rank " +
                                   std::to_string(indices.rank() - 1 + data.rank() - last.value()) + ": " +
                                   ctx.describe_input(1) + " " + indices.to_string() + " without its last dim, then " +
                                   ctx.describe_input(0) + " " + data.to_string() + " after its first " +
                                   last.to_string() + " dims");
  ctx.assert_equal(last, Dim(implied), "the last dim of indices");
  return implied;
}

}  // namespace

// GatherND: indices.shape[:-1] + data.shape[b + k:], b = batch_dims and k
// the tuple length; the batch dims of data and indices are equal.
void infer_gather_nd(InferContext& ctx) {
  ctx.expect_dtype(1, {DType::I64});
  expect_not_scalar(ctx, 0);
  expect_not_scalar(ctx, 1);
  const std::int64_t b = batch_dims_of(ctx);
  const std::int64_t k = tuple_length(ctx, b);
  const ValueType& data = ctx.input_type(0);
  const ValueType& indices = ctx.input_type(1);
  for (std::size_t d = 0; d < static_cast<std::size_t>(b); ++d)
    ctx.assert_equal(data.shape[d], indices.shape[d], "batch dim " + std::to_string(d) + " of data and indices");
  DimVector out(indices.shape.begin(), indices.shape.end() - 1);
  out.insert(out.end(), data.shape.begin() + b + k, data.shape.end());
  ctx.set_output(0, ValueType{data.dtype, out});
}

// ScatterND: data's type; updates is indices.shape[:-1] + data.shape[k:].
void infer_scatter_nd(InferContext& ctx) {
  check_reduction(ctx);
  ctx.expect_dtype(1, {DType::I64});
  expect_data_dtype(ctx, 2);
  expect_not_scalar(ctx, 0);
  expect_not_scalar(ctx, 1);
  const std::int64_t k = scatter_tuple_length(ctx);
  const ValueType& data = ctx.input_type(0);
  const ValueType& indices = ctx.input_type(1);
  const ValueType& updates = ctx.input_type(2);
  const std::size_t lead = indices.shape.size() - 1;
  for (std::size_t d = 0; d < lead; ++d)
    ctx.assert_equal(updates.shape[d], indices.shape[d], "dim " + std::to_string(d) + " of updates and indices");
  for (std::size_t d = static_cast<std::size_t>(k); d < data.shape.size(); ++d)
    ctx.assert_equal(updates.shape[lead + d - static_cast<std::size_t>(k)], data.shape[d],
                     "dim " + std::to_string(lead + d - static_cast<std::size_t>(k)) + " of updates and dim " +
                         std::to_string(d) + " of data");
  ctx.set_output(0, data);
}

// ScatterElements: data's type; indices and updates share one shape of
// data's rank, no larger than data off the axis (as for GatherElements,
// equal dims are not required, so they are not asserted equal).
void infer_scatter_elements(InferContext& ctx) {
  check_reduction(ctx);
  ctx.expect_dtype(1, {DType::I64, DType::I32});
  expect_data_dtype(ctx, 2);
  expect_not_scalar(ctx, 0);
  const ValueType& data = ctx.input_type(0);
  const ValueType& indices = ctx.input_type(1);
  const ValueType& updates = ctx.input_type(2);
  const int axis = ctx.normalize_axis(ctx.attr_int("axis"), data.rank(), "attribute 'axis'");
  for (int i : {1, 2})
    if (ctx.input_type(i).rank() != data.rank())
      ctx.fail(ErrorKind::Shape, ctx.describe_input(i) + " " + ctx.input_type(i).to_string() +
                                     " must have the rank of " + ctx.describe_input(0) + " " + data.to_string());
  for (int d = 0; d < data.rank(); ++d) {
    const Dim& i = indices.shape[static_cast<std::size_t>(d)];
    const Dim& n = data.shape[static_cast<std::size_t>(d)];
    ctx.assert_equal(updates.shape[static_cast<std::size_t>(d)], i, "dim " + std::to_string(d) + " of updates and indices");
    if (d != axis && i.is_constant() && n.is_constant() && i.value() > n.value())
      ctx.fail(ErrorKind::Shape, ctx.describe_input(1) + " " + indices.to_string() + " exceeds " +
                                     ctx.describe_input(0) + " " + data.to_string() + " on dim " + std::to_string(d));
  }
  ctx.set_output(0, data);
}

}  // namespace canary::graph::rules
