// TraceRecorder: an InstructionObserver that follows the interpreter through
// one execution of an anchor's region and builds a Trace.
#pragma once

#include <functional>
#include <optional>
#include <unordered_map>

#include "jit/trace.h"
#include "vm/jit_hooks.h"
#include "vm/program.h"

namespace canary::jit {

class TraceRecorder : public vm::InstructionObserver {
 public:
  // Called once with the finished trace (or nullopt when the run failed
  // before the region ended).
  using Done = std::function<void(std::optional<Trace>)>;

  // cut_at: stop before this pc (kNoPc: no cut). record_spans: keep each f32
  // instruction output's finite span (TraceValue::span, for range canaries).
  TraceRecorder(const vm::Program& program, vm::AnchorId anchor, vm::Pc cut_at, Done done, bool record_spans = false);

  // Makes this a side trace's recorder: the region starts at `pc`, where a
  // side exit left `frame`, and the interpreter reports from there on.
  void start_at_exit(vm::Pc pc, const vm::FrameView& frame);

  // True once the trace was handed over (or the run ended).
  bool finished() const { return finished_; }

  bool on_executed(vm::Pc pc, vm::Pc next_pc, const vm::FrameView& frame) override;
  void on_run_end(bool ok) override;

 private:
  bool started() const { return started_; }
  void start(const vm::FrameView& frame);
  // Returns false when the region ends before this instruction.
  bool admit(const vm::Instruction& in, vm::Pc pc);
  void record(const vm::Instruction& in, vm::Pc pc, vm::Pc next_pc, const vm::FrameView& frame);
  TraceValue value_before(vm::RegId reg, const vm::FrameView& frame);
  void finish(TraceEnd end, vm::Pc end_pc);

  const vm::Program& program_;
  Trace trace_;
  vm::Pc cut_at_;
  bool record_spans_;
  std::uint32_t loop_slot_ = UINT32_MAX;  // the anchor's loop, for loop headers
  bool started_ = false;
  bool skip_anchor_report_ = false;  // start_at_exit: the next report is the anchor's own
  bool finished_ = false;
  Done done_;
  // Registers written so far in the region (their later reads are internal).
  std::unordered_map<std::uint32_t, TraceValue> written_;
  std::unordered_map<std::uint32_t, bool> entry_seen_;
};

}  // namespace canary::jit
