// Shape rules of ops that resize a tensor along its dims: Pad (opset 13),
// Tile and Split (opset 13, variadic outputs).
#include "graph/shape_rules.h"

namespace canary::graph::rules {
namespace {

// The contents of a 1-D i64 parameter input of `length` entries: known dims,
// or nullopt when unknown. A constant length other than `length` fails.
std::optional<DimVector> parameter_dims(InferContext& ctx, int i, std::int64_t length, const char* what) {
  ctx.expect_dtype(i, {DType::I64});
  ctx.expect_rank(i, 1);
  const Dim& n = ctx.input_type(i).shape[0];
  if (n.is_constant() && n.value() != length) {
    ctx.fail(ErrorKind::Shape, ctx.describe_input(i) + " (" + what + ") has " + std::to_string(n.value()) +
                                   " entries, expected " + std::to_string(length));
  }
  return ctx.input_dims_value(i);
}

// Fresh symbols for every dim of a shape of this rank.
DimVector fresh_dims(InferContext& ctx, int rank) {
  DimVector dims;
  for (int k = 0; k < rank; ++k) dims.push_back(ctx.symbols().fresh());
  return dims;
}

// Checks Pad's mode and, for constant pads and dims, its limits; returns
// the padded dim.
Dim padded_dim(InferContext& ctx, const std::string& mode, int k, const Dim& dim, const Dim& begin, const Dim& end) {
  Dim out = dim + begin + end;
  std::string where = "dim " + std::to_string(k) + " (" + dim.to_string() + ") padded by " + begin.to_string() +
                      " and " + end.to_string();
  if (out.is_constant() && out.value() < 0) ctx.fail(ErrorKind::Shape, where + " is negative");
  if (mode != "reflect" || !dim.is_constant()) return out;
  for (const Dim& p : {begin, end}) {
    if (p.is_constant() && p.value() > 0 && p.value() >= dim.value()) {
      ctx.fail(ErrorKind::Shape, where + ": reflect pads must be smaller than the dim");
    }
  }
  return out;
}

}  // namespace

// Tile: each dim multiplied by its repeat (fresh symbols when unknown).
void infer_tile(InferContext& ctx) {
  const ValueType& in = ctx.input_type(0);
  std::optional<DimVector> repeats = parameter_dims(ctx, 1, in.rank(), "repeats");
  if (!repeats) return ctx.set_output(0, ValueType{in.dtype, fresh_dims(ctx, in.rank())});
  DimVector out;
  for (int k = 0; k < in.rank(); ++k) {
    const Dim& r = (*repeats)[static_cast<std::size_t>(k)];
    if (r.is_constant() && r.value() < 0) {
      ctx.fail(ErrorKind::Shape, "repeats " + dims_to_string(*repeats) + " has a negative entry");
    }
    out.push_back(in.shape[static_cast<std::size_t>(k)] * r);
  }
  ctx.set_output(0, ValueType{in.dtype, out});
}

// Pad: pads [begins..., ends...] of 2 * rank entries (negative crop);
// constant_value an optional scalar of the data's dtype; mode constant,
// reflect or edge.
void infer_pad(InferContext& ctx) {
  std::string mode = ctx.attr_string("mode");
  if (mode != "constant" && mode != "reflect" && mode != "edge") {
    ctx.fail(ErrorKind::Model, "attribute 'mode' is '" + mode + "', expected 'constant', 'reflect' or 'edge'");
  }
  const ValueType& in = ctx.input_type(0);
  if (ctx.has_input(2)) {
    ctx.expect_dtype(2, {in.dtype});
    const ValueType& v = ctx.input_type(2);
    bool one = v.rank() == 0 || (v.rank() == 1 && v.shape[0].is_constant() && v.shape[0].value() == 1);
    if (!one) {
      ctx.fail(ErrorKind::Shape, ctx.describe_input(2) + " (constant_value) " + v.to_string() + " must be a scalar");
    }
  }
  std::optional<DimVector> pads = parameter_dims(ctx, 1, 2 * std::int64_t{in.rank()}, "pads");
  if (!pads) return ctx.set_output(0, ValueType{in.dtype, fresh_dims(ctx, in.rank())});
  DimVector out;
  for (int k = 0; k < in.rank(); ++k) {
    out.push_back(padded_dim(ctx, mode, k, in.shape[static_cast<std::size_t>(k)], (*pads)[static_cast<std::size_t>(k)],
                             (*pads)[static_cast<std::size_t>(k + in.rank())]));
  }
  ctx.set_output(0, ValueType{in.dtype, out});
}

// Split: one output per part along `axis`, sized by the split input (whose
// sum must equal the dim) or equal parts, which must divide a constant dim.
void infer_split(InferContext& ctx) {
  const ValueType& in = ctx.input_type(0);
  if (in.rank() == 0) ctx.fail(ErrorKind::Shape, "cannot split a scalar (" + ctx.describe_input(0) + ")");
  int axis = ctx.normalize_axis(ctx.attr_int("axis"), in.rank(), "attribute 'axis'");
  const Dim& dim = in.shape[static_cast<std::size_t>(axis)];
  const int parts = ctx.num_outputs();
  DimVector sizes;
  if (ctx.has_input(1)) {
    std::optional<DimVector> given = parameter_dims(ctx, 1, parts, "split");
    if (!given) {
      sizes = fresh_dims(ctx, parts);
    } else {
      Dim total(0);
      for (const Dim& s : *given) {
        if (s.is_constant() && s.value() < 0) {
          ctx.fail(ErrorKind::Shape, "split " + dims_to_string(*given) + " has a negative size");
        }
        total = total + s;
      }
      ctx.assert_equal(total, dim, "sum of split " + dims_to_string(*given) + " and the split dim " + dim.to_string());
      sizes = *given;
    }
  } else {
    if (dim.is_constant() && dim.value() % parts != 0) {
      ctx.fail(ErrorKind::Shape, "dim " + std::to_string(axis) + " of " + in.to_string() + " does not divide into " +
                                     std::to_string(parts) + " equal parts");
    }
    sizes.assign(static_cast<std::size_t>(parts), floor_div(dim, Dim(parts)));
  }
  for (int i = 0; i < parts; ++i) {
    DimVector shape = in.shape;
    shape[static_cast<std::size_t>(axis)] = sizes[static_cast<std::size_t>(i)];
    ctx.set_output(i, ValueType{in.dtype, shape});
  }
}

}  // namespace canary::graph::rules
