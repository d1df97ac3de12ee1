// PTX emission for fused row kernels: parameters, the loop over a block's
// rows, the per-thread passes over a row's elements, the block-wide fold
// (warp butterfly, then per-warp partials in shared memory) and each row
// op's tail. Folding and the row ops' arithmetic come from row_lowering.h,
// the prologue's ops from ew_lowering.h.
#include "jit/cuda/ptx_row.h"

#include <vector>

#include "jit/cuda/ew_lowering.h"
#include "jit/cuda/ptx_builder.h"
#include "jit/cuda/ptx_elementwise.h"
#include "jit/cuda/ptx_math_ops.h"
#include "jit/cuda/row_lowering.h"

namespace canary::jit::cuda {
namespace {

using Acc = RowAcc<PtxMath>;

constexpr const char* kPartials = "canary_partials";
// Shared memory: one (sum, compensation) pair per warp.
constexpr unsigned kMaxWarps = kMaxRowThreads / 32;

class RowPtxEmitter {
 public:
  explicit RowPtxEmitter(const FusedRowSpec& spec) : spec_(spec), pro_(spec.prologue), m_(b_) {}

  std::string emit(const std::string& target) {
    load_parameters();
    emit_kernel();
    const std::string shared =
        "\t.shared .align 4 .f32 " + std::string(kPartials) + "[" + std::to_string(2 * kMaxWarps) + "];\n";
    return ptx_module("Canary fused row kernel\n// " + spec_.key(), target, kRowEntryName, parameters(),
                      b_.declarations() + shared + b_.body());
  }

 private:
  bool compensated() const { return spec_.accumulation == Accumulation::Compensated; }
  bool full_row_output() const { return spec_.op == RowOp::Softmax || spec_.op == RowOp::LayerNorm; }

  std::vector<std::string> parameters() const {
    std::vector<std::string> params;
    for (int k = 0; k < pro_.num_inputs; ++k) params.push_back(".param .u64 in_" + std::to_string(k));
    for (const char* name : {"out", "scale", "bias"}) params.push_back(std::string(".param .u64 ") + name);
    for (int k = 0; k < pro_.num_inputs; ++k) {
      params.push_back(".param .s64 s0_" + std::to_string(k));
      params.push_back(".param .s64 s1_" + std::to_string(k));
    }
    for (const char* name : {"d1", "d2", "row_begin", "row_end", "magic1", "shift1"})
      params.push_back(std::string(".param .u32 ") + name);
    params.push_back(".param .u64 flag");
    return params;
  }

  void load_parameters() {
    for (int k = 0; k < pro_.num_inputs; ++k) bases_.push_back(b_.param_pointer("in_" + std::to_string(k)));
    out_ = b_.param_pointer("out");
    if (spec_.has_scale) scale_ = b_.param_pointer("scale");
    if (spec_.has_bias) bias_ = b_.param_pointer("bias");
    for (int k = 0; k < pro_.num_inputs; ++k) {
      stride0_.push_back(b_.param_s64("s0_" + std::to_string(k)));
      stride1_.push_back(b_.param_s64("s1_" + std::to_string(k)));
    }
    row_begin_ = b_.param_u32("row_begin");
    row_end_ = b_.param_u32("row_end");
    if (pro_.exact_dims) {
      const auto& d = *pro_.exact_dims;
      const RowLaunchScalars s = make_row_scalars(d[1] > 0 ? d[1] : 1, d[2], 0, 0);
      trivial_d1_ = s.d1 == 1;
      d1_ = b_.immediate_u32(s.d1), d2_ = b_.immediate_u32(s.d2);
      magic1_ = b_.immediate_u32(s.magic1), shift1_ = b_.immediate_u32(s.shift1);
    } else {
      d1_ = b_.param_u32("d1"), d2_ = b_.param_u32("d2");
      magic1_ = b_.param_u32("magic1"), shift1_ = b_.param_u32("shift1");
    }
    if (pro_.check_non_finite) flag_ = b_.param_pointer("flag");
  }

  PtxL add64(PtxL a, PtxL b) {
    const PtxL r = b_.new_l();
    b_.emit("add.s64 " + ptx_reg(r) + ", " + ptx_reg(a) + ", " + ptx_reg(b));
    return r;
  }

  // base + 4 j.
  PtxL element_address(PtxL base, PtxI j) {
    const PtxL off = b_.new_l();
    b_.emit("mul.wide.u32 " + ptx_reg(off) + ", " + ptx_reg(j) + ", 4");
    return add64(base, off);
  }

  PtxF load(const char* op, PtxL addr) {
    const PtxF v = b_.new_f();
    b_.emit(std::string(op) + " " + ptx_reg(v) + ", [" + ptx_reg(addr) + "]");
    return v;
  }

  void store(PtxL addr, PtxF v) { b_.emit("st.global.f32 [" + ptx_reg(addr) + "], " + ptx_reg(v)); }

  void assign(PtxF dst, PtxF src) { b_.emit("mov.f32 " + ptx_reg(dst) + ", " + ptx_reg(src)); }

  // A loop-carried accumulator set to its fold's starting value.
  Acc new_accumulator(RowFold fold) {
    const Acc a{b_.new_f(), b_.new_f()};
    const float start = fold == RowFold::Sum ? 0.0f : -std::numeric_limits<float>::infinity();
    b_.emit("mov.f32 " + ptx_reg(a.s) + ", " + ptx_f32_literal(start));
    b_.emit("mov.f32 " + ptx_reg(a.c) + ", " + ptx_f32_literal(0.0f));
    return a;
  }

  void assign(const Acc& dst, const Acc& src) {
    assign(dst.s, src.s);
    assign(dst.c, src.c);
  }

  // Per row: its (i0, i1), each input's row base, the row values of
  // inner-broadcast inputs, and the output row's base.
  void begin_row(PtxI row) {
    const PtxI i0 = trivial_d1_ ? row : b_.divide(row, magic1_, shift1_);
    const PtxI i1 = trivial_d1_ ? b_.immediate_u32(0) : b_.remainder(row, i0, d1_);
    const PtxL w0 = b_.widen(i0), w1 = b_.widen(i1);
    // An empty row reads nothing: its row values' inputs may hold no element.
    const PtxP has_elements = b_.new_p();
    b_.emit("setp.ne.u32 " + ptx_reg(has_elements) + ", " + ptx_reg(d2_) + ", 0");
    row_bases_.assign(pro_.num_inputs, PtxL{});
    row_values_.assign(pro_.num_inputs, PtxF{});
    for (int k = 0; k < pro_.num_inputs; ++k) {
      const PtxL off = b_.new_l(), bytes = b_.new_l();
      b_.emit("mul.lo.s64 " + ptx_reg(off) + ", " + ptx_reg(w0) + ", " + ptx_reg(stride0_[k]));
      b_.emit("mad.lo.s64 " + ptx_reg(off) + ", " + ptx_reg(w1) + ", " + ptx_reg(stride1_[k]) + ", " + ptx_reg(off));
      b_.emit("shl.b64 " + ptx_reg(bytes) + ", " + ptx_reg(off) + ", 2");
      row_bases_[k] = add64(bases_[k], bytes);
      if (!pro_.inner_broadcast[k]) continue;
      row_values_[k] = b_.new_f();
      b_.emit("@" + ptx_reg(has_elements) + " ld.global.nc.f32 " + ptx_reg(row_values_[k]) + ", [" +
              ptx_reg(row_bases_[k]) + "]");
    }
    const PtxL out_index = b_.new_l(), bytes = b_.new_l();
    if (full_row_output()) b_.emit("mul.wide.u32 " + ptx_reg(out_index) + ", " + ptx_reg(row) + ", " + ptx_reg(d2_));
    else b_.emit("cvt.u64.u32 " + ptx_reg(out_index) + ", " + ptx_reg(row));
    b_.emit("shl.b64 " + ptx_reg(bytes) + ", " + ptx_reg(out_index) + ", 2");
    out_row_ = add64(out_, bytes);
  }

  // The prologue's row value at element j of the current row.
  PtxF prologue_value(PtxI j) {
    std::vector<PtxF> values;
    values.reserve(pro_.nodes.size());
    for (const EwNode& n : pro_.nodes) {
      b_.comment(ew_op_name(n.op));
      if (n.op != EwOp::Input) values.push_back(lower_node(m_, n, values, pro_.math));
      else if (pro_.inner_broadcast[n.input]) values.push_back(row_values_[n.input]);
      else values.push_back(load("ld.global.nc.f32", element_address(row_bases_[n.input], j)));
    }
    return values[pro_.outputs.front()];
  }

  // for (j = tid; j < d2; j += ntid) body(j).
  template <class Body>
  void for_each_element(const char* stem, Body body) {
    const PtxI j = b_.new_i();
    b_.emit("mov.u32 " + ptx_reg(j) + ", " + ptx_reg(tid_));
    b_.strided_loop(j, d2_, ntid_, stem, [&] { body(j); });
  }

  // Every thread's accumulator folded into one, returned in every thread.
  // Only compensated sums move their compensation; the other folds ignore it.
  Acc block_fold(Acc a, RowFold fold) {
    const bool paired = compensated() && fold == RowFold::Sum;
    const std::string comp_offset = "+" + std::to_string(4 * kMaxWarps);
    b_.comment("block fold: warp butterfly");
    for (int offset = 16; offset >= 1; offset /= 2) {
      const Acc other{b_.new_f(), b_.new_f()};
      b_.emit("shfl.sync.bfly.b32 " + ptx_reg(other.s) + ", " + ptx_reg(a.s) + ", " + std::to_string(offset) +
              ", 31, -1");
      if (paired)
        b_.emit("shfl.sync.bfly.b32 " + ptx_reg(other.c) + ", " + ptx_reg(a.c) + ", " + std::to_string(offset) +
                ", 31, -1");
      a = fold_pair(m_, a, other, fold, compensated());
    }
    b_.comment("block fold: one partial per warp, folded in warp order");
    const std::string skip = b_.new_label("partial");
    const PtxP not_lane0 = b_.new_p();
    b_.emit("setp.ne.u32 " + ptx_reg(not_lane0) + ", " + ptx_reg(lane_) + ", 0");
    b_.emit("@" + ptx_reg(not_lane0) + " bra " + skip);
    b_.emit("st.shared.f32 [" + ptx_reg(partial_) + "], " + ptx_reg(a.s));
    if (paired) b_.emit("st.shared.f32 [" + ptx_reg(partial_) + comp_offset + "], " + ptx_reg(a.c));
    b_.place_label(skip);
    b_.emit("bar.sync 0");
    const Acc total = new_accumulator(fold);
    b_.emit("ld.shared.f32 " + ptx_reg(total.s) + ", [" + ptx_reg(partials_) + "]");
    if (paired) b_.emit("ld.shared.f32 " + ptx_reg(total.c) + ", [" + ptx_reg(partials_) + comp_offset + "]");
    const PtxI w = b_.immediate_u32(1), one = b_.immediate_u32(1);
    b_.strided_loop(w, nwarps_, one, "fold", [&] {
      const PtxI at = b_.new_i();
      b_.emit("mad.lo.u32 " + ptx_reg(at) + ", " + ptx_reg(w) + ", 4, " + ptx_reg(partials_));
      const Acc next{b_.new_f(), b_.new_f()};
      b_.emit("ld.shared.f32 " + ptx_reg(next.s) + ", [" + ptx_reg(at) + "]");
      if (paired) b_.emit("ld.shared.f32 " + ptx_reg(next.c) + ", [" + ptx_reg(at) + comp_offset + "]");
      assign(total, fold_pair(m_, total, next, fold, compensated()));
    });
    // The partials are rewritten by the next fold only after every thread read them.
    b_.emit("bar.sync 0");
    return total;
  }

  // Records a non-finite written value in the canary register.
  void note_non_finite(PtxF v) {
    if (!pro_.check_non_finite) return;
    const PtxP finite = m_.is_finite(v);
    b_.emit("@!" + ptx_reg(finite) + " mov.u32 " + ptx_reg(non_finite_) + ", 1");
  }

  // Thread 0 writes the row's one result.
  void store_row_result(PtxF v) {
    const std::string skip = b_.new_label("result");
    const PtxP not_first = b_.new_p();
    b_.emit("setp.ne.u32 " + ptx_reg(not_first) + ", " + ptx_reg(tid_) + ", 0");
    b_.emit("@" + ptx_reg(not_first) + " bra " + skip);
    store(out_row_, v);
    note_non_finite(v);
    b_.place_label(skip);
  }

  PtxF row_length() { return m_.i2f(d2_); }

  // Sum, Mean, Max: one pass, one value.
  void emit_reduction() {
    const RowFold fold = spec_.op == RowOp::Max ? RowFold::Max : RowFold::Sum;
    const Acc acc = new_accumulator(fold);
    for_each_element("reduce", [&](PtxI j) { assign(acc, fold_value(m_, acc, prologue_value(j), fold, compensated())); });
    PtxF result = fold_result(m_, block_fold(acc, fold), fold, compensated());
    if (spec_.op == RowOp::Mean) result = m_.div(result, row_length());
    store_row_result(result);
  }

  // Softmax: values and their max; exp(v - max) and its sum; the quotients.
  void emit_softmax() {
    const Acc max_acc = new_accumulator(RowFold::MaxNum);
    for_each_element("values", [&](PtxI j) {
      const PtxF v = prologue_value(j);
      store(element_address(out_row_, j), v);
      assign(max_acc, fold_value(m_, max_acc, v, RowFold::MaxNum, false));
    });
    const PtxF max = fold_result(m_, block_fold(max_acc, RowFold::MaxNum), RowFold::MaxNum, false);
    const Acc sum_acc = new_accumulator(RowFold::Sum);
    for_each_element("exp", [&](PtxI j) {
      const PtxL at = element_address(out_row_, j);
      const PtxF e = softmax_exp(m_, load("ld.global.f32", at), max, pro_.math);
      store(at, e);
      assign(sum_acc, fold_value(m_, sum_acc, e, RowFold::Sum, compensated()));
    });
    const PtxF sum = fold_result(m_, block_fold(sum_acc, RowFold::Sum), RowFold::Sum, compensated());
    for_each_element("quotient", [&](PtxI j) {
      const PtxL at = element_address(out_row_, j);
      const PtxF y = softmax_value(m_, load("ld.global.f32", at), sum, pro_.math);
      store(at, y);
      note_non_finite(y);
    });
  }

  // LayerNorm: values and their sum; squared deviations and their sum; the
  // normalised, scaled and shifted values.
  void emit_layer_norm() {
    const Acc sum_acc = new_accumulator(RowFold::Sum);
    for_each_element("values", [&](PtxI j) {
      const PtxF v = prologue_value(j);
      store(element_address(out_row_, j), v);
      assign(sum_acc, fold_value(m_, sum_acc, v, RowFold::Sum, compensated()));
    });
    const PtxF n = row_length();
    const PtxF mean = m_.div(fold_result(m_, block_fold(sum_acc, RowFold::Sum), RowFold::Sum, compensated()), n);
    const Acc sq_acc = new_accumulator(RowFold::Sum);
    for_each_element("deviation", [&](PtxI j) {
      const PtxF d = m_.sub(load("ld.global.f32", element_address(out_row_, j)), mean);
      assign(sq_acc, fold_value(m_, sq_acc, m_.mul(d, d), RowFold::Sum, compensated()));
    });
    const PtxF squares = fold_result(m_, block_fold(sq_acc, RowFold::Sum), RowFold::Sum, compensated());
    const PtxF rstd = layer_norm_rstd(m_, squares, n, spec_.epsilon);
    for_each_element("normalise", [&](PtxI j) {
      const PtxL at = element_address(out_row_, j);
      PtxF scale, bias;
      if (spec_.has_scale) scale = load("ld.global.nc.f32", element_address(scale_, j));
      if (spec_.has_bias) bias = load("ld.global.nc.f32", element_address(bias_, j));
      const PtxF y = layer_norm_value(m_, load("ld.global.f32", at), mean, rstd, spec_.has_scale ? &scale : nullptr,
                                      spec_.has_bias ? &bias : nullptr);
      store(at, y);
      note_non_finite(y);
    });
  }

  void emit_kernel() {
    const PtxI ctaid = b_.new_i(), nctaid = b_.new_i(), row = b_.new_i(), warp = b_.new_i();
    tid_ = b_.new_i(), ntid_ = b_.new_i(), lane_ = b_.new_i(), nwarps_ = b_.new_i();
    partials_ = b_.new_i(), partial_ = b_.new_i();
    b_.emit("mov.u32 " + ptx_reg(tid_) + ", %tid.x");
    b_.emit("mov.u32 " + ptx_reg(ntid_) + ", %ntid.x");
    b_.emit("mov.u32 " + ptx_reg(ctaid) + ", %ctaid.x");
    b_.emit("mov.u32 " + ptx_reg(nctaid) + ", %nctaid.x");
    b_.emit("and.b32 " + ptx_reg(lane_) + ", " + ptx_reg(tid_) + ", 31");
    b_.emit("shr.u32 " + ptx_reg(warp) + ", " + ptx_reg(tid_) + ", 5");
    b_.emit("shr.u32 " + ptx_reg(nwarps_) + ", " + ptx_reg(ntid_) + ", 5");
    b_.emit(std::string("mov.u32 ") + ptx_reg(partials_) + ", " + kPartials);
    b_.emit("mad.lo.u32 " + ptx_reg(partial_) + ", " + ptx_reg(warp) + ", 4, " + ptx_reg(partials_));
    non_finite_ = b_.immediate_u32(0);
    b_.emit("add.u32 " + ptx_reg(row) + ", " + ptx_reg(row_begin_) + ", " + ptx_reg(ctaid));
    // Every thread of a block walks the same rows, so the barriers inside are uniform.
    b_.strided_loop(row, row_end_, nctaid, "row", [&] {
      begin_row(row);
      switch (spec_.op) {
        case RowOp::Sum:
        case RowOp::Mean:
        case RowOp::Max: emit_reduction(); break;
        case RowOp::Softmax: emit_softmax(); break;
        case RowOp::LayerNorm: emit_layer_norm(); break;
      }
    });
    if (pro_.check_non_finite) {
      const PtxP raised = b_.new_p();
      b_.emit("setp.ne.u32 " + ptx_reg(raised) + ", " + ptx_reg(non_finite_) + ", 0");
      b_.emit("@" + ptx_reg(raised) + " red.global.or.b32 [" + ptx_reg(flag_) + "], 1");
    }
    b_.emit("ret");
  }

  const FusedRowSpec& spec_;
  const FusedElementwiseSpec& pro_;
  PtxBuilder b_;
  PtxMath m_;
  std::vector<PtxL> bases_, stride0_, stride1_, row_bases_;
  std::vector<PtxF> row_values_;
  PtxL out_, scale_, bias_, flag_, out_row_;
  PtxI row_begin_, row_end_, d1_, d2_, magic1_, shift1_;
  PtxI tid_, ntid_, lane_, nwarps_, partials_, partial_, non_finite_;
  bool trivial_d1_ = false;
};

}  // namespace

unsigned row_block_threads(std::int64_t d2) {
  if (d2 <= 32) return 32;
  if (d2 >= kMaxRowThreads) return kMaxRowThreads;
  return static_cast<unsigned>((d2 + 31) / 32 * 32);
}

RowLaunchScalars make_row_scalars(std::int64_t d1, std::int64_t d2, std::int64_t row_begin, std::int64_t row_end) {
  RowLaunchScalars s;
  s.d1 = static_cast<std::uint32_t>(d1);
  s.d2 = static_cast<std::uint32_t>(d2);
  s.row_begin = static_cast<std::uint32_t>(row_begin);
  s.row_end = static_cast<std::uint32_t>(row_end);
  const Divider div1 = make_divider(s.d1);
  s.magic1 = div1.magic, s.shift1 = div1.shift;
  return s;
}

std::string emit_row_ptx(const FusedRowSpec& spec, const std::string& target) {
  return RowPtxEmitter(spec).emit(target);
}

}  // namespace canary::jit::cuda
