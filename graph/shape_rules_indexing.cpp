// Shape rules of ops that select or insert axes and elements: Slice, Gather,
// GatherElements, Trilu, Squeeze, Unsqueeze (with known-dims propagation for
// shape arithmetic).
#include <algorithm>
#include <limits>
#include <set>

#include "graph/shape_rules.h"

namespace canary::graph::rules {
namespace {

// Bounds at or beyond this magnitude mean "to the end" (ONNX uses INT64_MAX).
constexpr std::int64_t kHuge = std::int64_t{1} << 40;

// A known-dims input as constants, or nullopt when absent, unknown or symbolic.
std::optional<std::vector<std::int64_t>> constant_ints(const InferContext& ctx, int i) {
  std::optional<DimVector> dims = ctx.input_dims_value(i);
  if (!dims) return std::nullopt;
  std::vector<std::int64_t> out;
  for (const Dim& d : *dims) {
    if (!d.is_constant()) return std::nullopt;
    out.push_back(d.value());
  }
  return out;
}

// The ONNX slice length of a constant dim. Lengths are rounded up as
// (span - 1) / |step| + 1, which cannot overflow for any step, and a step
// longer than the dim is clamped to it (the same single element), so that
// -step exists for INT64_MIN.
std::int64_t slice_length(std::int64_t d, std::int64_t s, std::int64_t e, std::int64_t step) {
  if (s < 0) s += d;
  if (e < 0) e += d;
  const std::int64_t longest = std::max<std::int64_t>(d, 1);
  step = std::clamp<std::int64_t>(step, -longest, longest);
  if (step > 0) {
    s = std::clamp<std::int64_t>(s, 0, d);
    e = std::clamp<std::int64_t>(e, 0, d);
    return e > s ? (e - s - 1) / step + 1 : 0;
  }
  if (d == 0) return 0;
  s = std::clamp<std::int64_t>(s, 0, d - 1);
  e = std::clamp<std::int64_t>(e, -1, d - 1);
  return s > e ? (s - e - 1) / -step + 1 : 0;
}

// The slice length of a symbolic dim with constant bounds, or nullopt.
std::optional<Dim> symbolic_slice_length(const Dim& d, std::int64_t s, std::int64_t e, std::int64_t step) {
  if (step == std::numeric_limits<std::int64_t>::min()) return std::nullopt;  // -step does not exist
  if (step < 0) {
    if ((s >= kHuge || s == -1) && e <= -kHuge) return ceil_div(d, Dim(-step));
    return std::nullopt;
  }
  bool to_end = e >= kHuge;
  if (s == 0 || s <= -kHuge) {
    if (to_end) return ceil_div(d, Dim(step));
    return ceil_div(e >= 0 ? min(Dim(e), d) : max(d + Dim(e), Dim(0)), Dim(step));
  }
  if (to_end) return ceil_div(s > 0 ? max(d - Dim(s), Dim(0)) : min(Dim(-s), d), Dim(step));
  Dim start = s > 0 ? min(Dim(s), d) : max(d + Dim(s), Dim(0));
  Dim end = e >= 0 ? min(Dim(e), d) : max(d + Dim(e), Dim(0));
  return max(ceil_div(end - start, Dim(step)), Dim(0));
}

// The indices Slice picks from a known-length vector (none from an empty one).
std::vector<std::int64_t> slice_indices(std::int64_t d, std::int64_t s, std::int64_t e, std::int64_t step) {
  std::int64_t n = slice_length(d, s, e, step);
  if (n == 0) return {};
  if (s < 0) s += d;
  s = step > 0 ? std::clamp<std::int64_t>(s, 0, d) : std::clamp<std::int64_t>(s, 0, d - 1);
  std::vector<std::int64_t> idx;
  for (std::int64_t k = 0; k < n; ++k) idx.push_back(s + k * step);
  return idx;
}

// Parameters of Slice: per-axis start/end/step when all are constant.
struct SliceParams {
  std::vector<std::int64_t> starts, ends, axes, steps;
};

// Reads Slice's parameter inputs; nullopt when any is not constant.
std::optional<SliceParams> read_slice_params(const InferContext& ctx, int rank) {
  auto starts = constant_ints(ctx, 1), ends = constant_ints(ctx, 2);
  if (!starts || !ends) return std::nullopt;
  if (starts->size() != ends->size()) {
    ctx.fail(ErrorKind::Model, "starts has " + std::to_string(starts->size()) + " entries, ends has " +
                                   std::to_string(ends->size()));
  }
  SliceParams p{*starts, *ends, {}, std::vector<std::int64_t>(starts->size(), 1)};
  for (std::size_t k = 0; k < starts->size(); ++k) p.axes.push_back(static_cast<std::int64_t>(k));
  if (ctx.has_input(3)) {
    auto axes = constant_ints(ctx, 3);
    if (!axes) return std::nullopt;
    p.axes = *axes;
  }
  if (ctx.has_input(4)) {
    auto steps = constant_ints(ctx, 4);
    if (!steps) return std::nullopt;
    p.steps = *steps;
  }
  if (p.axes.size() != p.starts.size() || p.steps.size() != p.starts.size()) {
    ctx.fail(ErrorKind::Model, "starts, ends, axes and steps must have the same length");
  }
  std::set<int> seen;
  for (std::int64_t& a : p.axes) {
    a = ctx.normalize_axis(a, rank, "slice axis");
    if (!seen.insert(static_cast<int>(a)).second) ctx.fail(ErrorKind::Model, "slice axis " + std::to_string(a) + " repeats");
  }
  for (std::int64_t s : p.steps)
    if (s == 0) ctx.fail(ErrorKind::Model, "slice step is 0");
  return p;
}

// Propagates known dims through a 1-D Slice with constant parameters.
void slice_known_dims(InferContext& ctx, const SliceParams& p) {
  std::optional<DimVector> known = ctx.input_dims_value(0);
  if (!known || ctx.input_type(0).rank() != 1 || p.axes.size() != 1) return;
  auto n = static_cast<std::int64_t>(known->size());
  DimVector out;
  for (std::int64_t i : slice_indices(n, p.starts[0], p.ends[0], p.steps[0])) out.push_back((*known)[i]);
  ctx.set_output_known_dims(0, out);
}

// Reads a constant list of axes from an input, or fails asking for one.
std::vector<std::int64_t> constant_axes(const InferContext& ctx, int i) {
  ctx.expect_dtype(i, {DType::I64});
  auto axes = constant_ints(ctx, i);
  if (!axes) ctx.fail(ErrorKind::Shape, ctx.describe_input(i) + " (axes) must be a constant");
  return *axes;
}

// The axes a Slice with non-constant bounds may change: its constant axes,
// else the first len(starts) axes, else all.
std::vector<int> unknown_sliced_axes(const InferContext& ctx, int rank) {
  std::vector<int> axes;
  if (auto given = ctx.has_input(3) ? constant_ints(ctx, 3) : std::nullopt) {
    for (std::int64_t a : *given) axes.push_back(ctx.normalize_axis(a, rank, "slice axis"));
    return axes;
  }
  int count = rank;
  const ValueType& starts = ctx.input_type(1);
  if (!ctx.has_input(3) && starts.rank() == 1 && starts.shape[0].is_constant())
    count = static_cast<int>(std::min<std::int64_t>(starts.shape[0].value(), rank));
  for (int k = 0; k < count; ++k) axes.push_back(k);
  return axes;
}

}  // namespace

// Slice (opset 13): ONNX clamping with constant parameters; fresh symbols
// for the sliced axes otherwise.
void infer_slice(InferContext& ctx) {
  const ValueType& in = ctx.input_type(0);
  for (int i = 1; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) ctx.expect_dtype(i, {DType::I64, DType::I32});
  std::optional<SliceParams> p = read_slice_params(ctx, in.rank());
  DimVector out = in.shape;
  if (!p) {
    for (int k : unknown_sliced_axes(ctx, in.rank())) out[k] = ctx.symbols().fresh();
    ctx.set_output(0, ValueType{in.dtype, out});
    return;
  }
  for (std::size_t j = 0; j < p->axes.size(); ++j) {
    const Dim& d = in.shape[p->axes[j]];
    std::optional<Dim> len;
    if (d.is_constant()) len = Dim(slice_length(d.value(), p->starts[j], p->ends[j], p->steps[j]));
    else len = symbolic_slice_length(d, p->starts[j], p->ends[j], p->steps[j]);
    out[p->axes[j]] = len ? *len : ctx.symbols().fresh();
  }
  ctx.set_output(0, ValueType{in.dtype, out});
  slice_known_dims(ctx, *p);
}

// Gather: data[:axis] + indices.shape + data[axis+1:]; picks known dims.
void infer_gather(InferContext& ctx) {
  const ValueType& data = ctx.input_type(0);
  ctx.expect_dtype(1, {DType::I64, DType::I32});
  if (data.rank() == 0) ctx.fail(ErrorKind::Shape, ctx.describe_input(0) + " is a scalar; Gather needs rank >= 1");
  int axis = ctx.normalize_axis(ctx.attr_int("axis"), data.rank(), "attribute 'axis'");
  const ValueType& indices = ctx.input_type(1);
  DimVector out(data.shape.begin(), data.shape.begin() + axis);
  out.insert(out.end(), indices.shape.begin(), indices.shape.end());
  out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
  ctx.set_output(0, ValueType{data.dtype, out});
  auto picks = ctx.input_constant(1) ? constant_ints(ctx, 1) : std::nullopt;
  if (!picks || !data.shape[axis].is_constant()) return;
  std::int64_t n = data.shape[axis].value();
  for (std::int64_t& i : *picks) {
    if (i < -n || i >= n) {
      ctx.fail(ErrorKind::Shape, "index " + std::to_string(i) + " is out of range for dim " + std::to_string(n) +
                                     " of " + ctx.describe_input(0));
    }
    if (i < 0) i += n;
  }
  std::optional<DimVector> known = ctx.input_dims_value(0);
  if (!known || data.rank() != 1) return;
  DimVector picked;
  for (std::int64_t i : *picks) picked.push_back((*known)[i]);
  ctx.set_output_known_dims(0, picked);
}

// GatherElements: the output has indices' shape and data's dtype; the ranks
// agree, and off the axis indices may not exceed data (equal dims are not
// required, so they are not asserted equal).
void infer_gather_elements(InferContext& ctx) {
  const ValueType& data = ctx.input_type(0);
  const ValueType& indices = ctx.input_type(1);
  ctx.expect_dtype(1, {DType::I64, DType::I32});
  if (data.rank() == 0)
    ctx.fail(ErrorKind::Shape, ctx.describe_input(0) + " is a scalar; GatherElements needs rank >= 1");
  const int axis = ctx.normalize_axis(ctx.attr_int("axis"), data.rank(), "attribute 'axis'");
  if (indices.rank() != data.rank())
    ctx.fail(ErrorKind::Shape, ctx.describe_input(1) + " " + indices.to_string() + " must have the rank of " +
                                   ctx.describe_input(0) + " " + data.to_string());
  for (int d = 0; d < data.rank(); ++d) {
    const Dim& i = indices.shape[static_cast<std::size_t>(d)];
    const Dim& n = data.shape[static_cast<std::size_t>(d)];
    if (d != axis && i.is_constant() && n.is_constant() && i.value() > n.value())
      ctx.fail(ErrorKind::Shape, ctx.describe_input(1) + " " + indices.to_string() + " exceeds " +
                                     ctx.describe_input(0) + " " + data.to_string() + " on dim " + std::to_string(d));
  }
  ctx.set_output(0, ValueType{data.dtype, indices.shape});
}

// Trilu (opset 14): y like x, whose last two dims are the matrices, so its
// rank is at least 2; k, when given, is a 0-D i64 tensor of any value.
void infer_trilu(InferContext& ctx) {
  const ValueType& x = ctx.input_type(0);
  if (x.rank() < 2)
    ctx.fail(ErrorKind::Shape, ctx.describe_input(0) + " " + x.to_string() + " has rank " +
                                   std::to_string(x.rank()) + "; Trilu needs rank >= 2");
  if (ctx.has_input(1)) {
    ctx.expect_dtype(1, {DType::I64});
    const ValueType& k = ctx.input_type(1);
    if (k.rank() != 0) ctx.fail(ErrorKind::Shape, ctx.describe_input(1) + " " + k.to_string() + " must be a scalar (k)");
  }
  ctx.set_output(0, x);
}

// Squeeze (opset 13): removes the given axes (each must be 1), or every
// constant-1 dim when no axes are given.
void infer_squeeze(InferContext& ctx) {
  const ValueType& in = ctx.input_type(0);
  std::set<int> drop;
  if (ctx.has_input(1)) {
    for (std::int64_t a : constant_axes(ctx, 1)) {
      int axis = ctx.normalize_axis(a, in.rank(), "squeeze axis");
      const Dim& d = in.shape[axis];
      if (d.is_constant() && d.value() != 1) {
        ctx.fail(ErrorKind::Shape, "cannot squeeze axis " + std::to_string(a) + " of " + in.to_string() +
                                       ": its size is " + d.to_string() + ", not 1");
      }
      ctx.assert_equal(d, Dim(1), "squeezed axis " + std::to_string(a));
      drop.insert(axis);
    }
  } else {
    for (int k = 0; k < in.rank(); ++k) {
      const Dim& d = in.shape[k];
      if (!d.is_constant()) {
        ctx.fail(ErrorKind::Shape, "dim " + std::to_string(k) + " of " + in.to_string() +
                                       " is symbolic; give explicit axes to Squeeze");
      }
      if (d.value() == 1) drop.insert(k);
    }
  }
  DimVector out;
  for (int k = 0; k < in.rank(); ++k)
    if (drop.count(k) == 0) out.push_back(in.shape[k]);
  ctx.set_output(0, ValueType{in.dtype, out});
  if (in.rank() <= 1 && out.size() <= 1)
    if (auto known = ctx.input_dims_value(0)) ctx.set_output_known_dims(0, *known);
}

// Unsqueeze (opset 13): inserts size-1 axes at the constant positions.
void infer_unsqueeze(InferContext& ctx) {
  const ValueType& in = ctx.input_type(0);
  std::vector<std::int64_t> axes = constant_axes(ctx, 1);
  int rank = in.rank() + static_cast<int>(axes.size());
  std::set<int> inserted;
  for (std::int64_t a : axes) {
    if (!inserted.insert(ctx.normalize_axis(a, rank, "unsqueeze axis")).second) {
      ctx.fail(ErrorKind::Model, "unsqueeze axis " + std::to_string(a) + " repeats");
    }
  }
  DimVector out;
  std::size_t next = 0;
  for (int k = 0; k < rank; ++k) out.push_back(inserted.count(k) ? Dim(1) : in.shape[next++]);
  ctx.set_output(0, ValueType{in.dtype, out});
  if (in.rank() <= 1 && rank <= 1)
    if (auto known = ctx.input_dims_value(0)) ctx.set_output_known_dims(0, *known);
}

}  // namespace canary::graph::rules
