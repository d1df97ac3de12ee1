// Shape rules of data-movement ops that rearrange whole tensors: Reshape,
// Expand, Transpose, Concat, Flatten, Identity, Cast, Shape, Size.
#include <algorithm>
#include <map>
#include <set>

#include "graph/shape_rules.h"

namespace canary::graph::rules {
namespace {

// The product of a range of dims (1 when empty).
Dim product(DimVector::const_iterator begin, DimVector::const_iterator end) {
  Dim p(1);
  for (auto it = begin; it != end; ++it) p = p * *it;
  return p;
}

// A product of dims split into a constant, symbol names and other factors.
struct Factors {
  std::int64_t coef = 1;
  std::multiset<std::string> symbols;
  DimVector opaque;
};

// Multiplies one dim into the factors (c * S * R splits into c, S, R). The
// constants multiply as Dims: symbols fixed to large constants can make the
// product leave int64 even where the symbolic product did not.
void add_factor(Factors& f, const Dim& d) {
  if (d.is_constant()) {
    f.coef = (Dim(f.coef) * d).value();
    return;
  }
  std::vector<std::string> names = d.symbols();
  std::map<std::string, Dim, std::less<>> ones;
  for (const std::string& n : names) ones.emplace(n, Dim(1));
  Dim c = d.substitute(ones);
  Dim monomial = c;
  for (const std::string& n : names) monomial = monomial * Dim::symbol(n);
  if (!c.is_constant() || monomial != d) {
    f.opaque.push_back(d);
    return;
  }
  f.coef = (Dim(f.coef) * c).value();
  f.symbols.insert(names.begin(), names.end());
}

// The product of the symbols and opaque factors (without the constant).
Dim symbolic_part(const Factors& f) {
  Dim p = product(f.opaque.begin(), f.opaque.end());
  for (const std::string& n : f.symbols) p = p * Dim::symbol(n);
  return p;
}

// The dim a -1 stands for: prod(in) // prod(others), after cancelling the
// factors both sides share and folding the constants.
Dim infer_minus_one(const SymbolTable& symbols, const DimVector& in, const DimVector& others) {
  Factors num, den;
  for (const Dim& d : in) add_factor(num, symbols.canonical(d));
  for (const Dim& d : others) add_factor(den, symbols.canonical(d));
  for (auto it = den.symbols.begin(); it != den.symbols.end();) {
    auto match = num.symbols.find(*it);
    if (match == num.symbols.end()) {
      ++it;
      continue;
    }
    num.symbols.erase(match);
    it = den.symbols.erase(it);
  }
  for (auto it = den.opaque.begin(); it != den.opaque.end();) {
    auto match = std::find(num.opaque.begin(), num.opaque.end(), *it);
    if (match == num.opaque.end()) {
      ++it;
      continue;
    }
    num.opaque.erase(match);
    it = den.opaque.erase(it);
  }
  Dim numerator = symbolic_part(num), denominator = symbolic_part(den);
  if (den.coef != 0 && num.coef % den.coef == 0) return floor_div(Dim(num.coef / den.coef) * numerator, denominator);
  return floor_div(Dim(num.coef) * numerator, Dim(den.coef) * denominator);
}

// Resolves Reshape's target dims: 0 copies the input dim, -1 is inferred.
DimVector resolve_reshape(InferContext& ctx, const DimVector& in, DimVector target, bool allowzero) {
  int infer_at = -1;
  bool has_zero = false;
  for (std::size_t k = 0; k < target.size(); ++k) {
    if (!target[k].is_constant()) continue;
    std::int64_t v = target[k].value();
    if (v == -1) {
      if (infer_at >= 0) ctx.fail(ErrorKind::Shape, "shape " + dims_to_string(target) + " has more than one -1");
      infer_at = static_cast<int>(k);
    } else if (v == 0 && !allowzero) {
      if (k >= in.size()) {
        ctx.fail(ErrorKind::Shape, "shape entry " + std::to_string(k) + " is 0 (copy) but the input " +
                                       dims_to_string(in) + " has no such dim");
      }
      target[k] = in[k];
    } else if (v < -1) {
      ctx.fail(ErrorKind::Shape, "shape entry " + std::to_string(k) + " is " + std::to_string(v));
    } else if (v == 0) {
      has_zero = true;
    }
  }
  Dim total = product(in.begin(), in.end());
  if (infer_at >= 0) {
    if (has_zero) ctx.fail(ErrorKind::Model, "shape has both 0 (with allowzero) and -1");
    DimVector others = target;
    others.erase(others.begin() + infer_at);
    Dim rest = product(others.begin(), others.end());
    if (rest.is_constant() && (rest.value() == 0 || (total.is_constant() && total.value() % rest.value() != 0))) {
      ctx.fail(ErrorKind::Shape, "cannot reshape " + dims_to_string(in) + " to " + dims_to_string(target));
    }
    try {
      target[infer_at] = infer_minus_one(ctx.symbols(), in, others);
    } catch (const Error& e) {
      ctx.fail(e.kind(), "the -1 in shape " + dims_to_string(target) + " for input " + dims_to_string(in) + ": " +
                             e.detail());
    }
  }
  Dim out_total = product(target.begin(), target.end());
  if (total.is_constant() && out_total.is_constant() && total.value() != out_total.value()) {
    ctx.fail(ErrorKind::Shape, "cannot reshape " + dims_to_string(in) + " (" + std::to_string(total.value()) +
                                   " elements) to " + dims_to_string(target));
  }
  return target;
}

}  // namespace

// Reshape: target from the shape input's contents (constant or known dims).
void infer_reshape(InferContext& ctx) {
  ctx.expect_dtype(1, {DType::I64});
  ctx.expect_rank(1, 1);
  const ValueType& in = ctx.input_type(0);
  std::optional<DimVector> target = ctx.input_dims_value(1);
  DimVector out = target ? resolve_reshape(ctx, in.shape, *target, ctx.attr_int("allowzero") != 0)
                         : fresh_dims_for_shape_input(ctx, 1);
  ctx.set_output(0, ValueType{in.dtype, out});
}

// Expand: bidirectional broadcast of the input with the shape input.
void infer_expand(InferContext& ctx) {
  ctx.expect_dtype(1, {DType::I64});
  ctx.expect_rank(1, 1);
  std::optional<DimVector> target = ctx.input_dims_value(1);
  DimVector shape = target ? *target : fresh_dims_for_shape_input(ctx, 1);
  for (const Dim& d : shape) {
    // A negative target would broadcast against a 1 into a negative output dim.
    if (d.is_constant() && d.value() < 0) {
      ctx.fail(ErrorKind::Shape, "shape " + dims_to_string(shape) + " has a negative dim");
    }
  }
  ctx.set_output(0, ValueType{ctx.input_type(0).dtype, ctx.broadcast(ctx.input_type(0).shape, shape)});
}

// Transpose: permutes dims by `perm` (reversed when absent).
void infer_transpose(InferContext& ctx) {
  const ValueType& in = ctx.input_type(0);
  std::vector<std::int64_t> perm;
  if (ctx.has_attr("perm")) perm = ctx.attr_ints("perm");
  else
    for (int k = in.rank() - 1; k >= 0; --k) perm.push_back(k);
  if (static_cast<int>(perm.size()) != in.rank()) {
    ctx.fail(ErrorKind::Shape, "attribute 'perm' has " + std::to_string(perm.size()) + " entries, input " +
                                   in.to_string() + " has rank " + std::to_string(in.rank()));
  }
  std::set<int> seen;
  DimVector out;
  for (std::int64_t p : perm) {
    int axis = ctx.normalize_axis(p, in.rank(), "perm entry");
    if (!seen.insert(axis).second) ctx.fail(ErrorKind::Model, "attribute 'perm' repeats axis " + std::to_string(p));
    out.push_back(in.shape[axis]);
  }
  ctx.set_output(0, ValueType{in.dtype, out});
}

// Concat: same dtype and rank, equal non-axis dims, summed axis dim.
void infer_concat(InferContext& ctx) {
  const ValueType& first = ctx.input_type(0);
  if (first.rank() == 0) ctx.fail(ErrorKind::Shape, "cannot concatenate scalars (" + ctx.describe_input(0) + ")");
  int axis = ctx.normalize_axis(ctx.attr_int("axis"), first.rank(), "attribute 'axis'");
  DimVector out = first.shape;
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    ctx.expect_dtype(i, {first.dtype});
    ctx.expect_rank(i, first.rank());
    const DimVector& s = ctx.input_type(i).shape;
    for (int k = 0; k < first.rank(); ++k) {
      if (k == axis) out[k] = out[k] + s[k];
      else ctx.assert_equal(out[k], s[k], "Concat " + ctx.describe_input(i) + " dim " + std::to_string(k));
    }
  }
  ctx.set_output(0, ValueType{first.dtype, out});
  if (first.rank() != 1) return;
  DimVector known;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    std::optional<DimVector> v = ctx.input_dims_value(i);
    if (!v) return;
    known.insert(known.end(), v->begin(), v->end());
  }
  ctx.set_output_known_dims(0, known);
}

// Flatten: [prod(d[:axis]), prod(d[axis:])].
void infer_flatten(InferContext& ctx) {
  const ValueType& in = ctx.input_type(0);
  std::int64_t axis = ctx.attr_int("axis");
  if (axis < -in.rank() || axis > in.rank()) {
    ctx.fail(ErrorKind::Shape, "attribute 'axis' " + std::to_string(axis) + " is out of range for rank " +
                                   std::to_string(in.rank()));
  }
  if (axis < 0) axis += in.rank();
  auto split = in.shape.begin() + axis;
  ctx.set_output(0, ValueType{in.dtype, {product(in.shape.begin(), split), product(split, in.shape.end())}});
}

// Identity: same type and known contents.
void infer_identity(InferContext& ctx) {
  ctx.set_output(0, ctx.input_type(0));
  if (auto known = ctx.input_dims_value(0)) ctx.set_output_known_dims(0, *known);
}

// Cast: the shape with the dtype named by `to`; known contents carried over.
void infer_cast(InferContext& ctx) {
  std::string to = ctx.attr_string("to");
  std::optional<DType> dtype = parse_dtype(to);
  if (!dtype) ctx.fail(ErrorKind::Model, "attribute 'to' is '" + to + "', expected one of f32, f64, i64, i32, bool");
  ctx.set_output(0, ValueType{*dtype, ctx.input_type(0).shape});
  if (*dtype == DType::Bool) return;
  if (auto known = ctx.input_dims_value(0)) ctx.set_output_known_dims(0, *known);
}

// Shape: i64 [end - start] whose known contents are the input's dims.
void infer_shape(InferContext& ctx) {
  const ValueType& in = ctx.input_type(0);
  std::int64_t rank = in.rank();
  std::int64_t start = ctx.attr_int("start");
  std::int64_t end = ctx.has_attr("end") ? ctx.attr_int("end") : rank;
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<std::int64_t>(start, 0, rank);
  end = std::clamp<std::int64_t>(end, 0, rank);
  DimVector dims;
  for (std::int64_t k = start; k < end; ++k) dims.push_back(in.shape[k]);
  ctx.set_output(0, ValueType{DType::I64, {Dim(static_cast<std::int64_t>(dims.size()))}});
  ctx.set_output_known_dims(0, dims);
}

// Size: x's element count as a rank-0 i64, known as the product of its dims
// so that shape arithmetic on it stays symbolic.
void infer_size(InferContext& ctx) {
  const ValueType& in = ctx.input_type(0);
  ctx.set_output(0, ValueType{DType::I64, {}});
  ctx.set_output_known_dims(0, {product(in.shape.begin(), in.shape.end())});
}

// Fresh symbols for a shape input whose contents are unknown; its length
// (the input's only dim) must be a constant.
DimVector fresh_dims_for_shape_input(InferContext& ctx, int i) {
  const ValueType& t = ctx.input_type(i);
  if (t.rank() != 1 || !t.shape[0].is_constant()) {
    ctx.fail(ErrorKind::Shape, ctx.describe_input(i) + " " + t.to_string() +
                                   " has unknown contents and its length is not a constant (rank not static)");
  }
  if (t.shape[0].value() > static_cast<std::int64_t>(kMaxTensorRank)) {
    ctx.fail(ErrorKind::Shape, ctx.describe_input(i) + " " + t.to_string() + " asks for a rank above the limit " +
                                   std::to_string(kMaxTensorRank));
  }
  DimVector dims;
  for (std::int64_t k = 0; k < t.shape[0].value(); ++k) dims.push_back(ctx.symbols().fresh());
  return dims;
}

}  // namespace canary::graph::rules
