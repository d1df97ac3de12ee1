// The body of an emitted elementwise kernel: the row loop over the
// flattened (i0, i1) space with per-row input and output pointers, the d2
// loop as an (optionally unrolled) vector main loop plus one masked vector
// for the tail (a k-mask on AVX-512, vmaskmovps on AVX2; a one-lane loop on
// the scalar tier), and the non-finite and range value canaries.
#include <cstddef>
#include <optional>

#include "jit/x86/elementwise_codegen_stages.h"

namespace canary::jit::x86 {
namespace {

namespace ax = asmjit::x86;

// How one evaluation of the DAG touches memory.
enum class Lanes {
  Full,    // a whole tier vector
  Masked,  // the first d2 - i lanes of a tier vector: AVX-512 k-mask, AVX2 vmaskmovps
  Single,  // lane 0 of an xmm register (the scalar tier)
};


// Unroll the vector loop by 2 when the DAG is at most this many arithmetic nodes.
constexpr int kUnrollMaxNodes = 8;

// Emits one kernel function: registers that live across the loops and the
// emission steps that use them.
class KernelEmitter {
 public:
  KernelEmitter(ax::Compiler& cc, const FusedElementwiseSpec& spec, Isa isa)
      : cc_(cc),
        spec_(spec),
        isa_(isa),
        lanes_(isa_lanes(isa)),
        live_(live_nodes(spec)),
        input_used_(spec.num_inputs, false),
        vec_ctx_(cc, isa, spec.math),
        lane_ctx_(cc, Isa::Scalar, spec.math) {}

  bool emit(std::string& error);

 private:
  void find_used_inputs();
  void load_arguments(const ax::Gp& args, const asmjit::Label& exit);
  void split_first_row();
  void set_row_pointers();
  void advance_row();
  bool emit_d2_loops(std::string& error);
  bool emit_vector_loop(int unroll, std::string& error);
  bool emit_masked_tail(std::string& error);
  void set_tail_mask(const ax::Gp& rem);
  void hoist_tail_mask();
  void mask_lanes(Lanes lanes, const ax::Vec& v);
  bool emit_lane_loop(std::string& error);
  bool emit_body(Lanes lanes, int offset, std::string& error);
  void check_non_finite(Lanes lanes, const ax::Vec& v);
  void check_range(Lanes lanes, const ax::Vec& v, const ValueRange& range);
  void emit_canary_result(const ax::Gp& result);
  void emit_range_result(const ax::Gp& result);
  bool has_ranges() const;
  bool small_dag() const;
  ax::Mem element(const ax::Gp& base, int offset, Lanes lanes) const;

  ax::Compiler& cc_;
  const FusedElementwiseSpec& spec_;
  Isa isa_;
  int lanes_;
  std::vector<bool> live_;
  std::vector<bool> input_used_;  // read by a live Input node
  VecContext vec_ctx_;   // tier width
  VecContext lane_ctx_;  // one lane (xmm), for the scalar tier
  std::optional<std::int64_t> known_d2_;
  ax::Gp inputs_, outputs_, strides_, row_, row_end_, i0_, i1_, d1_, d2_, i_, flag_;
  std::vector<ax::Gp> in_ptr_, out_ptr_;
  std::vector<ax::Vec> broadcast_;
  ax::KReg tail_mask_;   // AVX-512
  ax::Vec tail_vmask_;   // AVX2: all ones in the tail's lanes
  ax::Vec acc_;
  // Range canary: the vector lanes' largest excursion beyond their range
  // (positive when some element was outside), and the one-lane bodies' flag.
  ax::Vec range_acc_;
  ax::Gp range_flag_;
};

// Marks the inputs some live Input node reads.
void KernelEmitter::find_used_inputs() {
  for (std::size_t i = 0; i < spec_.nodes.size(); ++i)
    if (live_[i] && spec_.nodes[i].op == EwOp::Input) input_used_[spec_.nodes[i].input] = true;
}

// Loads FusedArgs fields into registers (bounds baked in for exact variants);
// jumps to `exit` when d1 or d2 is not positive (there is nothing to compute).
void KernelEmitter::load_arguments(const ax::Gp& args, const asmjit::Label& exit) {
  auto field = [&](std::size_t offset) { return ax::qword_ptr(args, static_cast<std::int32_t>(offset)); };
  inputs_ = cc_.newIntPtr("inputs");
  outputs_ = cc_.newIntPtr("outputs");
  strides_ = cc_.newIntPtr("strides");
  d1_ = cc_.newIntPtr("d1");
  d2_ = cc_.newIntPtr("d2");
  cc_.mov(inputs_, field(offsetof(FusedArgs, inputs)));
  cc_.mov(outputs_, field(offsetof(FusedArgs, outputs)));
  cc_.mov(strides_, field(offsetof(FusedArgs, strides)));
  if (spec_.exact_dims) {
    known_d2_ = (*spec_.exact_dims)[2];
    cc_.mov(d1_, (*spec_.exact_dims)[1]);
    cc_.mov(d2_, *known_d2_);
  } else {
    cc_.mov(d1_, field(offsetof(FusedArgs, dims) + sizeof(std::int64_t)));
    cc_.mov(d2_, field(offsetof(FusedArgs, dims) + 2 * sizeof(std::int64_t)));
  }
  cc_.test(d1_, d1_);
  cc_.jle(exit);
  cc_.test(d2_, d2_);
  cc_.jle(exit);
}

// i0 = row / d1, i1 = row % d1 for the first row (rows are not negative).
void KernelEmitter::split_first_row() { emit_split_row(cc_, row_, d1_, i0_, i1_); }

// Per row: input pointers (or broadcast values) at i0 * stride0 + i1 * stride1,
// output pointers at row * d2.
void KernelEmitter::set_row_pointers() {
  ax::Gp off = cc_.newIntPtr("off"), t = cc_.newIntPtr("t");
  emit_input_row_pointers(cc_, spec_, input_used_, inputs_, strides_, i0_, i1_, in_ptr_, broadcast_, off, t);
  cc_.mov(off, row_);
  cc_.imul(off, d2_);
  for (std::size_t k = 0; k < spec_.outputs.size(); ++k) {
    cc_.mov(t, ax::qword_ptr(outputs_, static_cast<std::int32_t>(8 * k)));
    cc_.lea(out_ptr_[k], ax::ptr(t, off, 2));
  }
}

// row += 1 and (i0, i1) += (0, 1) with carry into i0 at d1.
void KernelEmitter::advance_row() { emit_advance_row(cc_, row_, d1_, i0_, i1_); }

// Address of the element at i + offset in the lane layout's width.
ax::Mem KernelEmitter::element(const ax::Gp& base, int offset, Lanes lanes) const {
  const std::int32_t disp = offset * 4;
  if (lanes == Lanes::Single) return ax::dword_ptr(base, i_, 2, disp);
  if (isa_ == Isa::Avx512) return ax::zmmword_ptr(base, i_, 2, disp);
  return isa_ == Isa::Avx2 ? ax::ymmword_ptr(base, i_, 2, disp) : ax::xmmword_ptr(base, i_, 2, disp);
}

// ORs "v holds a NaN or Inf" into the canary (v - v is +0 exactly when v is finite).
void KernelEmitter::check_non_finite(Lanes lanes, const ax::Vec& v) {
  if (lanes == Lanes::Single) {
    ax::Xmm t = cc_.newXmm("nf");
    ax::Gp bits = cc_.newGpd("nfbits");
    cc_.vsubss(t, v.xmm(), v.xmm());
    cc_.vmovd(bits, t);
    cc_.or_(flag_, bits);
    return;
  }
  ax::Vec t = vec_ctx_.new_vec("nf");
  if (lanes == Lanes::Masked && isa_ == Isa::Avx512) cc_.k(tail_mask_).z().vsubps(t, v, v);
  else cc_.vsubps(t, v, v);
  mask_lanes(lanes, t);
  cc_.vorps(acc_, acc_, t);
}

// AVX2 tail: clears the lanes past the tail in v (what they computed from
// the zeros their loads gave must not reach a canary).
void KernelEmitter::mask_lanes(Lanes lanes, const ax::Vec& v) {
  if (lanes == Lanes::Masked && isa_ == Isa::Avx2) cc_.vandps(v, v, tail_vmask_);
}

bool KernelEmitter::has_ranges() const {
  for (const std::optional<ValueRange>& r : spec_.output_ranges)
    if (r) return true;
  return false;
}

// Records whether v holds an element outside [lo, hi]. Vectors accumulate
// max(v - hi, lo - v), positive exactly for such an element; vmaxps returns
// its second source when the first is NaN, so NaN never counts as outside.
// One lane compares with vcomiss, whose "above" is false when unordered.
void KernelEmitter::check_range(Lanes lanes, const ax::Vec& v, const ValueRange& range) {
  if (lanes == Lanes::Single) {
    ax::Mem hi = lane_ctx_.constant(range.hi), lo_mem = lane_ctx_.constant(range.lo);
    hi.setSize(4);
    lo_mem.setSize(4);
    ax::Gp bit = cc_.newGpd("rbit");
    ax::Xmm lo = cc_.newXmm("rlo");
    cc_.xor_(bit, bit);
    cc_.vcomiss(v.xmm(), hi);
    cc_.seta(bit.r8());
    cc_.or_(range_flag_, bit);
    cc_.vmovss(lo, lo_mem);
    cc_.xor_(bit, bit);
    cc_.vcomiss(lo, v.xmm());
    cc_.seta(bit.r8());
    cc_.or_(range_flag_, bit);
    return;
  }
  ax::Vec above = vec_ctx_.new_vec("rabove"), below = vec_ctx_.new_vec("rbelow");
  cc_.vmovups(below, vec_ctx_.constant(range.lo));
  if (lanes == Lanes::Masked && isa_ == Isa::Avx512) {
    cc_.k(tail_mask_).z().vsubps(above, v, vec_ctx_.constant(range.hi));
    cc_.k(tail_mask_).z().vsubps(below, below, v);
  } else {
    cc_.vsubps(above, v, vec_ctx_.constant(range.hi));
    cc_.vsubps(below, below, v);
  }
  cc_.vmaxps(above, above, below);
  mask_lanes(lanes, above);
  cc_.vmaxps(range_acc_, above, range_acc_);
}

// Evaluates the DAG for the vector at i + offset and stores every output.
bool KernelEmitter::emit_body(Lanes lanes, int offset, std::string& error) {
  VecContext& ctx = lanes == Lanes::Single ? lane_ctx_ : vec_ctx_;
  auto load = [&](std::uint16_t k) -> ax::Vec {
    if (spec_.inner_broadcast[k]) return lanes == Lanes::Single ? ax::Vec(broadcast_[k].xmm()) : broadcast_[k];
    ax::Vec v = ctx.new_vec("in");
    const ax::Mem at = element(in_ptr_[k], offset, lanes);
    if (lanes == Lanes::Single) cc_.vmovss(v.xmm(), at);
    else if (lanes == Lanes::Masked && isa_ == Isa::Avx2) cc_.vmaskmovps(v, tail_vmask_, at);
    else if (lanes == Lanes::Masked) cc_.k(tail_mask_).z().vmovups(v, at);
    else cc_.vmovups(v, at);
    return v;
  };
  std::vector<ax::Vec> values;
  if (!emit_fused_nodes(ctx, spec_, live_, load, values, error)) return false;
  std::vector<bool> checked(spec_.nodes.size(), false);
  for (std::size_t k = 0; k < spec_.outputs.size(); ++k) {
    const ax::Vec& v = values[spec_.outputs[k]];
    const ax::Mem at = element(out_ptr_[k], offset, lanes);
    if (lanes == Lanes::Single) cc_.vmovss(at, v.xmm());
    else if (lanes == Lanes::Masked && isa_ == Isa::Avx2) cc_.vmaskmovps(at, tail_vmask_, v);
    else if (lanes == Lanes::Masked) cc_.k(tail_mask_).vmovups(at, v);
    else cc_.vmovups(at, v);
    if (spec_.check_non_finite && !checked[spec_.outputs[k]]) check_non_finite(lanes, v);
    checked[spec_.outputs[k]] = true;
    if (k < spec_.output_ranges.size() && spec_.output_ranges[k]) check_range(lanes, v, *spec_.output_ranges[k]);
  }
  return true;
}

// True when the DAG is small enough to unroll the vector loop by 2.
bool KernelEmitter::small_dag() const {
  int arithmetic = 0;
  for (std::size_t i = 0; i < spec_.nodes.size(); ++i) {
    const EwOp op = spec_.nodes[i].op;
    if (!live_[i] || op == EwOp::Input || op == EwOp::Constant) continue;
    if (ew_is_transcendental(op)) return false;
    ++arithmetic;
  }
  return arithmetic <= kUnrollMaxNodes;
}

// while (i + unroll * lanes <= d2) { unroll vector bodies; i += unroll * lanes }
bool KernelEmitter::emit_vector_loop(int unroll, std::string& error) {
  const int step = unroll * lanes_;
  if (known_d2_ && *known_d2_ < step) return true;
  asmjit::Label top = cc_.newLabel(), done = cc_.newLabel();
  ax::Gp limit = cc_.newIntPtr("limit");
  cc_.lea(limit, ax::ptr(d2_, -step));
  cc_.bind(top);
  cc_.cmp(i_, limit);
  cc_.jg(done);
  for (int u = 0; u < unroll; ++u)
    if (!emit_body(Lanes::Full, u * lanes_, error)) return false;
  cc_.add(i_, step);
  cc_.jmp(top);
  cc_.bind(done);
  return true;
}

// The tail: the remaining d2 - i (< lanes) elements as one vector whose
// other lanes are neither loaded (they read as 0) nor stored, so rows of
// any length end with one body instead of up to 7 one-lane ones on AVX2.
bool KernelEmitter::emit_masked_tail(std::string& error) {
  if (known_d2_ && *known_d2_ % lanes_ == 0) return true;
  asmjit::Label done = cc_.newLabel();
  ax::Gp rem = cc_.newIntPtr("rem");
  cc_.mov(rem, d2_);
  cc_.sub(rem, i_);
  cc_.jz(done);
  if (isa_ != Isa::Avx512) set_tail_mask(rem);  // AVX-512: once per call, hoist_tail_mask
  if (!emit_body(Lanes::Masked, 0, error)) return false;
  cc_.bind(done);
  return true;
}

// Every row's tail has d2 % 16 lanes (the vector loops stop at the last
// multiple of 16), so the AVX-512 k-mask is set once per call, before the
// row loop (one of the seven write-mask k-registers; AVX2's ymm mask is loaded per row,
// where a register held across the loop would crowd the DAG's sixteen).
void KernelEmitter::hoist_tail_mask() {
  if (isa_ != Isa::Avx512 || (known_d2_ && *known_d2_ % lanes_ == 0)) return;
  ax::Gp rem = cc_.newIntPtr("rem");
  cc_.mov(rem, d2_);
  cc_.and_(rem, lanes_ - 1);
  set_tail_mask(rem);
}

// The mask of the first `rem` (1 .. lanes - 1) lanes: a k-register of rem
// low bits (AVX-512), or a vector mask (AVX2, load_avx2_tail_mask).
void KernelEmitter::set_tail_mask(const ax::Gp& rem) {
  ax::Gp t = cc_.newIntPtr("mask");
  if (isa_ == Isa::Avx512) {
    cc_.mov(t, 1);
    cc_.shl(t, rem.r8());
    cc_.dec(t);
    cc_.kmovw(tail_mask_, t.r32());
    return;
  }
  load_avx2_tail_mask(cc_, tail_vmask_, rem);
}

// while (i < d2) { one-lane body; ++i }: the scalar tier.
bool KernelEmitter::emit_lane_loop(std::string& error) {
  asmjit::Label top = cc_.newLabel(), done = cc_.newLabel();
  cc_.bind(top);
  cc_.cmp(i_, d2_);
  cc_.jge(done);
  if (!emit_body(Lanes::Single, 0, error)) return false;
  cc_.inc(i_);
  cc_.jmp(top);
  cc_.bind(done);
  return true;
}

// The loops over d2 for one row.
bool KernelEmitter::emit_d2_loops(std::string& error) {
  cc_.xor_(i_, i_);
  if (isa_ == Isa::Scalar) return emit_lane_loop(error);
  if (small_dag() && !emit_vector_loop(2, error)) return false;
  if (!emit_vector_loop(1, error)) return false;
  return emit_masked_tail(error);
}

// result = 1 when any output seen was NaN or Inf, else 0.
void KernelEmitter::emit_canary_result(const ax::Gp& result) { emit_non_finite_result(cc_, isa_, acc_, flag_, result); }

// result |= kRangeCanary when any output element was outside its range.
void KernelEmitter::emit_range_result(const ax::Gp& result) {
  if (isa_ != Isa::Scalar) {
    ax::Gp bits = cc_.newGpd("rbits");
    constexpr std::uint32_t kGreaterOrdered = 0x1E;  // _CMP_GT_OQ
    if (isa_ == Isa::Avx512) {
      ax::KReg k = cc_.newKw("rk");
      cc_.vcmpps(k, range_acc_, vec_ctx_.constant(0.0f), kGreaterOrdered);
      cc_.kmovw(bits, k);
    } else {
      ax::Vec t = vec_ctx_.new_vec("rcmp");
      cc_.vcmpps(t, range_acc_, vec_ctx_.constant(0.0f), kGreaterOrdered);
      cc_.vmovmskps(bits, t);
    }
    cc_.or_(range_flag_, bits);
  }
  ax::Gp bit = cc_.newGpd("rbit");
  cc_.xor_(bit, bit);
  cc_.test(range_flag_, range_flag_);
  cc_.setnz(bit.r8());
  cc_.shl(bit, 1);  // kRangeCanary
  cc_.or_(result, bit);
}

// The function: argument loads, the row loop around the d2 loops, the result.
bool KernelEmitter::emit(std::string& error) {
  using Signature = asmjit::FuncSignatureT<std::uint32_t, const FusedArgs*>;
  asmjit::FuncNode* fn = cc_.addFunc(Signature(asmjit::CallConvId::kHost));
  ax::Gp args = cc_.newIntPtr("args"), result = cc_.newGpd("result");
  fn->setArg(0, args);
  enable_vector_frame(fn, isa_);
  asmjit::Label exit_label = cc_.newLabel(), row_top = cc_.newLabel();
  row_ = cc_.newIntPtr("row");
  row_end_ = cc_.newIntPtr("row_end");
  i_ = cc_.newIntPtr("i");
  flag_ = cc_.newGpd("flag");
  tail_mask_ = cc_.newKw("tail");
  if (isa_ == Isa::Avx2) tail_vmask_ = cc_.newYmm("tail");
  cc_.xor_(flag_, flag_);
  if (spec_.check_non_finite && isa_ != Isa::Scalar) {
    acc_ = vec_ctx_.new_vec("nf_acc");
    cc_.vxorps(acc_, acc_, acc_);
  }
  if (has_ranges()) {
    range_flag_ = cc_.newGpd("range_flag");
    cc_.xor_(range_flag_, range_flag_);
    if (isa_ != Isa::Scalar) {
      range_acc_ = vec_ctx_.new_vec("range_acc");
      cc_.vxorps(range_acc_, range_acc_, range_acc_);
    }
  }
  cc_.mov(row_, ax::qword_ptr(args, offsetof(FusedArgs, row_begin)));
  cc_.mov(row_end_, ax::qword_ptr(args, offsetof(FusedArgs, row_end)));
  cc_.cmp(row_, row_end_);
  cc_.jge(exit_label);
  find_used_inputs();
  load_arguments(args, exit_label);
  hoist_tail_mask();
  split_first_row();
  for (std::uint16_t k = 0; k < spec_.num_inputs; ++k) {
    in_ptr_.push_back(cc_.newIntPtr("in"));
    broadcast_.push_back(vec_ctx_.new_vec("bcast"));
  }
  for (std::size_t k = 0; k < spec_.outputs.size(); ++k) out_ptr_.push_back(cc_.newIntPtr("out"));
  cc_.bind(row_top);
  set_row_pointers();
  if (!emit_d2_loops(error)) return false;
  advance_row();
  cc_.cmp(row_, row_end_);
  cc_.jl(row_top);
  cc_.bind(exit_label);
  if (spec_.check_non_finite) emit_canary_result(result);
  else cc_.xor_(result, result);
  if (has_ranges()) emit_range_result(result);
  cc_.ret(result);
  cc_.endFunc();
  return true;
}

}  // namespace

// Runs a KernelEmitter for the spec and tier.
bool emit_elementwise_function(ax::Compiler& cc, const FusedElementwiseSpec& spec, Isa isa, std::string& error) {
  KernelEmitter emitter(cc, spec, isa);
  return emitter.emit(error);
}

void emit_split_row(ax::Compiler& cc, const ax::Gp& row, const ax::Gp& d1, ax::Gp& i0, ax::Gp& i1) {
  i0 = cc.newIntPtr("i0");
  i1 = cc.newIntPtr("i1");
  cc.mov(i0, row);
  cc.xor_(i1, i1);
  cc.div(i1, i0, d1);
}

void emit_advance_row(ax::Compiler& cc, const ax::Gp& row, const ax::Gp& d1, const ax::Gp& i0, const ax::Gp& i1) {
  asmjit::Label same_i0 = cc.newLabel();
  cc.inc(row);
  cc.inc(i1);
  cc.cmp(i1, d1);
  cc.jne(same_i0);
  cc.xor_(i1, i1);
  cc.inc(i0);
  cc.bind(same_i0);
}

void emit_input_row_pointers(ax::Compiler& cc, const FusedElementwiseSpec& spec, const std::vector<bool>& used,
                             const ax::Gp& inputs, const ax::Gp& strides, const ax::Gp& i0, const ax::Gp& i1,
                             const std::vector<ax::Gp>& in_ptr, const std::vector<ax::Vec>& broadcast,
                             const ax::Gp& off, const ax::Gp& t) {
  for (std::uint16_t k = 0; k < spec.num_inputs; ++k) {
    if (!used[k]) continue;
    cc.mov(off, i0);
    cc.imul(off, ax::qword_ptr(strides, 16 * k));
    cc.mov(t, i1);
    cc.imul(t, ax::qword_ptr(strides, 16 * k + 8));
    cc.add(off, t);
    cc.mov(t, ax::qword_ptr(inputs, 8 * k));
    if (spec.inner_broadcast[k]) cc.vbroadcastss(broadcast[k], ax::dword_ptr(t, off, 2));
    else cc.lea(in_ptr[k], ax::ptr(t, off, 2));
  }
}

void emit_non_finite_result(ax::Compiler& cc, Isa isa, const ax::Vec& acc, const ax::Gp& flag, const ax::Gp& result) {
  if (isa == Isa::Avx512) {
    ax::KReg k = cc.newKw("nfk");
    ax::Gp bits = cc.newGpd("nfk_bits");
    cc.vptestmd(k, acc, acc);
    cc.kmovw(bits, k);
    cc.or_(flag, bits);
  } else if (isa == Isa::Avx2) {
    ax::Gp any = cc.newGpd("nf_any");
    cc.xor_(any, any);
    cc.vptest(acc, acc);
    cc.setnz(any.r8());
    cc.or_(flag, any);
  }
  cc.xor_(result, result);
  cc.test(flag, flag);
  cc.setnz(result.r8());
}

void enable_vector_frame(asmjit::FuncNode* fn, Isa isa) {
  fn->frame().setAvxEnabled();
  if (isa == Isa::Avx512) fn->frame().setAvx512Enabled();
  fn->frame().addAttributes(asmjit::FuncAttributes::kX86_AVXCleanup);
}

// 8 dwords set then 8 clear: the mask of r lanes is the 8 dwords from 8 - r.
void load_avx2_tail_mask(ax::Compiler& cc, const ax::Vec& mask, const ax::Gp& rem) {
  static constexpr std::int32_t kMasks[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  ax::Gp table = cc.newIntPtr("mask_table"), start = cc.newIntPtr("mask_start");
  cc.lea(table, cc.newConst(asmjit::ConstPoolScope::kLocal, kMasks, sizeof(kMasks)));
  cc.mov(start, 8);
  cc.sub(start, rem);
  cc.vmovdqu(mask, ax::ymmword_ptr(table, start, 2));
}

}  // namespace canary::jit::x86
