// Shape rule of Resize (opset 13): X resized by `scales` or to `sizes`,
// exactly one of them given (an empty tensor counts as absent); `roi` is
// read only by the tf_crop_and_resize coordinate mode.
#include <cmath>
#include <string>

#include "graph/shape_rules.h"

namespace canary::graph::rules {
namespace {

// Scaled dims past 2^53 are refused: the product is no longer exact in double.
constexpr double kLargestScaledDim = 9007199254740992.0;

// An input given and not known to be empty.
bool given(const InferContext& ctx, int i) {
  if (!ctx.has_input(i)) return false;
  const DimVector& shape = ctx.input_type(i).shape;
  return !(shape.size() == 1 && shape[0].is_constant() && shape[0].value() == 0);
}

// Fails unless attribute `name` is one of `allowed`.
void expect_choice(InferContext& ctx, const char* name, std::initializer_list<const char*> allowed) {
  const std::string value = ctx.attr_string(name);
  std::string list;
  for (const char* a : allowed) {
    if (value == a) return;
    list += std::string(list.empty() ? "" : ", ") + a;
  }
  ctx.fail(ErrorKind::Model, std::string(name) + " \"" + value + "\" is not one of " + list);
}

// A 1-D parameter input of `length` entries and one of `dtypes`.
void expect_parameter(InferContext& ctx, int i, std::int64_t length, std::initializer_list<DType> dtypes,
                      const char* what) {
  ctx.expect_dtype(i, dtypes);
  ctx.expect_rank(i, 1);
  const Dim& n = ctx.input_type(i).shape[0];
  if (n.is_constant() && n.value() != length)
    ctx.fail(ErrorKind::Shape, ctx.describe_input(i) + " (" + what + ") has " + std::to_string(n.value()) +
                                   " entries, expected " + std::to_string(length) + " for X of rank " +
                                   std::to_string(ctx.input_type(0).rank()));
}

// The dim scaled by s: the dim itself for 1, floor(dim * s) when the dim is
// known, dim * s for a whole s, else a fresh symbol.
Dim scaled_dim(InferContext& ctx, const Dim& dim, double s, int k) {
  if (!(s > 0) || !std::isfinite(s))
    ctx.fail(ErrorKind::Model, "scale " + std::to_string(s) + " of dim " + std::to_string(k) + " is not positive");
  if (s == 1.0) return dim;
  if (dim.is_constant()) {
    const double out = std::floor(static_cast<double>(dim.value()) * s);
    if (out > kLargestScaledDim)
      ctx.fail(ErrorKind::Shape, "dim " + std::to_string(k) + " (" + dim.to_string() + ") scaled by " +
                                     std::to_string(s) + " is too large");
    return Dim(static_cast<std::int64_t>(out));
  }
  if (s == std::floor(s) && s < 1024) return dim * Dim(static_cast<std::int64_t>(s));
  return ctx.symbols().fresh();
}

}  // namespace

void infer_resize(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::F32, DType::F64});
  expect_choice(ctx, "mode", {"nearest", "linear", "cubic"});
  expect_choice(ctx, "coordinate_transformation_mode",
                {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nearest",
                 "tf_crop_and_resize"});
  expect_choice(ctx, "nearest_mode", {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"});
  const ValueType& x = ctx.input_type(0);
  const int rank = x.rank();
  if (rank == 0) ctx.fail(ErrorKind::Shape, "X is a scalar; Resize needs at least one dim");
  if (given(ctx, 1)) expect_parameter(ctx, 1, 2 * rank, {DType::F32, DType::F64}, "roi");
  const bool scales = given(ctx, 2), sizes = given(ctx, 3);
  if (scales == sizes)
    ctx.fail(ErrorKind::Model, scales ? "both scales (input 2) and sizes (input 3) are given; give one"
                                      : "neither scales (input 2) nor sizes (input 3) is given; give one");
  DimVector out;
  if (sizes) {
    expect_parameter(ctx, 3, rank, {DType::I64}, "sizes");
    if (std::optional<DimVector> known = ctx.input_dims_value(3)) {
      out = *known;
      for (int k = 0; k < rank; ++k)
        if (out[k].is_constant() && out[k].value() < 0)
          ctx.fail(ErrorKind::Shape, "size " + std::to_string(out[k].value()) + " of dim " + std::to_string(k) +
                                         " is negative");
    } else {
      for (int k = 0; k < rank; ++k) out.push_back(ctx.symbols().fresh());
    }
  } else {
    expect_parameter(ctx, 2, rank, {DType::F32}, "scales");
    const Tensor* t = ctx.input_constant(2);
    for (int k = 0; k < rank; ++k)
      out.push_back(t != nullptr ? scaled_dim(ctx, x.shape[k], static_cast<double>(t->data<float>()[k]), k)
                                 : ctx.symbols().fresh());
  }
  ctx.set_output(0, ValueType{x.dtype, out});
}

}  // namespace canary::graph::rules
