// The dispatch loop: one switch over opcodes; kernels through prebuilt
// adapters; anchors count, fire on_hot and offer entry to compiled code.
#include "vm/interpreter.h"

#include <new>
#include <string>

#include "canary/error.h"
#include "kernels/onednn.h"

namespace canary::vm {

// Sizes the frame for the program and loads its constants into their registers.
Interpreter::Interpreter(std::shared_ptr<const Program> p, RunLimits limits)
    : program_(std::move(p)), limits_(limits), arena_(std::make_shared<ArenaBudget>(limits.max_arena_bytes)),
      profile_(*program_) {
  code_ = program_->code().data();
  ops_ = program_->operands().data();
  frame_.registers.resize(program_->register_count());
  frame_.loops.resize(program_->loop_slots());
  frame_.scans.resize(program_->scan_buffers());
  frame_.move_scratch.resize(program_->max_move_pairs());
  for (const auto& [reg, value] : program_->constants()) {
    frame_.registers[reg.index] = value;
    pinned_sources_.push_back(reg);
  }
  for (RegId r : program_->input_registers()) pinned_sources_.push_back(r);
}

// Installs (or removes, with nullptr) the JIT's hooks.
void Interpreter::set_hooks(JitHooks* hooks) {
  hooks_ = hooks;
  hotness_.reset(hooks ? program_->anchors().size() : 0, hooks ? hooks->hot_threshold() : 0,
                 hooks ? hooks->hot_time_ns() : 0);
}

// The frame as hooks see it.
FrameView Interpreter::frame_view() {
  return FrameView{frame_.registers, frame_.loops, frame_.scans, &frame_.bindings};
}

// Binds inputs, runs to Return, hands out the outputs.
std::vector<Tensor> Interpreter::run(std::span<const Tensor> inputs) {
  const ScopedTensorAllocationLimit allocation_limit(limits_.max_tensor_bytes);
  const ScopedArenaBudget arena(arena_);
  const kernels::OnednnThreadScope onednn_threads(limits_.intra_op_threads);
  const kernels::OnednnEnabledScope onednn_enabled(limits_.use_onednn);
  bind_inputs(inputs);
  try {
    execute();
    hotness_.close();
  } catch (...) {
    hotness_.close();
    if (observer_) observer_->on_run_end(false);
    observer_ = nullptr;
    release_borrowed();
    throw;
  }
  if (observer_) observer_->on_run_end(true);
  observer_ = nullptr;
  std::vector<Tensor> outputs = collect_outputs();
  release_borrowed();
  for (Tensor& t : outputs) release_from_arena(t);
  return outputs;
}

// Counts an anchor visit, fires on_hot at the threshold and lets compiled code
// take over; returns the pc to continue at.
Pc Interpreter::visit_anchor(AnchorId anchor, Pc next) {
  const std::uint64_t count = profile_.visit_anchor(anchor);
  if (hooks_ == nullptr) return next;
  hotness_.close();
  if (hotness_.becomes_hot(anchor, count)) hooks_->on_hot(*program_, anchor, profile_);
  const FrameView view = frame_view();
  const EntryResult r = hooks_->enter(*program_, anchor, view);
  switch (r.action) {
    case EntryAction::Interpret: hotness_.open(anchor, count); return next;
    case EntryAction::Record: observer_ = r.observer; return next;
    case EntryAction::Resumed: break;
  }
  // Taken first, so that whatever ends the run from here on reaches it.
  if (r.exit.valid() && r.observer != nullptr) {
    if (observer_ == nullptr) observer_ = r.observer;
    else r.observer->on_run_end(false);  // one observer at a time
  }
  if (r.resume_pc >= program_->instruction_count())
    throw Error(ErrorKind::Internal, "compiled code resumed at pc " + std::to_string(r.resume_pc) +
                                         " outside the program (" + std::to_string(program_->instruction_count()) + ")");
  if (r.exit.valid()) hooks_->on_side_exit(*program_, anchor, r.exit, r.resume_pc, view);
  return r.resume_pc;
}

// Calls the adapter, then profiles each output. (Output sizes are bounded by
// the ScopedTensorAllocationLimit that run() holds.)
void Interpreter::run_kernel(const Instruction& in) {
  Tensor* regs = frame_.registers.data();
  const RegId* operands = ops_ + in.operands;
  const KernelCall call{regs, operands, operands + in.num_inputs, in.num_inputs, in.num_outputs};
  {
    const ScopedTierTimer timer(timers_ ? &timers_->bucket(TimedTier::Interpreted, timed_op_of(*program_, in))
                                        : nullptr);
    in.fn(*in.params, call);
  }
  for (std::uint32_t o = 0; o < in.num_outputs; ++o) {
    const RegId r = call.outputs[o];
    if (!r.valid()) continue;
    profile_.record_output(in.slot + o, regs[r.index].shape());
  }
}

// Moves values between registers: stealing swaps buffers, otherwise the handle is shared.
void Interpreter::run_move(const Instruction& in) {
  const auto& mp = static_cast<const MoveParams&>(*in.params);
  Tensor* regs = frame_.registers.data();
  const RegId* srcs = ops_ + in.operands;
  const RegId* dsts = srcs + in.num_inputs;
  if (!mp.parallel) {
    for (std::uint32_t i = 0; i < in.num_inputs; ++i) {
      if (mp.steal[i]) std::swap(regs[dsts[i].index], regs[srcs[i].index]);
      else regs[dsts[i].index] = regs[srcs[i].index];
    }
    return;
  }
  Tensor* scratch = frame_.move_scratch.data();
  for (std::uint32_t i = 0; i < in.num_inputs; ++i) scratch[i] = regs[srcs[i].index];
  // Moving out of the scratch drops its extra handles, so the buffers stay
  // solely owned and Tensor::reset can keep reusing them.
  for (std::uint32_t i = 0; i < in.num_inputs; ++i) regs[dsts[i].index] = std::move(scratch[i]);
}

// Reads a one-element condition of any dtype.
bool Interpreter::test_condition(const Instruction& in, const Tensor& cond) const {
  if (!cond.defined() || cond.numel() != 1)
    fail(in, ErrorKind::Shape, "condition must have exactly one element, got " +
                                   (cond.defined() ? cond.type_string() : std::string("an undefined value")));
  switch (cond.dtype()) {
    case DType::Bool: return cond.data<bool>()[0];
    case DType::I64: return cond.data<std::int64_t>()[0] != 0;
    case DType::I32: return cond.data<std::int32_t>()[0] != 0;
    case DType::F32: return cond.data<float>()[0] != 0.0f;
    case DType::F64: return cond.data<double>()[0] != 0.0;
  }
  return false;
}

// Loop header: leaves the loop when the trip count is reached or the
// condition is false; otherwise checks the iteration limit, writes the
// iteration number and visits the loop's anchor.
Pc Interpreter::enter_iteration(const Instruction& in, Pc pc) {
  LoopState& s = frame_.loops[in.slot];
  if (s.iteration >= s.trip_count) return in.target;
  const RegId cond = ops_[in.operands];
  if (cond.valid() && !test_condition(in, frame_.registers[cond.index])) return in.target;
  if (s.iteration >= limits_.max_loop_iterations)
    fail(in, ErrorKind::Resource, "more than " + std::to_string(limits_.max_loop_iterations) +
                                      " iterations (RunLimits::max_loop_iterations)");
  const RegId iter = output_id(in, 0);
  if (iter.valid()) {
    Tensor& t = frame_.registers[iter.index];
    t.reset(DType::I64, {});
    t.data<std::int64_t>()[0] = s.iteration;
  }
  return visit_anchor(AnchorId{in.aux}, pc + 1);
}

// Reports one executed instruction to the recording observer.
void Interpreter::notify_observer(Pc pc, Pc next) {
  const FrameView view = frame_view();
  if (!observer_->on_executed(pc, next, view)) {
    observer_->on_run_end(true);
    observer_ = nullptr;
  }
}

// The dispatch loop.
void Interpreter::execute() {
  Pc pc = 0;
  std::uint64_t executed = 0;
  try {
    for (;;) {
      const Instruction& in = code_[pc];
      ++executed;
      Pc next = pc + 1;
      switch (in.op) {
        case Opcode::Entry: next = visit_anchor(AnchorId{in.slot}, next); break;
        case Opcode::Kernel: run_kernel(in); break;
        case Opcode::Move: run_move(in); break;
        case Opcode::Jump: next = in.target; break;
        case Opcode::JumpIfFalse:
          if (!test_condition(in, input_reg(in, 0))) next = in.target;
          break;
        case Opcode::LoopInit: init_loop(in); break;
        case Opcode::ScanInit: init_scan(in); break;
        case Opcode::LoopHeader: next = enter_iteration(in, pc); break;
        case Opcode::LoopNext:
          ++frame_.loops[in.slot].iteration;
          next = in.target;
          break;
        case Opcode::ScanSlice: slice_scan_input(in); break;
        case Opcode::ScanAppend: append_scan_output(in); break;
        case Opcode::ScanStack: stack_scan_output(in); break;
        case Opcode::Return: executed_ += executed; return;
      }
      if (observer_ != nullptr) [[unlikely]] notify_observer(pc, next);
      pc = next;
    }
  } catch (...) {
    executed_ += executed;
    rethrow_at(pc);
  }
}

// Re-throws the active exception; errors from a kernel get the node's prefix
// "node 'NAME' (Op): " and keep their kind.
void Interpreter::rethrow_at(Pc pc) {
  const Instruction& in = code_[pc];
  const std::string prefix = program_->node_context(in);
  try {
    throw;
  } catch (const Error& e) {
    if (in.op != Opcode::Kernel || prefix.empty()) throw;
    throw Error(e.kind(), prefix + e.detail());
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::Resource, prefix + "out of memory");
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Internal, prefix + e.what());
  }
}

// Throws an error of kind prefixed with the instruction's node.
void Interpreter::fail(const Instruction& in, ErrorKind kind, const std::string& text) const {
  throw Error(kind, program_->node_context(in) + text);
}

}  // namespace canary::vm
