// Shape rules of ops that generate tensors from shapes and scalars:
// ConstantOfShape (output dims from the input's contents) and Range (a
// symbolic length from known start, limit and delta).
#include <cmath>
#include <cstdint>

#include "graph/shape_rules.h"

namespace canary::graph::rules {
namespace {

// Known dims of a small 1-D integer output are tracked up to this length.
constexpr std::int64_t kMaxKnownLength = 64;

// The dims held by a 1-D i64 shape input: its known contents, else fresh
// symbols (its length must then be a constant).
DimVector dims_from_shape_input(InferContext& ctx, int i) {
  if (std::optional<DimVector> dims = ctx.input_dims_value(i)) {
    if (dims->size() <= kMaxTensorRank) return *dims;
    ctx.fail(ErrorKind::Shape, ctx.describe_input(i) + " holds " + std::to_string(dims->size()) +
                                   " dims, above the rank limit " + std::to_string(kMaxTensorRank));
  }
  return fresh_dims_for_shape_input(ctx, i);
}

// A scalar integer input's value as a dim, when known.
std::optional<Dim> known_scalar(const InferContext& ctx, int i) {
  if (!is_integer(ctx.input_type(i).dtype)) return std::nullopt;
  std::optional<DimVector> v = ctx.input_dims_value(i);
  if (!v || v->size() != 1) return std::nullopt;
  return (*v)[0];
}

// A scalar float constant's value, when known.
std::optional<double> constant_float(const InferContext& ctx, int i) {
  const Tensor* t = ctx.input_constant(i);
  if (t == nullptr || t->numel() != 1) return std::nullopt;
  return t->element_as_double(0);
}

// Range's length from known integer operands: max(ceil((limit - start) / delta), 0).
std::optional<Dim> integer_range_length(InferContext& ctx) {
  std::optional<Dim> start = known_scalar(ctx, 0), limit = known_scalar(ctx, 1), delta = known_scalar(ctx, 2);
  if (!start || !limit || !delta || !delta->is_constant()) return std::nullopt;
  std::int64_t d = delta->value();
  if (d == 0) ctx.fail(ErrorKind::Model, "delta " + ctx.describe_input(2) + " is the constant 0");
  if (start->is_constant() && limit->is_constant()) {
    const __int128 span = static_cast<__int128>(limit->value()) - start->value();
    __int128 n = span / d;
    if (n * d != span && ((span < 0) == (d < 0))) ++n;  // round the quotient up
    if (n > INT64_MAX) ctx.fail(ErrorKind::Model, "the length (limit - start) / delta overflows int64");
    return Dim(n > 0 ? static_cast<std::int64_t>(n) : 0);
  }
  Dim span = d > 0 ? *limit - *start : *start - *limit;
  return max(ceil_div(span, Dim(d > 0 ? d : -d)), Dim(0));
}

// Range's length from constant float operands.
std::optional<Dim> float_range_length(InferContext& ctx) {
  std::optional<double> start = constant_float(ctx, 0), limit = constant_float(ctx, 1), delta = constant_float(ctx, 2);
  if (!start || !limit || !delta) return std::nullopt;
  if (*delta == 0) ctx.fail(ErrorKind::Model, "delta " + ctx.describe_input(2) + " is the constant 0");
  double n = std::ceil((*limit - *start) / *delta);
  if (!std::isfinite(n) || n > 9.0e18) ctx.fail(ErrorKind::Model, "the length (limit - start) / delta is not finite");
  return Dim(n > 0 ? static_cast<std::int64_t>(n) : 0);
}

// Known contents of an integer Range with a short constant length. Each value
// is the previous one plus delta, so only the elements themselves are formed:
// k * delta alone can leave int64 (start INT64_MIN, delta 2^62, k 2).
void range_known_dims(InferContext& ctx, const Dim& length) {
  std::optional<Dim> start = known_scalar(ctx, 0), delta = known_scalar(ctx, 2);
  if (!start || !delta || !length.is_constant() || length.value() > kMaxKnownLength) return;
  DimVector values;
  for (std::int64_t k = 0; k < length.value(); ++k) values.push_back(k == 0 ? *start : values.back() + *delta);
  ctx.set_output_known_dims(0, values);
}

}  // namespace

// ConstantOfShape: dims from the shape input's contents; dtype from the
// one-element `value` tensor (default f32).
void infer_constant_of_shape(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::I64});
  ctx.expect_rank(0, 1);
  DType dtype = DType::F32;
  const Tensor* value = nullptr;
  if (ctx.has_attr("value")) {
    value = &std::get<Tensor>(ctx.node().attrs.find("value")->second);
    if (!value->defined() || value->numel() != 1) {
      ctx.fail(ErrorKind::Model, "attribute 'value' must hold one element, got " +
                                     (value->defined() ? value->type_string() : std::string("an undefined tensor")));
    }
    dtype = value->dtype();
  }
  DimVector dims = dims_from_shape_input(ctx, 0);
  for (const Dim& d : dims) {
    if (d.is_constant() && d.value() < 0) {
      ctx.fail(ErrorKind::Shape, "shape " + dims_to_string(dims) + " has a negative dim");
    }
  }
  ctx.set_output(0, ValueType{dtype, dims});
  bool short_vector = dims.size() == 1 && dims[0].is_constant() && dims[0].value() <= kMaxKnownLength;
  if (!short_vector || !is_integer(dtype)) return;
  // Read as integers: an i64 such as INT64_MAX does not survive a trip through double.
  std::int64_t fill_value = 0;
  if (value != nullptr && dtype == DType::I64) fill_value = value->data<std::int64_t>()[0];
  if (value != nullptr && dtype == DType::I32) fill_value = value->data<std::int32_t>()[0];
  Dim fill(fill_value);
  ctx.set_output_known_dims(0, DimVector(static_cast<std::size_t>(dims[0].value()), fill));
}

// Range: scalar start, limit and delta of one numeric dtype; a 1-D output
// whose length is exact when the operands are known, else a fresh symbol.
void infer_range(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::F32, DType::F64, DType::I64, DType::I32});
  for (int i = 0; i < 3; ++i) {
    ctx.expect_dtype(i, {ctx.input_type(0).dtype});
    const ValueType& t = ctx.input_type(i);
    bool one_element = t.rank() == 0 || (t.rank() == 1 && t.shape[0].is_constant() && t.shape[0].value() == 1);
    if (!one_element) ctx.fail(ErrorKind::Shape, ctx.describe_input(i) + " " + t.to_string() + " must be a scalar");
  }
  std::optional<Dim> length =
      is_integer(ctx.input_type(0).dtype) ? integer_range_length(ctx) : float_range_length(ctx);
  Dim n = length ? *length : ctx.symbols().fresh();
  ctx.set_output(0, ValueType{ctx.input_type(0).dtype, {n}});
  if (is_integer(ctx.input_type(0).dtype)) range_known_dims(ctx, n);
}

}  // namespace canary::graph::rules
