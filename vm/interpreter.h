// The interpreter: runs a Program on a Frame of registers, one instruction at
// a time, recording shapes and hot counters and offering anchors to a JIT.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "canary/error.h"
#include "canary/tensor.h"
#include "runtime/core/arena_budget.h"
#include "vm/anchor_hotness.h"
#include "vm/frame.h"
#include "vm/jit_hooks.h"
#include "vm/program.h"
#include "vm/shape_profile.h"
#include "vm/tier_timers.h"

namespace canary::vm {

struct RunLimits {
  std::size_t max_tensor_bytes = 16ull << 30;      // any one tensor
  std::int64_t max_loop_iterations = 1 << 24;      // any one loop execution
  int intra_op_threads = 1;                         // oneDNN threads inside one kernel; 0: library default
  bool use_onednn = true;                           // false: the reference kernels only
  std::size_t max_arena_bytes = 64ull << 30;       // all tensors this interpreter holds at once
};

// One per Session (per thread); the Program is immutable and shared.
class Interpreter {
 public:
  explicit Interpreter(std::shared_ptr<const Program> p, RunLimits limits = {});

  // nullptr: pure interpreter.
  void set_hooks(JitHooks* hooks);
  // nullptr: no timing. Kernel instructions add their wall time to `timers`.
  void set_timers(TierTimers* timers) { timers_ = timers; }
  // Runs the program on inputs given in input_names() order. Inputs are
  // borrowed, never written; the returned tensors alias no register.
  std::vector<Tensor> run(std::span<const Tensor> inputs);

  std::uint64_t instructions_executed() const { return executed_; }
  const ShapeProfile& profile() const { return profile_; }
  ShapeProfile& profile() { return profile_; }
  const Program& program() const { return *program_; }
  const RunLimits& limits() const { return limits_; }
  // Bytes of tensor storage the interpreter holds now (its kept registers)
  // and the most it held during any call (RunLimits::max_arena_bytes).
  std::size_t arena_bytes() const { return arena_->held(); }
  std::size_t peak_arena_bytes() const { return arena_->peak(); }
  // The budget this interpreter's tensors are charged to. A session's batch
  // slices share the session's, so that RunLimits::max_arena_bytes bounds
  // them all together; share before the first run (nothing is charged yet).
  const std::shared_ptr<ArenaBudget>& arena_budget() const { return arena_; }
  void share_arena_budget(std::shared_ptr<ArenaBudget> budget) { arena_ = std::move(budget); }
  // The frame as hooks and observers see it.
  FrameView frame_view();

 private:
  // Input binding and output collection (input_binding.cpp).
  void bind_inputs(std::span<const Tensor> inputs);
  void check_input(std::size_t i, const Tensor& t);
  void check_input_expressions(std::span<const Tensor> inputs);
  std::vector<Tensor> collect_outputs();
  void release_borrowed();

  // Dispatch (interpreter.cpp).
  void execute();
  Pc visit_anchor(AnchorId anchor, Pc next);
  void run_kernel(const Instruction& in);
  void run_move(const Instruction& in);
  bool test_condition(const Instruction& in, const Tensor& cond) const;
  Pc enter_iteration(const Instruction& in, Pc pc);
  void notify_observer(Pc pc, Pc next);
  [[noreturn]] void rethrow_at(Pc pc);

  // Loop and scan state (loop_ops.cpp).
  void init_loop(const Instruction& in);
  void init_scan(const Instruction& in);
  void slice_scan_input(const Instruction& in);
  void append_scan_output(const Instruction& in);
  void stack_scan_output(const Instruction& in);
  [[noreturn]] void fail(const Instruction& in, ErrorKind kind, const std::string& text) const;

  const Tensor& input_reg(const Instruction& in, int i) const {
    return frame_.registers[ops_[in.operands + static_cast<std::uint32_t>(i)].index];
  }
  RegId output_id(const Instruction& in, int i) const {
    return ops_[in.operands + in.num_inputs + static_cast<std::uint32_t>(i)];
  }

  std::shared_ptr<const Program> program_;
  RunLimits limits_;
  // Charged for every tensor a call allocates; outputs are released from it
  // when they are handed to the caller.
  std::shared_ptr<ArenaBudget> arena_;
  Frame frame_;
  ShapeProfile profile_;
  const Instruction* code_ = nullptr;
  const RegId* ops_ = nullptr;
  JitHooks* hooks_ = nullptr;
  TierTimers* timers_ = nullptr;
  AnchorHotness hotness_;
  InstructionObserver* observer_ = nullptr;
  std::uint64_t executed_ = 0;
  std::vector<RegId> pinned_sources_;  // registers of inputs and constants
};

}  // namespace canary::vm
