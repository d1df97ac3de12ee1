// Reference reductions and normalisations: the ReduceX family (Sum, Mean,
// Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp), ArgMax/ArgMin,
// Softmax/LogSoftmax and LayerNormalization (opset 17).
//
// Accumulation precision: sums, means, softmax denominators and layer-norm
// statistics accumulate in double even for f32 tensors (integer sums in
// int64, wrapping on overflow), and results are rounded to the element type
// only when stored.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"
#include "kernels/reference/axis.h"
#include "kernels/reference/broadcast_index.h"
#include "kernels/reference/element_dispatch.h"
#include "kernels/reference/reduce_folds.h"
#include "kernels/reference/simd_loops.h"

namespace canary::kernels {
namespace {

// Name of a reduction for messages.
const char* reduce_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "ReduceSum";
    case ReduceOp::Mean: return "ReduceMean";
    case ReduceOp::Max: return "ReduceMax";
    case ReduceOp::Min: return "ReduceMin";
    case ReduceOp::Prod: return "ReduceProd";
    case ReduceOp::L1: return "ReduceL1";
    case ReduceOp::L2: return "ReduceL2";
    case ReduceOp::SumSquare: return "ReduceSumSquare";
    case ReduceOp::LogSum: return "ReduceLogSum";
    case ReduceOp::LogSumExp: return "ReduceLogSumExp";
  }
  return "?";
}

// Marks the reduced dims; empty axes reduce all. Rejects out-of-range and duplicate axes.
std::vector<bool> reduced_dims(const char* name, const std::vector<std::int64_t>& axes, const Shape& shape) {
  const auto rank = static_cast<std::int64_t>(shape.size());
  std::vector<bool> reduced(shape.size(), axes.empty());
  for (std::int64_t a : axes) {
    const std::int64_t d = detail::normalize_axis(name, a, rank, shape);
    if (reduced[static_cast<std::size_t>(d)])
      throw Error(ErrorKind::Shape, std::string(name) + ": axis " + std::to_string(a) + " is given twice");
    reduced[static_cast<std::size_t>(d)] = true;
  }
  return reduced;
}

// x as [outer, reduced, inner] when its reduced dims (ignoring size-1 dims)
// are one contiguous run, else nullopt.
std::optional<std::array<std::int64_t, 3>> single_reduced_run(const Shape& shape, const std::vector<bool>& reduced) {
  std::array<std::int64_t, 3> s{1, 1, 1};
  int part = 0;  // 0: before the run, 1: in it, 2: after it
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (reduced[d] && part == 2) return std::nullopt;
    if (reduced[d]) part = 1;
    else if (part == 1) part = 2;
    s[static_cast<std::size_t>(part)] *= shape[d];
  }
  return s;
}

// Calls f(element index, slot index) for every element of a tensor of the
// given shape, the slot being the output element it reduces into.
template <typename F>
void for_each_slot(const Shape& shape, const std::vector<bool>& reduced, F f) {
  Shape kept(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) kept[d] = reduced[d] ? 1 : shape[d];
  const std::array<Shape, 1> strides{detail::broadcast_strides(kept, shape.size())};
  detail::for_each_strided<1>(shape, strides, {0}, [&](std::int64_t i, const std::array<std::int64_t, 1>& at) {
    f(i, at[0]);
  });
}

// The single-run case: each slot takes its terms in the same order as the
// generic walk (ascending reduced index), with the inner loop running along
// contiguous memory.
template <detail::Fold F, typename T, typename Acc>
void accumulate_run(const T* px, const std::array<std::int64_t, 3>& s, std::vector<Acc>& acc) {
  const auto [outer, length, inner] = s;
  for (std::int64_t o = 0; o < outer; ++o) {
    Acc* slots = acc.data() + o * inner;
    // Slots are independent, so each row vectorises with the same terms in
    // the same order (kernels/reference/simd_loops.h says why it must be asked for).
    for (std::int64_t r = 0; r < length; ++r)
      detail::fold_elements(px + (o * length + r) * inner, slots, inner, detail::fold_step<F, T, Acc>);
  }
}

// Folds x into acc (one slot per output element) with one fold.
template <detail::Fold F, typename T, typename Acc>
void accumulate_with(const Tensor& x, const std::vector<bool>& reduced, std::vector<Acc>& acc) {
  if (x.numel() == 0) return;
  const T* px = x.data<T>();
  if (const auto run = single_reduced_run(x.shape(), reduced)) return accumulate_run<F, T, Acc>(px, *run, acc);
  for_each_slot(x.shape(), reduced, [&](std::int64_t i, std::int64_t slot) {
    Acc& s = acc[static_cast<std::size_t>(slot)];
    s = detail::fold_step<F, T, Acc>(px[i], s);
  });
}

// Folds x into acc, starting each slot at the fold's initial value.
template <typename T, typename Acc>
void accumulate(detail::Fold fold, const Tensor& x, const std::vector<bool>& reduced, std::vector<Acc>& acc) {
  using detail::Fold;
  std::fill(acc.begin(), acc.end(), detail::fold_init<T, Acc>(fold));
  switch (fold) {
    case Fold::Add: return accumulate_with<Fold::Add, T, Acc>(x, reduced, acc);
    case Fold::AddAbs: return accumulate_with<Fold::AddAbs, T, Acc>(x, reduced, acc);
    case Fold::AddSquare: return accumulate_with<Fold::AddSquare, T, Acc>(x, reduced, acc);
    case Fold::Multiply: return accumulate_with<Fold::Multiply, T, Acc>(x, reduced, acc);
    case Fold::Max: return accumulate_with<Fold::Max, T, Acc>(x, reduced, acc);
    case Fold::Min: return accumulate_with<Fold::Min, T, Acc>(x, reduced, acc);
  }
}

// log(sum(exp(x))) per slot, in double, as max + log(sum(exp(x - max))) so
// that large inputs do not overflow exp. A slot whose max is not finite
// (empty or all -Inf: -Inf; any +Inf: +Inf; NaN) is that max.
template <typename T>
std::vector<double> log_sum_exp(const Tensor& x, const std::vector<bool>& reduced, std::size_t slots) {
  std::vector<double> max(slots), sum(slots, 0.0);
  accumulate<T, double>(detail::Fold::Max, x, reduced, max);
  if (x.numel() > 0) {
    const T* px = x.data<T>();
    for_each_slot(x.shape(), reduced, [&](std::int64_t i, std::int64_t slot) {
      const auto s = static_cast<std::size_t>(slot);
      if (std::isfinite(max[s])) sum[s] += std::exp(static_cast<double>(px[i]) - max[s]);
    });
  }
  for (std::size_t s = 0; s < slots; ++s)
    if (std::isfinite(max[s])) max[s] += std::log(sum[s]);
  return max;
}

// A double result stored as T. An integer type takes it truncated toward
// zero (NumPy's astype) when it is finite and in range; otherwise there is
// no value to store, which is an input error naming the op and the value.
template <typename T>
T store_double(const char* name, double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    using Limits = std::numeric_limits<T>;
    if (!(v >= static_cast<double>(Limits::lowest()) && v < static_cast<double>(Limits::max()) + 1.0))
      throw Error(ErrorKind::Input, std::string(name) + ": the result " + std::to_string(v) +
                                        " is not representable in " + std::string(dtype_name(dtype_of<T>::value)));
    return static_cast<T>(v);
  }
}

// The output shape: reduced dims dropped, or kept as 1 with keepdims.
Shape reduced_shape(const Shape& in, const std::vector<bool>& reduced, bool keepdims) {
  Shape out;
  for (std::size_t d = 0; d < reduced.size(); ++d) {
    if (!reduced[d]) out.push_back(in[d]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

// Reduces x into y for one element type.
template <typename T>
void reduce_typed(const ReduceParams& p, const std::vector<bool>& reduced, const Tensor& x, Tensor& y) {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, std::int64_t>;
  const char* name = reduce_name(p.op);
  const Shape out = reduced_shape(x.shape(), reduced, p.keepdims);
  const auto out_n = static_cast<std::size_t>(checked_numel(out));
  std::int64_t count = 1;
  for (std::size_t d = 0; d < reduced.size(); ++d)
    if (reduced[d]) count *= x.shape()[d];
  if (p.op == ReduceOp::LogSumExp) {
    const std::vector<double> lse = log_sum_exp<T>(x, reduced, out_n);
    y.reset(x.dtype(), out);
    T* py = y.data<T>();
    for (std::size_t i = 0; i < out_n; ++i) py[i] = store_double<T>(name, lse[i]);
    return;
  }
  std::vector<Acc> acc(out_n);
  accumulate<T, Acc>(detail::fold_of(p.op), x, reduced, acc);
  y.reset(x.dtype(), out);
  T* py = y.data<T>();
  for (std::size_t i = 0; i < out_n; ++i) {
    const Acc v = acc[i];
    switch (p.op) {
      // Mean of nothing: NaN for floats (0/0), 0 for integers; integer means truncate.
      case ReduceOp::Mean:
        if constexpr (std::is_floating_point_v<T>) py[i] = static_cast<T>(v / static_cast<Acc>(count));
        else py[i] = static_cast<T>(count == 0 ? 0 : v / count);
        break;
      case ReduceOp::L2: py[i] = store_double<T>(name, std::sqrt(static_cast<double>(v))); break;
      case ReduceOp::LogSum: py[i] = store_double<T>(name, std::log(static_cast<double>(v))); break;
      default: py[i] = static_cast<T>(v);
    }
  }
}

using detail::AxisSplit;
using detail::split_at;

// ArgMax/ArgMin of one element type.
template <typename T>
void arg_reduce_typed(const ArgReduceParams& p, std::int64_t axis, const Tensor& x, Tensor& y) {
  const AxisSplit s = split_at(x.shape(), axis);
  Shape out;
  for (std::size_t d = 0; d < x.shape().size(); ++d) {
    if (static_cast<std::int64_t>(d) != axis) out.push_back(x.shape()[d]);
    else if (p.keepdims) out.push_back(1);
  }
  const T* px = x.data<T>();
  y.reset(DType::I64, out);
  std::int64_t* py = y.data<std::int64_t>();
  // True when candidate v (later along the axis) replaces the best so far.
  const auto better = [&](T v, T best) {
    if constexpr (std::is_floating_point_v<T>) {
      if (best != best) return p.select_last_index && v != v;  // NaN holds unless a later NaN may take over
      if (v != v) return true;
    }
    if (p.select_last_index) return p.max ? !(v < best) : !(best < v);
    return p.max ? best < v : v < best;
  };
  for (std::int64_t o = 0; o < s.outer; ++o)
    for (std::int64_t in = 0; in < s.inner; ++in) {
      const T* line = px + o * s.dim * s.inner + in;
      std::int64_t at = 0;
      for (std::int64_t k = 1; k < s.dim; ++k)
        if (better(line[k * s.inner], line[at * s.inner])) at = k;
      py[o * s.inner + in] = at;
    }
}

// Softmax of one element type; each line along the axis subtracts its max before exp.
template <typename T>
void softmax_typed(std::int64_t axis, const Tensor& x, Tensor& y, bool log) {
  const AxisSplit s = split_at(x.shape(), axis);
  const T* px = x.data<T>();
  y.reset(x.dtype(), x.shape());
  T* py = y.data<T>();
  for (std::int64_t o = 0; o < s.outer; ++o) {
    for (std::int64_t in = 0; in < s.inner; ++in) {
      const std::int64_t base = o * s.dim * s.inner + in;
      double max = -std::numeric_limits<double>::infinity();
      for (std::int64_t k = 0; k < s.dim; ++k) max = std::max(max, static_cast<double>(px[base + k * s.inner]));
      double sum = 0;
      for (std::int64_t k = 0; k < s.dim; ++k) sum += std::exp(static_cast<double>(px[base + k * s.inner]) - max);
      if (log) {
        const double log_sum = std::log(sum);
        for (std::int64_t k = 0; k < s.dim; ++k)
          py[base + k * s.inner] = static_cast<T>(static_cast<double>(px[base + k * s.inner]) - max - log_sum);
      } else {
        for (std::int64_t k = 0; k < s.dim; ++k)
          py[base + k * s.inner] = static_cast<T>(std::exp(static_cast<double>(px[base + k * s.inner]) - max) / sum);
      }
    }
  }
}

// Offsets into a (unidirectionally broadcast) scale/bias for each of the n normalised elements.
std::vector<std::int64_t> norm_offsets(const char* what, const Tensor& t, std::span<const std::int64_t> norm_shape) {
  if (t.rank() > static_cast<int>(norm_shape.size()))
    throw Error(ErrorKind::Shape, std::string("LayerNormalization: ") + what + " " + shape_to_string(t.shape()) +
                                      " does not broadcast to the normalised dims " + shape_to_string(norm_shape));
  const std::size_t lead = norm_shape.size() - t.shape().size();
  for (std::size_t i = 0; i < t.shape().size(); ++i)
    if (t.shape()[i] != 1 && t.shape()[i] != norm_shape[lead + i])
      throw Error(ErrorKind::Shape, std::string("LayerNormalization: ") + what + " " + shape_to_string(t.shape()) +
                                        " does not broadcast to the normalised dims " + shape_to_string(norm_shape));
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(checked_numel(norm_shape)));
  const std::array<Shape, 1> strides{detail::broadcast_strides(t.shape(), norm_shape.size())};
  detail::for_each_strided<1>(norm_shape, strides, {0}, [&](std::int64_t i, const std::array<std::int64_t, 1>& at) {
    offsets[static_cast<std::size_t>(i)] = at[0];
  });
  return offsets;
}

// Resets an optional statistics output to [d0..d(axis-1), 1, ..., 1].
template <typename T>
T* reset_stats(Tensor* t, const Shape& x_shape, std::int64_t axis, DType dtype) {
  if (!t) return nullptr;
  Shape shape(x_shape.size(), 1);
  for (std::int64_t d = 0; d < axis; ++d) shape[static_cast<std::size_t>(d)] = x_shape[static_cast<std::size_t>(d)];
  t->reset(dtype, shape);
  return t->data<T>();
}

// LayerNormalization of one element type.
template <typename T>
void layer_norm_typed(const LayerNormParams& p, std::int64_t axis, const Tensor& x, const Tensor& scale,
                      const Tensor* bias, Tensor& y, Tensor* mean, Tensor* inv_std) {
  const Shape x_shape = x.shape();
  const std::span<const std::int64_t> norm_shape(x_shape.begin() + axis, x_shape.end());
  const std::vector<std::int64_t> s_off = norm_offsets("scale", scale, norm_shape);
  const std::vector<std::int64_t> b_off = bias ? norm_offsets("bias", *bias, norm_shape) : std::vector<std::int64_t>{};
  const AxisSplit s = split_at(x_shape, axis);
  const std::int64_t n = checked_numel(norm_shape);
  const T* px = x.data<T>();
  const T* ps = scale.data<T>();
  const T* pb = bias ? bias->data<T>() : nullptr;
  y.reset(x.dtype(), x_shape);
  T* py = y.data<T>();
  T* pm = reset_stats<T>(mean, x_shape, axis, x.dtype());
  T* pi = reset_stats<T>(inv_std, x_shape, axis, x.dtype());
  for (std::int64_t o = 0; o < s.outer; ++o) {
    const T* row = px + o * n;
    double sum = 0;
    for (std::int64_t k = 0; k < n; ++k) sum += static_cast<double>(row[k]);
    const double mu = sum / static_cast<double>(n);
    double sq = 0;
    for (std::int64_t k = 0; k < n; ++k) sq += (static_cast<double>(row[k]) - mu) * (static_cast<double>(row[k]) - mu);
    const double r = 1.0 / std::sqrt(sq / static_cast<double>(n) + p.epsilon);
    for (std::int64_t k = 0; k < n; ++k) {
      const auto ku = static_cast<std::size_t>(k);
      double v = (static_cast<double>(row[k]) - mu) * r * static_cast<double>(ps[s_off[ku]]);
      if (pb) v += static_cast<double>(pb[b_off[ku]]);
      py[o * n + k] = static_cast<T>(v);
    }
    if (pm) pm[o] = static_cast<T>(mu);
    if (pi) pi[o] = static_cast<T>(r);
  }
}

}  // namespace

void reduce(const ReduceParams& p, const Tensor& x, Tensor& y) {
  const char* name = reduce_name(p.op);
  if (p.axes.empty() && p.noop_with_empty_axes) return identity(x, y);
  if (&y == &x) {
    Tensor out;
    reduce(p, x, out);
    y = std::move(out);
    return;
  }
  const std::vector<bool> reduced = reduced_dims(name, p.axes, x.shape());
  detail::dispatch_numeric(x.dtype(), name, [&](auto tag) { reduce_typed<decltype(tag)>(p, reduced, x, y); });
}

void softmax(std::int64_t axis, const Tensor& x, Tensor& y) {
  const std::int64_t a = detail::normalize_axis("Softmax", axis, x.rank(), x.shape());
  detail::dispatch_float(x.dtype(), "Softmax", [&](auto tag) { softmax_typed<decltype(tag)>(a, x, y, false); });
}

void arg_reduce(const ArgReduceParams& p, const Tensor& x, Tensor& y) {
  const char* name = p.max ? "ArgMax" : "ArgMin";
  const std::int64_t axis = detail::normalize_axis(name, p.axis, x.rank(), x.shape());
  if (x.shape()[static_cast<std::size_t>(axis)] == 0)
    throw Error(ErrorKind::Shape, std::string(name) + ": reduces over the empty axis " + std::to_string(axis) +
                                      " of shape " + shape_to_string(x.shape()));
  if (&y == &x) {
    Tensor out;
    arg_reduce(p, x, out);
    y = std::move(out);
    return;
  }
  detail::dispatch_numeric(x.dtype(), name, [&](auto tag) { arg_reduce_typed<decltype(tag)>(p, axis, x, y); });
}

void log_softmax(std::int64_t axis, const Tensor& x, Tensor& y) {
  const std::int64_t a = detail::normalize_axis("LogSoftmax", axis, x.rank(), x.shape());
  detail::dispatch_float(x.dtype(), "LogSoftmax", [&](auto tag) { softmax_typed<decltype(tag)>(a, x, y, true); });
}

void layer_norm(const LayerNormParams& p, const Tensor& x, const Tensor& scale, const Tensor* bias, Tensor& y,
                Tensor* mean, Tensor* inv_std) {
  if (&y == &x || &y == &scale || &y == bias) {
    Tensor out;
    layer_norm(p, x, scale, bias, out, mean, inv_std);
    y = std::move(out);
    return;
  }
  const std::int64_t axis = detail::normalize_axis("LayerNormalization", p.axis, x.rank(), x.shape());
  for (const Tensor* t : {&scale, bias})
    if (t && t->dtype() != x.dtype())
      throw Error(ErrorKind::Input, "LayerNormalization: scale and bias must have x's dtype " +
                                        std::string(dtype_name(x.dtype())) + ", got " + t->type_string());
  detail::dispatch_float(x.dtype(), "LayerNormalization", [&](auto tag) {
    layer_norm_typed<decltype(tag)>(p, axis, x, scale, bias, y, mean, inv_std);
  });
}

}  // namespace canary::kernels
