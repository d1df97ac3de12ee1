// SessionHooks: one session's side of the JIT — the vm::JitHooks the
// interpreter calls. Picks an installed variant whose guards pass, runs it,
// reports guard failures and side exits to the Engine, and records traces
// when the Engine asks for one.
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "jit/compiled_trace.h"
#include "jit/engine.h"
#include "jit/trace_recorder.h"

namespace canary::jit {

class SessionHooks final : public vm::JitHooks {
 public:
  SessionHooks(std::shared_ptr<Engine> engine, std::int64_t max_loop_iterations, std::size_t max_tensor_bytes,
               int threads);

  // The session's call number (1-based), stamped on events; also takes the
  // model's use clock for this call.
  void begin_call(std::uint64_t call);
  const JitStats& counters() const { return counters_; }
  // The cost model's ticket for this call (nullopt: none): at its anchor the
  // named candidate runs instead of the installed variants.
  // note_shapes: the call's entry shapes go to the trial's histogram (once
  // per call: extra runs of the same inputs pass false).
  void set_ticket(std::optional<cost::Ticket> ticket, bool note_shapes = true);
  // Whether the ticket's candidate ran (its guards admitted the call).
  bool ticket_ran() const { return ticket_ran_; }
  // Compiled code adds its step times here (nullptr: no timing).
  void set_timers(vm::TierTimers* timers) { ctx_.timers = timers; }

  std::uint64_t hot_threshold() const override;
  std::uint64_t hot_time_ns() const override;
  void on_hot(const vm::Program& program, vm::AnchorId anchor, const vm::ShapeProfile& profile) override;
  vm::EntryResult enter(const vm::Program& program, vm::AnchorId anchor, const vm::FrameView& frame) override;
  void on_side_exit(const vm::Program& program, vm::AnchorId anchor, vm::ExitId exit, vm::Pc pc,
                    const vm::FrameView& frame) override;

 private:
  // This session's view of one anchor's variants (reloaded when the version changes).
  struct AnchorView {
    std::uint64_t version = UINT64_MAX;
    std::shared_ptr<const VariantList> list;
    std::shared_ptr<const VariantList> sides;
    std::vector<TraceScratch> scratch;       // per variant
    std::vector<TraceScratch> side_scratch;  // per side trace
  };

  // What running a list's traces on a frame found: the first that admitted
  // it (with its run), else the last one whose guards refused.
  struct Admitted {
    const CompiledTrace* trace = nullptr;
    TraceRun run;
    const CompiledTrace* refused = nullptr;
    std::uint32_t refused_guard = 0;
  };

  AnchorView& view(vm::AnchorId anchor);
  Admitted run_first_admitted(const VariantList& list, std::vector<TraceScratch>& scratch, vm::Pc start_pc,
                              const CompiledTrace* skip, const vm::FrameView& frame);
  // A recorder for this call; side_pc: a side trace's, from that pc.
  void new_recorder(const vm::Program& program, vm::AnchorId anchor, vm::Pc cut_at, vm::Pc side_pc);
  // Counts what one trace run's kernels reported: canaries, tiled calls.
  void note_run(vm::AnchorId anchor, const CompiledTrace& trace, const TraceRun& run);
  vm::EntryResult entered(vm::AnchorId anchor, const CompiledTrace& trace, const TraceRun& run);
  // Follows a mid-trace exit into the side traces that start where it
  // resumes (a chain of at most kMaxSideChain); returns the trace that ran
  // last, with `run` its outcome (the canaries of the runs before it noted).
  const CompiledTrace& continue_in_side_traces(vm::AnchorId anchor, AnchorView& v, const CompiledTrace& trace,
                                               TraceRun& run, const vm::FrameView& frame);
  vm::EntryResult enter_variant(const vm::Program& program, vm::AnchorId anchor, AnchorView& v,
                                const CompiledTrace& trace, TraceRun run, const vm::FrameView& frame);
  std::optional<vm::EntryResult> enter_ticket(vm::AnchorId anchor, const vm::FrameView& frame);
  vm::EntryResult start_recording(const vm::Program& program, vm::AnchorId anchor, vm::Pc cut_at);
  // Records the side trace from the exit `r` resumes at, when the engine wants it.
  void maybe_record_side_trace(const vm::Program& program, vm::AnchorId anchor, const vm::FrameView& frame,
                               vm::EntryResult& r);

  std::shared_ptr<Engine> engine_;
  RunContext ctx_;
  std::vector<AnchorView> views_;
  std::unique_ptr<TraceRecorder> recorder_;
  std::uint64_t call_ = 0;
  JitStats counters_;
  // The variant that just ran and left through an exit (for on_side_exit).
  const CompiledTrace* exited_ = nullptr;
  std::optional<cost::Ticket> ticket_;
  std::shared_ptr<const CompiledTrace> ticket_trace_;
  TraceScratch ticket_scratch_;
  bool ticket_ran_ = false, ticket_noted_ = false;
  // The variant that exited was a ticket's candidate: its exits stay out of
  // the anchor's ladder (a trial must not demote, cut or retrace the anchor).
  bool exited_from_ticket_ = false;
};

}  // namespace canary::jit
