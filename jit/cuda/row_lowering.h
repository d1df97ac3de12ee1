// How a row kernel folds values into an accumulator and accumulators into
// each other, written against a math machine M (PtxMath emits it, CpuMath
// evaluates it), so the PTX row kernel (ptx_row.cpp) and its host model
// (tests/cuda/row_model.cpp) fold the same way.
#pragma once

#include <cstdint>

#include "jit/cuda/ptx_math.h"

namespace canary::jit::cuda {

enum class RowFold : std::uint8_t {
  Sum,     // s + v (Neumaier-compensated when asked)
  Max,     // ReduceMax: a greater value or a NaN replaces s, and a NaN sticks
  MaxNum,  // Softmax's max: NaNs are ignored (max.f32), as the reference's std::max
};

// An accumulator: the running value and, for compensated sums, the
// running compensation (the rounding errors not yet added to s).
template <class M>
struct RowAcc {
  typename M::F s;
  typename M::F c;
};

// Neumaier two-sum: s + v and the error of that rounding.
template <class M>
RowAcc<M> two_sum(M& m, typename M::F s, typename M::F v) {
  const typename M::F t = m.add(s, v);
  const typename M::P s_bigger = m.ge(m.abs(s), m.abs(v));
  const typename M::F err = m.select(s_bigger, m.add(m.sub(s, t), v), m.add(m.sub(v, t), s));
  return {t, err};
}

// The accumulator after folding in one value.
template <class M>
RowAcc<M> fold_value(M& m, RowAcc<M> a, typename M::F v, RowFold fold, bool compensated) {
  switch (fold) {
    case RowFold::Sum: {
      if (!compensated) return {m.add(a.s, v), a.c};
      const RowAcc<M> t = two_sum(m, a.s, v);
      return {t.s, m.add(a.c, t.c)};
    }
    case RowFold::Max: return {m.select(m.p_or(m.gt(v, a.s), m.is_nan(v)), v, a.s), a.c};
    case RowFold::MaxNum: return {m.max_num(a.s, v), a.c};
  }
  return a;
}

// Two accumulators folded into one (a first: the order matters only in the
// rounding, and both the kernel and its model fold in the same order).
template <class M>
RowAcc<M> fold_pair(M& m, RowAcc<M> a, RowAcc<M> b, RowFold fold, bool compensated) {
  if (fold != RowFold::Sum || !compensated) return fold_value(m, a, b.s, fold, false);
  const RowAcc<M> t = two_sum(m, a.s, b.s);
  return {t.s, m.add(m.add(a.c, b.c), t.c)};
}

// The folded value.
template <class M>
typename M::F fold_result(M& m, RowAcc<M> a, RowFold fold, bool compensated) {
  return fold == RowFold::Sum && compensated ? m.add(a.s, a.c) : a.s;
}

// The per-element and per-row arithmetic of the row ops after folding.
// Softmax: exp(v - max), then e / sum (div.full in fast mode).
template <class M>
typename M::F softmax_exp(M& m, typename M::F v, typename M::F max, MathMode mode) {
  return ptx_math::exp(m, m.sub(v, max), mode);
}
template <class M>
typename M::F softmax_value(M& m, typename M::F e, typename M::F sum, MathMode mode) {
  return mode == MathMode::Fast ? m.div_approx(e, sum) : m.div(e, sum);
}
// LayerNorm: 1 / sqrt(sum of squared deviations / n + epsilon), IEEE-rounded.
template <class M>
typename M::F layer_norm_rstd(M& m, typename M::F squares, typename M::F n, float epsilon) {
  return m.rcp(m.sqrt(m.add(m.div(squares, n), m.c(epsilon))));
}
// (v - mean) * rstd, then times scale and plus bias where given (null: none).
template <class M>
typename M::F layer_norm_value(M& m, typename M::F v, typename M::F mean, typename M::F rstd,
                               const typename M::F* scale, const typename M::F* bias) {
  typename M::F y = m.mul(m.sub(v, mean), rstd);
  if (scale != nullptr) y = m.mul(y, *scale);
  if (bias != nullptr) y = m.add(y, *bias);
  return y;
}

}  // namespace canary::jit::cuda
