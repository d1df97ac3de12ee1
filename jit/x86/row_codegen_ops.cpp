// The row ops as passes over one row: Sum/Mean/Max fold the prologue values
// into accumulators; Softmax takes the max, then stores exp(v - max) while
// summing it, then scales by 1 / sum; LayerNorm takes a first mean, then the
// sum and sum of squares of deviations from it (corrected two-pass
// statistics), then writes (v - mean) / sqrt(var + eps) * scale + bias.
// Passes after the first re-read the row values (see source_input_). With
// Accumulation::Compensated every sum is a Neumaier sum (accumulate).
#include <limits>

#include "jit/x86/elementwise_codegen_stages.h"
#include "jit/x86/row_codegen_stages.h"

namespace canary::jit::x86 {
namespace row {
namespace {

// Unroll a first pass by kMaxSlots when the prologue has at most this many
// arithmetic nodes and no transcendental; otherwise do not unroll.
constexpr int kUnrollMaxNodes = 8;
// Unroll of the passes that compute exp (Softmax's second pass).
constexpr int kExpUnroll = 2;

// A row-constant broadcast register as a step of `lanes` uses it.
ax::Vec in_lanes(Lanes lanes, const ax::Vec& v) { return lanes == Lanes::Single ? ax::Vec(v.xmm()) : v; }

}  // namespace

// The first pass's unroll: kMaxSlots accumulators hide the add latency of
// small prologues; a large one has enough work per vector (see sum_unroll).
int RowEmitter::value_unroll() const {
  int arithmetic = 0;
  for (std::size_t i = 0; i < prologue_.nodes.size(); ++i) {
    const EwOp op = prologue_.nodes[i].op;
    if (!live_[i] || op == EwOp::Input || op == EwOp::Constant) continue;
    if (ew_is_transcendental(op)) return 1;
    ++arithmetic;
  }
  return sum_unroll(arithmetic <= kUnrollMaxNodes ? kMaxSlots : 1);
}

// d2 as a float in lane 0 of a new xmm.
ax::Xmm RowEmitter::row_length() {
  ax::Xmm n = cc_.newXmm("n");
  cc_.vxorps(n, n, n);
  cc_.vcvtsi2ss(n, n, d2_);
  return n;
}

// The first pass: evaluates the prologue, stores the values to the output row
// when later passes read them from there (Softmax, LayerNorm), folds them.
bool RowEmitter::emit_value_pass(Fold fold, std::string& error) {
  const bool keep = (spec_.op == RowOp::Softmax || spec_.op == RowOp::LayerNorm) && !source_input_;
  const bool nan = spec_.op == RowOp::Max;
  reset_accumulators(acc_, fold == Fold::Add ? 0.0f : -std::numeric_limits<float>::infinity());
  if (nan) reset_nan_flags();
  const int unroll = value_unroll();
  auto step = [&](Lanes lanes, int offset, int slot, std::string& err) {
    ax::Vec v;
    if (!row_value(lanes, offset, v, err)) return false;
    if (keep) store(out_row_, offset, lanes, v);
    accumulate(acc_, fold, lanes, slot, v);
    if (nan) track_nan(lanes, v);
    return true;
  };
  return emit_pass(unroll, step, error);
}

// Sum/Mean/Max: one pass, the horizontal fold, one float stored at output[row].
bool RowEmitter::emit_reduction(std::string& error) {
  const Fold fold = spec_.op == RowOp::Max ? Fold::Max : Fold::Add;
  if (!emit_value_pass(fold, error)) return false;
  ax::Xmm r = fold_accumulators(acc_, fold, value_unroll());
  if (spec_.op == RowOp::Max) apply_nan_flags(r);
  if (spec_.op == RowOp::Mean) cc_.vdivss(r, r, row_length());  // d2 == 0: 0 / 0 = NaN
  cc_.vmovss(ax::dword_ptr(out_row_), r);
  check_non_finite(Lanes::Single, r);
  return true;
}

// Softmax: max; exp(v - max) stored and summed; scaled by 1 / sum. A NaN or
// +Inf in the row (or a row of -Inf) makes every exp argument or the sum NaN,
// so the row becomes NaN as in the reference kernel.
bool RowEmitter::emit_softmax(std::string& error) {
  if (!emit_value_pass(Fold::Max, error)) return false;
  const ax::Vec max = broadcast(fold_accumulators(acc_, Fold::Max, value_unroll()), "max");
  reset_accumulators(acc_, 0.0f);
  auto exp_step = [&](Lanes lanes, int offset, int slot, std::string&) {
    VecContext& c = ctx(lanes);
    ax::Vec v = load(src_row_, offset, lanes), e = c.new_vec("e");
    cc_.vsubps(e, v, in_lanes(lanes, max));
    emit_exp(c, e, e);
    store(out_row_, offset, lanes, e);
    accumulate(acc_, Fold::Add, lanes, slot, e);
    return true;
  };
  if (!emit_pass(kExpUnroll, exp_step, error)) return false;
  ax::Xmm inv = cc_.newXmm("inv");
  cc_.vmovss(inv, vec_ctx_.constant(1.0f));
  cc_.vdivss(inv, inv, fold_accumulators(acc_, Fold::Add, kExpUnroll));
  const ax::Vec scale = broadcast(inv, "inv_sum");
  auto scale_step = [&](Lanes lanes, int offset, int, std::string&) {
    ax::Vec e = load(out_row_, offset, lanes), y = ctx(lanes).new_vec("y");
    cc_.vmulps(y, e, in_lanes(lanes, scale));
    store(out_row_, offset, lanes, y);
    check_non_finite(lanes, y);
    return true;
  };
  return emit_pass(1, scale_step, error);
}

// LayerNorm's second pass and statistics. From the first mean m (lane 0),
// d = v - m is summed and squared: the corrected mean is m + sum d / n and
// var = sum d^2 / n - (sum d / n)^2 (the corrected two-pass algorithm: the
// first mean's rounding error, large when |mean| is large next to the
// spread, cancels). Sets the broadcast mean and r = 1 / sqrt(var + eps),
// from vsqrtss and vdivss (no estimates).
bool RowEmitter::emit_layer_norm_statistics(const ax::Xmm& m, ax::Vec& mean, ax::Vec& inv_std, std::string& error) {
  const ax::Xmm n = row_length();
  cc_.vdivss(m, m, n);
  const ax::Vec first_mean = broadcast(m, "mean0");
  reset_accumulators(acc_, 0.0f);
  reset_accumulators(dev_acc_, 0.0f);
  auto deviation_step = [&](Lanes lanes, int offset, int slot, std::string&) {
    ax::Vec v = load(src_row_, offset, lanes), d = ctx(lanes).new_vec("dev");
    cc_.vsubps(d, v, in_lanes(lanes, first_mean));
    accumulate(dev_acc_, Fold::Add, lanes, slot, d);
    accumulate_square(acc_, lanes, slot, d);
    return true;
  };
  const int unroll = sum_unroll(kMaxSlots);
  if (!emit_pass(unroll, deviation_step, error)) return false;
  ax::Xmm shift = fold_accumulators(dev_acc_, Fold::Add, unroll);
  ax::Xmm var = fold_accumulators(acc_, Fold::Add, unroll);
  ax::Xmm t = cc_.newXmm("t");
  cc_.vdivss(shift, shift, n);
  cc_.vaddss(m, m, shift);
  mean = broadcast(m, "mean");
  cc_.vdivss(var, var, n);
  cc_.vmulss(t, shift, shift);
  cc_.vsubss(var, var, t);
  cc_.vxorps(t, t, t);
  cc_.vmaxss(var, t, var);  // rounding may leave var slightly below 0; NaN stays NaN
  cc_.vaddss(var, var, vec_ctx_.constant(spec_.epsilon));
  cc_.vsqrtss(var, var, var);
  cc_.vmovss(t, vec_ctx_.constant(1.0f));
  cc_.vdivss(var, t, var);
  inv_std = broadcast(var, "inv_std");
  return true;
}

// LayerNorm: the sum, the statistics, then (v - mean) * r * scale[j] + bias[j].
bool RowEmitter::emit_layer_norm(std::string& error) {
  if (!emit_value_pass(Fold::Add, error)) return false;
  ax::Vec mean, inv_std;
  if (!emit_layer_norm_statistics(fold_accumulators(acc_, Fold::Add, value_unroll()), mean, inv_std, error))
    return false;
  auto norm_step = [&](Lanes lanes, int offset, int, std::string&) {
    ax::Vec v = load(src_row_, offset, lanes), y = ctx(lanes).new_vec("y");
    cc_.vsubps(y, v, in_lanes(lanes, mean));
    cc_.vmulps(y, y, in_lanes(lanes, inv_std));
    if (spec_.has_scale) cc_.vmulps(y, y, load(scale_, offset, lanes));
    if (spec_.has_bias) cc_.vaddps(y, y, load(bias_, offset, lanes));
    store(out_row_, offset, lanes, y);
    check_non_finite(lanes, y);
    return true;
  };
  return emit_pass(2, norm_step, error);
}

// The row op's passes for the current row.
bool RowEmitter::emit_row_op(std::string& error) {
  switch (spec_.op) {
    case RowOp::Sum:
    case RowOp::Mean:
    case RowOp::Max: return emit_reduction(error);
    case RowOp::Softmax: return emit_softmax(error);
    case RowOp::LayerNorm: return emit_layer_norm(error);
  }
  error = "row kernel: unknown row op";
  return false;
}

}  // namespace row
}  // namespace canary::jit::x86
