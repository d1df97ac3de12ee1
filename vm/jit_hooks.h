// The tier-up interface: how the interpreter talks to a JIT. Declared here,
// implemented by jit/ and wired by runtime/; vm/ never sees the JIT itself.
//
// Protocol, per Interpreter (one thread):
//   1. Every anchor visit bumps the anchor's counter in the ShapeProfile.
//      The graph entry (anchor 0) is visited once per run(), after the inputs
//      are bound; a loop header anchor once per iteration started, after the
//      iteration number register is written (and before the body runs).
//   2. When a counter reaches hot_threshold(), or the time interpreted from
//      an anchor's visits reaches hot_time_ns(), on_hot() is called (at the
//      anchor's next visit), once per anchor and interpreter.
//   3. At every anchor visit the interpreter calls enter(). The hooks either
//      decline (Interpret), ask for a recording of the execution that follows
//      (Record), or run installed compiled code on the frame (Resumed).
//   4. After Resumed with a valid exit id, on_side_exit() is called before the
//      interpreter resumes at resume_pc (reporting to EntryResult::observer
//      from there on, when one is given).
#pragma once

#include <cstdint>
#include <span>

#include "canary/tensor.h"
#include "graph/symbolic.h"
#include "vm/bytecode.h"
#include "vm/frame.h"

namespace canary::vm {

class Program;
class ShapeProfile;

// The frame as compiled code and observers see it. Registers are indexed by
// RegId; Program::live_at(pc) names the registers holding live values at pc.
struct FrameView {
  std::span<Tensor> registers;
  std::span<LoopState> loops;
  std::span<ScanBuffer> scans;  // ScanAppend's buffers (vm/scan_ops.h appends as the interpreter does)
  const graph::Bindings* bindings = nullptr;  // symbols bound from this call's inputs
};

// Follows one execution instruction by instruction (the JIT's trace recorder).
class InstructionObserver {
 public:
  virtual ~InstructionObserver() = default;
  // Called after the instruction at pc has executed; next_pc is where the
  // interpreter goes next. Output registers of pc hold their new values.
  // Return false to stop observing (the interpreter then forgets the observer).
  virtual bool on_executed(Pc pc, Pc next_pc, const FrameView& frame) = 0;
  // Called when run() ends (normally or by an error) while observing; the
  // observer is forgotten afterwards.
  virtual void on_run_end(bool ok) { (void)ok; }
};

enum class EntryAction {
  Interpret,  // no compiled code here: interpret from the anchor
  Record,     // interpret from the anchor, reporting each instruction to `observer`
  Resumed,    // compiled code ran: continue at resume_pc
};

struct EntryResult {
  EntryAction action = EntryAction::Interpret;
  // Resumed: the pc to continue at — the region's end (e.g. a loop's exit, or
  // the final Return) or a side exit's pc.
  Pc resume_pc = kNoPc;
  // Resumed through a side exit: its id (invalid when the region completed).
  ExitId exit;
  // Record: receives every executed instruction until it returns false.
  // Resumed through a side exit may set it too: the interpreter then reports
  // the instructions it runs from resume_pc on (a JIT recording the side
  // trace that starts at the exit). When an observer is active already, the
  // new one is told the run ended (on_run_end(false)) at once.
  InstructionObserver* observer = nullptr;
};

class JitHooks {
 public:
  virtual ~JitHooks() = default;

  // Anchor visits before on_hot fires; read once by Interpreter::set_hooks.
  virtual std::uint64_t hot_threshold() const { return 1000; }
  // Interpreted time (ns) charged to an anchor that makes it hot before
  // hot_threshold() visits (vm/anchor_hotness.h); 0: visits only. Read once
  // by Interpreter::set_hooks.
  virtual std::uint64_t hot_time_ns() const { return 0; }

  // "This anchor is hot": its counter reached hot_threshold(). Called once per
  // anchor. The profile holds the shapes seen so far. Must not throw.
  virtual void on_hot(const Program& program, AnchorId anchor, const ShapeProfile& profile) = 0;

  // "Enter compiled code here?" Asked at every anchor visit. On entry, every
  // register live at the anchor's pc (Program::live_at) is materialised:
  // inputs and constants at the entry anchor; at a loop header also the
  // carried values, the condition, the iteration number register and
  // frame.loops[slot] (iteration = the index of the iteration starting now).
  //
  // When returning Resumed, compiled code must have written every register
  // live at resume_pc (and no register of a value live there may have been
  // clobbered), and updated the loop states of any loop it ran: resuming at a
  // loop's exit pc means the loop finished; resuming inside a body means
  // loops[slot].iteration is that iteration's index. Compiled code that
  // resumes inside or after a loop with scan outputs must have run every
  // ScanAppend before resume_pc, each once (on frame.scans, with
  // vm/scan_ops.h). Errors thrown here propagate to the caller of run()
  // unchanged.
  virtual EntryResult enter(const Program& program, AnchorId anchor, const FrameView& frame) = 0;

  // "A side exit happened": compiled code entered at `anchor` left through
  // `exit`; the interpreter resumes at pc with the frame's registers. A pure
  // notification (for exit counters and retrace requests). Must not throw.
  virtual void on_side_exit(const Program& program, AnchorId anchor, ExitId exit, Pc pc,
                            const FrameView& frame) = 0;
};

}  // namespace canary::vm
