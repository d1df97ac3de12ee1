// The frame of an emitted row kernel: the function and its RowArgs loads,
// the loop over rows [row_begin, row_end) of the flattened (i0, i1) space
// with per-row input and output pointers, and the value canary's result.
#include <cstddef>

#include "jit/x86/elementwise_codegen_stages.h"
#include "jit/x86/row_codegen_stages.h"

namespace canary::jit::x86 {
namespace row {

RowEmitter::RowEmitter(ax::Compiler& cc, const FusedRowSpec& spec, Isa isa)
    : cc_(cc),
      spec_(spec),
      prologue_(spec.prologue),
      isa_(isa),
      lanes_(isa_lanes(isa)),
      compensated_(spec.accumulation == Accumulation::Compensated && spec.op != RowOp::Max),
      live_(live_nodes(spec.prologue)),
      input_used_(spec.prologue.num_inputs, false),
      vec_ctx_(cc, isa, spec.prologue.math),
      lane_ctx_(cc, Isa::Scalar, spec.prologue.math) {
  const EwNode& value = prologue_.nodes[prologue_.outputs[0]];
  if (value.op == EwOp::Input && !prologue_.inner_broadcast[value.input]) source_input_ = value.input;
}

// Marks the inputs some live Input node reads.
void RowEmitter::find_used_inputs() {
  for (std::size_t i = 0; i < prologue_.nodes.size(); ++i)
    if (live_[i] && prologue_.nodes[i].op == EwOp::Input) input_used_[prologue_.nodes[i].input] = true;
}

// Loads RowArgs fields into registers (d1, d2 baked in for exact variants);
// jumps to `exit` when d1 is not positive (there are no rows) or d2 is negative.
void RowEmitter::load_arguments(const ax::Gp& args, const asmjit::Label& exit) {
  auto field = [&](std::size_t offset) { return ax::qword_ptr(args, static_cast<std::int32_t>(offset)); };
  inputs_ = cc_.newIntPtr("inputs");
  strides_ = cc_.newIntPtr("strides");
  output_ = cc_.newIntPtr("output");
  d1_ = cc_.newIntPtr("d1");
  d2_ = cc_.newIntPtr("d2");
  cc_.mov(inputs_, field(offsetof(RowArgs, inputs)));
  cc_.mov(strides_, field(offsetof(RowArgs, strides)));
  cc_.mov(output_, field(offsetof(RowArgs, output)));
  if (spec_.has_scale) {
    scale_ = cc_.newIntPtr("scale");
    cc_.mov(scale_, field(offsetof(RowArgs, scale)));
  }
  if (spec_.has_bias) {
    bias_ = cc_.newIntPtr("bias");
    cc_.mov(bias_, field(offsetof(RowArgs, bias)));
  }
  if (prologue_.exact_dims) {
    known_d2_ = (*prologue_.exact_dims)[2];
    cc_.mov(d1_, (*prologue_.exact_dims)[1]);
    cc_.mov(d2_, *known_d2_);
  } else {
    cc_.mov(d1_, field(offsetof(RowArgs, dims) + sizeof(std::int64_t)));
    cc_.mov(d2_, field(offsetof(RowArgs, dims) + 2 * sizeof(std::int64_t)));
  }
  cc_.test(d1_, d1_);
  cc_.jle(exit);
  cc_.test(d2_, d2_);
  cc_.jl(exit);
}

// Virtual registers that live across rows: pointers, broadcasts, accumulators, masks.
void RowEmitter::allocate_registers() {
  for (std::uint16_t k = 0; k < prologue_.num_inputs; ++k) {
    in_ptr_.push_back(cc_.newIntPtr("in"));
    broadcast_.push_back(vec_ctx_.new_vec("bcast"));
  }
  out_row_ = cc_.newIntPtr("out_row");
  src_row_ = source_input_ ? in_ptr_[*source_input_] : out_row_;
  acc_ = new_accumulators("acc");
  if (spec_.op == RowOp::LayerNorm) dev_acc_ = new_accumulators("dev_acc");
  if (spec_.op == RowOp::Max) {
    if (isa_ == Isa::Avx512) nan_k_ = cc_.newKw("nan_k");
    else nan_vec_ = vec_ctx_.new_vec("nan_vec");
    nan_gp_ = cc_.newGpd("nan_gp");
  }
}

// i0 = row / d1, i1 = row % d1 for the first row (rows are not negative).
void RowEmitter::split_first_row() { emit_split_row(cc_, row_, d1_, i0_, i1_); }

// Per row: input pointers (or broadcast values) at i0 * stride0 + i1 * stride1,
// the output at row (one value per row) or row * d2 (a row of values).
void RowEmitter::set_row_pointers() {
  ax::Gp off = cc_.newIntPtr("off"), t = cc_.newIntPtr("t");
  emit_input_row_pointers(cc_, prologue_, input_used_, inputs_, strides_, i0_, i1_, in_ptr_, broadcast_, off, t);
  cc_.mov(off, row_);
  if (spec_.op == RowOp::Softmax || spec_.op == RowOp::LayerNorm) cc_.imul(off, d2_);
  cc_.lea(out_row_, ax::ptr(output_, off, 2));
}

// row += 1 and (i0, i1) += (0, 1) with carry into i0 at d1.
void RowEmitter::advance_row() { emit_advance_row(cc_, row_, d1_, i0_, i1_); }

// result = 1 when any output seen was NaN or Inf, else 0.
void RowEmitter::emit_canary_result(const ax::Gp& result) { emit_non_finite_result(cc_, isa_, nf_acc_, flag_, result); }

// The function: argument loads, the row loop around the row op, the result.
bool RowEmitter::emit(std::string& error) {
  using Signature = asmjit::FuncSignatureT<std::uint32_t, const RowArgs*>;
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
  if (prologue_.check_non_finite && isa_ != Isa::Scalar) {
    nf_acc_ = vec_ctx_.new_vec("nf_acc");
    cc_.vxorps(nf_acc_, nf_acc_, nf_acc_);
  }
  cc_.mov(row_, ax::qword_ptr(args, offsetof(RowArgs, row_begin)));
  cc_.mov(row_end_, ax::qword_ptr(args, offsetof(RowArgs, row_end)));
  cc_.cmp(row_, row_end_);
  cc_.jge(exit_label);
  find_used_inputs();
  load_arguments(args, exit_label);
  split_first_row();
  allocate_registers();
  cc_.bind(row_top);
  set_row_pointers();
  if (!emit_row_op(error)) return false;
  advance_row();
  cc_.cmp(row_, row_end_);
  cc_.jl(row_top);
  cc_.bind(exit_label);
  if (prologue_.check_non_finite) emit_canary_result(result);
  else cc_.xor_(result, result);
  cc_.ret(result);
  cc_.endFunc();
  return true;
}

}  // namespace row

// Runs a RowEmitter for the spec and tier.
bool emit_row_function(asmjit::x86::Compiler& cc, const FusedRowSpec& spec, Isa isa, std::string& error) {
  row::RowEmitter emitter(cc, spec, isa);
  return emitter.emit(error);
}

}  // namespace canary::jit::x86
