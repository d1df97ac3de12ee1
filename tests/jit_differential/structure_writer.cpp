// GraphWriter emitters for ops that see more than one element per output:
// reductions along a small axis, Softmax, LayerNormalization, MatMul and Gemm
// with constant weights, and data movement (Transpose, Reshape, Concat).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "tests/jit_differential/graph_writer.h"

namespace canary::differential {
namespace {

// "[1, 0, 2]" for an ints attribute.
std::string ints_text(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// The indices of the dims a predicate accepts.
template <typename Pred>
std::vector<int> axes_where(const Dims& dims, Pred pred) {
  std::vector<int> out;
  for (std::size_t k = 0; k < dims.size(); ++k)
    if (pred(dims[k])) out.push_back(static_cast<int>(k));
  return out;
}

}  // namespace

// An axis written as its index or as the equivalent negative index.
std::string GraphWriter::axis_text(int axis, int rank) {
  return std::to_string(rng_.chance(0.5) ? axis : axis - rank);
}

// ReduceSum, ReduceMean or ReduceMax along one small non-empty axis, keepdims 0 or 1.
std::optional<Val> GraphWriter::reduction(Scope& scope) {
  auto ok = [&](const std::string& d) { return reducible(d); };
  std::optional<Val> v = pick(scope, [&](const Val& x) { return !axes_where(x.dims, ok).empty(); });
  if (!v) return std::nullopt;
  Val a = max_abs(v->bound) > 64.0 ? squash(scope, *v, 8.0) : *v;
  std::vector<int> axes = axes_where(a.dims, ok);
  int axis = axes[rng_.index(axes.size())];
  int rank = static_cast<int>(a.dims.size());
  int keep = static_cast<int>(rng_.range(0, 2));  // 2: attribute omitted (default 1)
  std::string attrs = keep == 2 ? "" : "keepdims = " + std::to_string(keep);
  Dims dims = a.dims;
  if (keep == 0) dims.erase(dims.begin() + axis);
  else dims[static_cast<std::size_t>(axis)] = "1";
  std::int64_t n = dim_max(a.dims[static_cast<std::size_t>(axis)]);
  graph_.features.reduction = true;
  int op = static_cast<int>(rng_.range(0, 2));
  if (op == 0) {
    std::string k = const_i64(scope, {1}, {std::stoll(axis_text(axis, rank))});
    return emit(scope, "ReduceSum", {a.name, k}, attrs, dims, reduce_sum_bound(a.bound, n));
  }
  std::string axes_attr = "axes = [" + axis_text(axis, rank) + "]";
  attrs = attrs.empty() ? axes_attr : axes_attr + ", " + attrs;
  if (op == 1) return emit(scope, "ReduceMean", {a.name}, attrs, dims, reduce_mean_bound(a.bound, n));
  return emit(scope, "ReduceMax", {a.name}, attrs, dims, reduce_max_bound(a.bound));
}

// Softmax along one small non-empty axis.
std::optional<Val> GraphWriter::softmax(Scope& scope) {
  auto ok = [&](const std::string& d) { return reducible(d); };
  std::optional<Val> v = pick(scope, [&](const Val& x) { return !axes_where(x.dims, ok).empty(); });
  if (!v) return std::nullopt;
  Val a = max_abs(v->bound) > 64.0 ? squash(scope, *v, 8.0) : *v;
  std::vector<int> axes = axes_where(a.dims, ok);
  int axis = axes[rng_.index(axes.size())];
  int rank = static_cast<int>(a.dims.size());
  std::string attrs = (axis == rank - 1 && rng_.chance(0.4)) ? "" : "axis = " + axis_text(axis, rank);
  graph_.features.softmax = true;
  return emit(scope, "Softmax", {a.name}, attrs, a.dims, softmax_bound(a.bound, dim_max(a.dims[static_cast<std::size_t>(axis)])));
}

// LayerNormalization over the last axis with constant scale (and bias), inputs squashed to [-2, 2].
std::optional<Val> GraphWriter::layer_norm(Scope& scope) {
  std::optional<Val> v = pick(scope, [&](const Val& x) { return !x.dims.empty() && reducible(x.dims.back()); });
  if (!v) return std::nullopt;
  Val a = max_abs(v->bound) > 2.0 ? squash(scope, *v, 2.0) : *v;
  const std::string& last = a.dims.back();
  std::int64_t width = dim_min(last) == dim_max(last) ? dim_min(last) : 1;
  std::vector<float> scale, bias;
  double scale_abs = 0, bias_abs = 0;
  for (std::int64_t i = 0; i < width; ++i) {
    scale.push_back(random_constant(0.5, 1.5) * (rng_.chance(0.2) ? -1.0f : 1.0f));
    bias.push_back(random_constant(-1.0, 1.0));
    scale_abs = std::max(scale_abs, std::abs(static_cast<double>(scale.back())));
    bias_abs = std::max(bias_abs, std::abs(static_cast<double>(bias.back())));
  }
  std::vector<std::string> args{a.name, const_f32(scope, {width}, scale)};
  bool with_bias = rng_.chance(0.6);
  if (with_bias) args.push_back(const_f32(scope, {width}, bias));
  else bias_abs = 0;
  double epsilon = rng_.chance(0.5) ? 0.1 : 0.05;
  int rank = static_cast<int>(a.dims.size());
  std::string attrs = "epsilon = " + std::string(epsilon == 0.1 ? "0.1" : "0.05");
  if (rng_.chance(0.6)) attrs += ", axis = " + axis_text(rank - 1, rank);
  graph_.features.layer_norm = true;
  return emit(scope, "LayerNormalization", args, attrs, a.dims,
              layer_norm_bound(a.bound, dim_max(last), epsilon, scale_abs, bias_abs));
}

// MatMul (any rank) or Gemm (rank 2) of a value with a constant last dim and constant weights.
std::optional<Val> GraphWriter::matmul(Scope& scope) {
  std::optional<Val> v = pick(scope, [&](const Val& x) {
    return !x.dims.empty() && dim_min(x.dims.back()) >= 1 && dim_min(x.dims.back()) == dim_max(x.dims.back()) &&
           dim_max(x.dims.back()) <= 16;
  });
  if (!v) return std::nullopt;
  Val a = max_abs(v->bound) > 16.0 ? squash(scope, *v, 4.0) : *v;
  std::int64_t k = dim_min(a.dims.back()), m = rng_.range(1, 5);
  bool gemm = a.dims.size() == 2 && rng_.chance(0.4);
  bool trans_b = gemm && rng_.chance(0.5);
  std::vector<float> w(static_cast<std::size_t>(k * m));
  std::vector<double> col(static_cast<std::size_t>(m), 0.0);
  for (std::int64_t i = 0; i < k; ++i) {
    for (std::int64_t j = 0; j < m; ++j) {
      float x = static_cast<float>(std::round(rng_.uniform(-1.0, 1.0) * 8.0) / 8.0);
      w[static_cast<std::size_t>(trans_b ? j * k + i : i * m + j)] = x;
      col[static_cast<std::size_t>(j)] += std::abs(static_cast<double>(x));
    }
  }
  double col_abs = std::max(*std::max_element(col.begin(), col.end()), 0.125);
  std::string wname = trans_b ? const_f32(scope, {m, k}, w) : const_f32(scope, {k, m}, w);
  Dims dims = a.dims;
  dims.back() = std::to_string(m);
  graph_.features.matmul = true;
  if (!gemm) return emit(scope, "MatMul", {a.name, wname}, "", dims, matmul_bound(a.bound, k, col_abs));
  double alpha = rng_.chance(0.5) ? 1.0 : 0.5, beta = rng_.chance(0.5) ? 1.0 : 2.0;
  std::string attrs = std::string("alpha = ") + (alpha == 1.0 ? "1.0" : "0.5") + ", beta = " + (beta == 1.0 ? "1.0" : "2.0");
  if (trans_b) attrs += ", transB = 1";
  Bound b = matmul_bound(a.bound, k, col_abs * alpha);
  std::vector<std::string> args{a.name, wname};
  if (rng_.chance(0.6)) {
    std::int64_t width = rng_.chance(0.7) ? m : 1;
    std::vector<float> c;
    for (std::int64_t j = 0; j < width; ++j) c.push_back(random_constant(-1.0, 1.0));
    auto [lo, hi] = std::minmax_element(c.begin(), c.end());
    args.push_back(const_f32(scope, {width}, c));
    b = add_bound(b, exact_bound(beta * *lo, beta * *hi));
    b.depth -= 1;
  }
  return emit(scope, "Gemm", args, attrs, dims, b);
}

// One of Transpose, Reshape or Concat (whichever applies).
std::optional<Val> GraphWriter::data_movement(Scope& scope) {
  int first = static_cast<int>(rng_.range(0, 2));
  for (int i = 0; i < 3; ++i) {
    int which = (first + i) % 3;
    std::optional<Val> r = which == 0 ? transpose(scope) : which == 1 ? reshape(scope) : concat(scope);
    if (r) {
      graph_.features.data_movement = true;
      return r;
    }
  }
  return std::nullopt;
}

// Transpose by a random non-identity permutation (or the default reversal).
std::optional<Val> GraphWriter::transpose(Scope& scope) {
  std::optional<Val> v = pick(scope, [](const Val& x) { return x.dims.size() >= 2; });
  if (!v) return std::nullopt;
  std::vector<std::int64_t> perm(v->dims.size());
  std::iota(perm.begin(), perm.end(), 0);
  bool reversed = rng_.chance(0.3);
  if (reversed) std::reverse(perm.begin(), perm.end());
  while (!reversed && std::is_sorted(perm.begin(), perm.end())) {
    for (std::size_t i = perm.size() - 1; i > 0; --i) std::swap(perm[i], perm[rng_.index(i + 1)]);
  }
  Dims dims;
  for (std::int64_t p : perm) dims.push_back(v->dims[static_cast<std::size_t>(p)]);
  Bound b = v->bound;
  b.depth += 1;
  return emit(scope, "Transpose", {v->name}, reversed ? "" : "perm = " + ints_text(perm), dims, b);
}

// Reshape [a, b] -> [a, b, 1], [a, b, 1] -> [a, b] or [a, 1] -> [a] with 0 (copy) entries.
std::optional<Val> GraphWriter::reshape(Scope& scope) {
  std::optional<Val> v = pick(scope, [](const Val& x) {
    return x.dims.size() == 2 || (x.dims.size() == 3 && x.dims.back() == "1");
  });
  if (!v) return std::nullopt;
  Dims dims = v->dims;
  std::vector<std::int64_t> target;
  if (dims.size() == 3) {
    dims.pop_back();
    target = {0, 0};
  } else if (dims.back() == "1" && rng_.chance(0.5)) {
    dims.pop_back();
    target = {0};
  } else {
    dims.push_back("1");
    target = {0, 0, 1};
  }
  std::string shape = const_i64(scope, {static_cast<std::int64_t>(target.size())}, target);
  Bound b = v->bound;
  b.depth += 1;
  return emit(scope, "Reshape", {v->name, shape}, "", dims, b);
}

// Concat of two values whose dims agree except (possibly) along the axis.
std::optional<Val> GraphWriter::concat(Scope& scope) {
  std::optional<Val> a = pick(scope, [](const Val& x) { return !x.dims.empty(); });
  if (!a) return std::nullopt;
  int rank = static_cast<int>(a->dims.size());
  int axis = static_cast<int>(rng_.range(0, rank - 1));
  std::optional<Val> b = pick(scope, [&](const Val& x) {
    if (static_cast<int>(x.dims.size()) != rank) return false;
    for (int k = 0; k < rank; ++k)
      if (k != axis && x.dims[static_cast<std::size_t>(k)] != a->dims[static_cast<std::size_t>(k)]) return false;
    return true;
  });
  if (!b) return std::nullopt;
  const std::string& x = a->dims[static_cast<std::size_t>(axis)];
  const std::string& y = b->dims[static_cast<std::size_t>(axis)];
  Dims dims = a->dims;
  std::string tag = "(" + x + "+" + y + ")";
  if (dim_min(x) == dim_max(x) && dim_min(y) == dim_max(y)) tag = std::to_string(dim_min(x) + dim_min(y));
  derived_min_[tag] = dim_min(x) + dim_min(y);
  derived_max_[tag] = std::min(dim_max(x), kMaxN * 4) + std::min(dim_max(y), kMaxN * 4);
  dims[static_cast<std::size_t>(axis)] = tag;
  Bound bound = join_bounds(a->bound, b->bound);
  bound.depth += 1;
  return emit(scope, "Concat", {a->name, b->name}, "axis = " + axis_text(axis, rank), dims, bound);
}

}  // namespace canary::differential
