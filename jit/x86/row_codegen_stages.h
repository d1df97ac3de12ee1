// The stages of row kernel emission, shared by the files that implement
// them: the function frame and row loop (row_codegen_frame.cpp), passes over
// one row with their accumulators (row_codegen_passes.cpp), compensated
// sums (row_codegen_compensation.cpp) and the row ops built from passes
// (row_codegen_ops.cpp). The prologue DAG is evaluated per
// vector by emit_fused_nodes (elementwise_codegen_stages.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <asmjit/x86.h>

#include "jit/fused_row.h"
#include "jit/x86/isa.h"
#include "jit/x86/vector_math.h"

namespace canary::jit::x86 {

// Emits the whole kernel function (RowFn) for a checked spec into `cc`.
// Returns false with `error` set when a prologue node cannot be emitted.
bool emit_row_function(asmjit::x86::Compiler& cc, const FusedRowSpec& spec, Isa isa, std::string& error);

namespace row {

namespace ax = asmjit::x86;

// How one vector step of a pass touches memory.
enum class Lanes {
  Full,    // a whole tier vector
  Masked,  // the row's last d2 % lanes elements: an AVX-512 k-mask, an AVX2 vector mask
  Single,  // lane 0 of an xmm register (the scalar tier)
};

// How values fold into an accumulator.
enum class Fold { Add, Max };

// Most accumulators a pass uses (one per unrolled vector).
constexpr int kMaxSlots = 4;

// One running sum or max: kMaxSlots tier-width registers (one per unrolled
// vector; none on the scalar tier), or on the scalar tier one one-lane
// register. Compensated sums keep a running compensation
// register next to each (comp[s] for slots[s], lane_comp for lane).
struct Accumulators {
  std::vector<ax::Vec> slots;
  ax::Xmm lane;
  bool compensated = false;
  std::vector<ax::Vec> comp;
  ax::Xmm lane_comp;
};

// Emits one row kernel: the registers that live across the loops and the
// emission steps that use them.
class RowEmitter {
 public:
  RowEmitter(ax::Compiler& cc, const FusedRowSpec& spec, Isa isa);

  bool emit(std::string& error);

 private:
  // One vector step of a pass: lanes, element offset from i, accumulator slot.
  using Step = std::function<bool(Lanes lanes, int offset, int slot, std::string& error)>;

  // row_codegen_frame.cpp: arguments, the row loop, the canary result.
  void find_used_inputs();
  void load_arguments(const ax::Gp& args, const asmjit::Label& exit);
  void allocate_registers();
  void split_first_row();
  void set_row_pointers();
  void advance_row();
  void emit_canary_result(const ax::Gp& result);

  // row_codegen_passes.cpp: loops over d2, memory, prologue values, accumulators.
  bool emit_pass(int unroll, const Step& step, std::string& error);
  bool emit_vector_loop(int unroll, const Step& step, std::string& error);
  bool emit_masked_tail(const Step& step, std::string& error);
  bool emit_lane_loop(const Step& step, std::string& error);
  VecContext& ctx(Lanes lanes) { return lanes == Lanes::Single ? lane_ctx_ : vec_ctx_; }
  ax::Mem element(const ax::Gp& base, int offset, Lanes lanes) const;
  ax::Vec load(const ax::Gp& base, int offset, Lanes lanes);
  void store(const ax::Gp& base, int offset, Lanes lanes, const ax::Vec& v);
  bool row_value(Lanes lanes, int offset, ax::Vec& value, std::string& error);
  Accumulators new_accumulators(const char* name);
  void reset_accumulators(const Accumulators& a, float value);
  void accumulate(const Accumulators& a, Fold fold, Lanes lanes, int slot, const ax::Vec& v);
  ax::Vec tail_lanes_only(const ax::Vec& v, Fold fold);
  void accumulate_square(const Accumulators& a, Lanes lanes, int slot, const ax::Vec& d);
  ax::Xmm fold_accumulators(const Accumulators& a, Fold fold, int slots);
  int sum_unroll(int unroll) const;
  // row_codegen_compensation.cpp: Neumaier sums (Accumulation::Compensated).
  ax::Vec like(const ax::Vec& v, const char* name);
  void neumaier_add(const ax::Vec& s, const ax::Vec& c, const ax::Vec& x, const ax::KReg& tail);
  void combine_compensated(const ax::Vec& s, const ax::Vec& c, const ax::Vec& s2, const ax::Vec& c2);
  void accumulate_compensated(const Accumulators& a, Lanes lanes, int slot, const ax::Vec& v);
  void accumulate_square_compensated(const Accumulators& a, Lanes lanes, int slot, const ax::Vec& d);
  ax::Xmm fold_compensated(const Accumulators& a, int slots);
  ax::Xmm compensated_result(const ax::Xmm& s, const ax::Xmm& c);
  void reset_nan_flags();
  void or_unordered(const ax::Gp& flag, const ax::Xmm& v);
  void track_nan(Lanes lanes, const ax::Vec& v);
  void apply_nan_flags(const ax::Xmm& r);
  ax::Vec broadcast(const ax::Xmm& scalar, const char* name);
  void check_non_finite(Lanes lanes, const ax::Vec& v);

  // row_codegen_ops.cpp: the row ops.
  bool emit_row_op(std::string& error);
  bool emit_reduction(std::string& error);
  bool emit_softmax(std::string& error);
  bool emit_layer_norm(std::string& error);
  bool emit_layer_norm_statistics(const ax::Xmm& m, ax::Vec& mean, ax::Vec& inv_std, std::string& error);
  bool emit_value_pass(Fold fold, std::string& error);
  ax::Xmm row_length();
  int value_unroll() const;

  ax::Compiler& cc_;
  const FusedRowSpec& spec_;
  const FusedElementwiseSpec& prologue_;
  Isa isa_;
  int lanes_;
  // The row's sums are compensated (Accumulation::Compensated; Max has none).
  bool compensated_;
  std::vector<bool> live_;
  std::vector<bool> input_used_;  // read by a live Input node
  VecContext vec_ctx_;   // tier width
  VecContext lane_ctx_;  // one lane (xmm)
  std::optional<std::int64_t> known_d2_;
  // Passes after the first read the row values from the prologue's input
  // (when the value is a plain, not inner-broadcast input) or from the output
  // row, where the first pass stores them.
  std::optional<std::uint16_t> source_input_;
  ax::Gp inputs_, strides_, output_, scale_, bias_, row_, row_end_, i0_, i1_, d1_, d2_, i_, flag_;
  ax::Gp out_row_, src_row_;
  std::vector<ax::Gp> in_ptr_;
  std::vector<ax::Vec> broadcast_;
  ax::KReg tail_mask_, nan_k_;
  ax::Vec tail_vmask_;  // AVX2: all ones in the tail's lanes
  ax::Vec nf_acc_, nan_vec_;
  ax::Gp nan_gp_;
  Accumulators acc_;      // the row's sum or max
  Accumulators dev_acc_;  // LayerNorm: the sum of deviations from the first mean
};

}  // namespace row
}  // namespace canary::jit::x86
