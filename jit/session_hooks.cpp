// Per-session JIT hooks: variant selection at anchors, recording on request,
// and reporting guard failures, deopts and value canaries to the engine.
#include "jit/session_hooks.h"

#include "vm/shape_profile.h"

namespace canary::jit {

namespace {

// Side traces one exit may run through before the interpreter takes over
// (each starts where the previous one left: the bound keeps a cycle of
// exits from spinning).
constexpr int kMaxSideChain = 4;

// Exits a side trace may continue: branch and layout exits mid-trace (entry
// guards resume at the region's start; a kernel error must reach the
// interpreter, which re-runs the op and reports it).
bool continues_in_side_trace(const Plan& plan, std::uint32_t exit) {
  return exit < plan.exits.size() &&
         (plan.exits[exit].kind == ExitKind::Branch || plan.exits[exit].kind == ExitKind::Layout);
}

// The scratch of each trace of `next`: what the session kept for it under
// `previous` when it was installed already (its buffers stay warm when
// another variant or a side trace comes or goes), else fresh.
std::vector<TraceScratch> carry_scratch(const VariantList* previous, std::vector<TraceScratch>& kept,
                                        const VariantList& next) {
  std::vector<TraceScratch> out(next.size());
  if (previous == nullptr) return out;
  for (std::size_t i = 0; i < next.size(); ++i)
    for (std::size_t j = 0; j < previous->size() && j < kept.size(); ++j)
      if ((*previous)[j] == next[i]) {
        out[i] = std::move(kept[j]);
        break;
      }
  return out;
}

}  // namespace

SessionHooks::SessionHooks(std::shared_ptr<Engine> engine, std::int64_t max_loop_iterations,
                           std::size_t max_tensor_bytes, int threads)
    : engine_(std::move(engine)) {
  ctx_.max_loop_iterations = max_loop_iterations;
  ctx_.max_tensor_bytes = max_tensor_bytes;
  ctx_.threads = threads <= 0 ? 1 : threads;
}

void SessionHooks::begin_call(std::uint64_t call) {
  call_ = call;
  ctx_.tick = engine_->next_tick();
}

std::uint64_t SessionHooks::hot_threshold() const { return std::max<std::uint64_t>(1, engine_->options().hot_threshold); }

std::uint64_t SessionHooks::hot_time_ns() const { return engine_->options().hot_time_us * 1000; }

void SessionHooks::on_hot(const vm::Program&, vm::AnchorId anchor, const vm::ShapeProfile& profile) {
  engine_->on_hot(anchor, call_, profile.anchor_count(anchor));
}

SessionHooks::AnchorView& SessionHooks::view(vm::AnchorId anchor) {
  if (views_.size() <= anchor.index) views_.resize(anchor.index + 1);
  AnchorView& v = views_[anchor.index];
  if (v.version != engine_->version(anchor)) {
    InstalledVariants iv = engine_->variants(anchor);
    v.version = iv.version;
    v.scratch = carry_scratch(v.list.get(), v.scratch, *iv.list);
    v.side_scratch = carry_scratch(v.sides.get(), v.side_scratch, *iv.sides);
    v.list = std::move(iv.list);
    v.sides = std::move(iv.sides);
  }
  return v;
}

void SessionHooks::new_recorder(const vm::Program& program, vm::AnchorId anchor, vm::Pc cut_at, vm::Pc side_pc) {
  const std::uint64_t call = call_;
  Engine* engine = engine_.get();
  recorder_ = std::make_unique<TraceRecorder>(
      program, anchor, cut_at,
      [engine, anchor, call, side_pc](std::optional<Trace> t) { engine->submit(anchor, std::move(t), call, side_pc); },
      engine->options().range_canaries);
}

vm::EntryResult SessionHooks::start_recording(const vm::Program& program, vm::AnchorId anchor, vm::Pc cut_at) {
  new_recorder(program, anchor, cut_at, vm::kNoPc);
  vm::EntryResult r;
  r.action = vm::EntryAction::Record;
  r.observer = recorder_.get();
  return r;
}

void SessionHooks::note_run(vm::AnchorId anchor, const CompiledTrace& trace, const TraceRun& run) {
  counters_.tiled_fused_calls += run.tiled_calls;
  counters_.device_fused_calls += run.device_calls;
  counters_.device_bytes += run.device_bytes;
  counters_.device_chain_calls += run.device_chains;
  if (run.device_failed) engine_->on_device_failure(anchor, trace, call_);
  if (run.value_canary) {
    ++counters_.value_canaries;
    engine_->on_value_canary(anchor, trace, call_);
  }
  if (run.range_canary) {
    ++counters_.value_canaries;
    ++counters_.range_canaries;
    engine_->on_range_canary(anchor, trace, run.range_group, call_);
  }
}

// Counts a compiled entry and tells the interpreter where to resume.
vm::EntryResult SessionHooks::entered(vm::AnchorId anchor, const CompiledTrace& trace, const TraceRun& run) {
  ++counters_.compiled_entries;
  note_run(anchor, trace, run);
  vm::EntryResult r;
  r.action = vm::EntryAction::Resumed;
  r.resume_pc = run.resume_pc;
  if (run.outcome == TraceOutcome::Exited) {
    r.exit = vm::ExitId{run.exit};
    exited_ = &trace;
  }
  return r;
}

void SessionHooks::set_ticket(std::optional<cost::Ticket> ticket, bool note_shapes) {
  ticket_ = ticket;
  ticket_ran_ = false;
  ticket_noted_ = !note_shapes;
  std::shared_ptr<const CompiledTrace> trace = ticket ? engine_->ticket_trace(*ticket) : nullptr;
  if (trace != ticket_trace_) ticket_scratch_ = TraceScratch{};
  ticket_trace_ = std::move(trace);
}

// At the ticket's anchor: the candidate under trial runs (nullopt: its guards
// refused the call, so the installed variants get their usual chance); the
// interpreter candidate leaves the region to the interpreter.
std::optional<vm::EntryResult> SessionHooks::enter_ticket(vm::AnchorId anchor, const vm::FrameView& frame) {
  if (!ticket_noted_) {
    ticket_noted_ = true;
    engine_->note_entry_shapes(anchor, frame);
  }
  if (!ticket_trace_) {
    ticket_ran_ = true;
    return vm::EntryResult{};
  }
  const TraceRun run = ticket_trace_->run(frame, ctx_, ticket_scratch_);
  if (run.outcome == TraceOutcome::GuardFailed) return std::nullopt;
  ticket_ran_ = true;
  exited_from_ticket_ = run.outcome == TraceOutcome::Exited;
  return entered(anchor, *ticket_trace_, run);
}

vm::EntryResult SessionHooks::enter(const vm::Program& program, vm::AnchorId anchor, const vm::FrameView& frame) {
  if (!engine_->active()) return {};
  if (ticket_ && ticket_->anchor == anchor.index)
    if (std::optional<vm::EntryResult> r = enter_ticket(anchor, frame)) return *r;
  const bool recording = recorder_ && !recorder_->finished();
  if (!recording && engine_->recording_wanted(anchor)) {
    // A retrace is wanted (e.g. a branch that keeps deoptimising): record this
    // call instead of running the variant it will replace.
    const RecordingTicket ticket = engine_->claim_recording(anchor);
    if (ticket.record) return start_recording(program, anchor, ticket.cut_at);
  }
  AnchorView& v = view(anchor);
  const Admitted a = run_first_admitted(*v.list, v.scratch, vm::kNoPc, nullptr, frame);
  if (a.trace) return enter_variant(program, anchor, v, *a.trace, a.run, frame);
  if (a.refused) {
    ++counters_.guard_failures;
    engine_->on_guard_failure(anchor, *a.refused, a.refused_guard, frame, call_);
  }
  // One recording at a time; the lock-free hint keeps idle anchors off the engine's lock.
  if (recording || !engine_->recording_wanted(anchor)) return {};
  const RecordingTicket ticket = engine_->claim_recording(anchor);
  if (ticket.record) return start_recording(program, anchor, ticket.cut_at);
  return {};
}

const CompiledTrace& SessionHooks::continue_in_side_traces(vm::AnchorId anchor, AnchorView& v,
                                                           const CompiledTrace& trace, TraceRun& run,
                                                           const vm::FrameView& frame) {
  const CompiledTrace* last = &trace;
  for (int depth = 0; depth < kMaxSideChain; ++depth) {
    if (run.outcome != TraceOutcome::Exited || !continues_in_side_trace(last->plan(), run.exit)) break;
    const Admitted a = run_first_admitted(*v.sides, v.side_scratch, run.resume_pc, last, frame);
    if (!a.trace) {
      if (a.refused) engine_->on_side_refused(anchor, *a.refused, a.refused_guard, frame, call_);
      break;
    }
    last->count_exit(run.exit);  // taken, and continued compiled
    ++counters_.side_trace_entries;
    note_run(anchor, *last, run);
    run = a.run;
    last = a.trace;
  }
  return *last;
}

// Runs the traces of `list` (those from start_pc only, unless kNoPc; never
// `skip`) until one's guards admit the frame.
SessionHooks::Admitted SessionHooks::run_first_admitted(const VariantList& list, std::vector<TraceScratch>& scratch,
                                                        vm::Pc start_pc, const CompiledTrace* skip,
                                                        const vm::FrameView& frame) {
  Admitted a;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const CompiledTrace& trace = *list[i];
    if (&trace == skip || (start_pc != vm::kNoPc && trace.plan().start_pc != start_pc)) continue;
    const TraceRun run = trace.run(frame, ctx_, scratch[i]);
    if (run.outcome != TraceOutcome::GuardFailed) {
      a.trace = &trace;
      a.run = run;
      return a;
    }
    a.refused = &trace;
    a.refused_guard = run.exit;
  }
  return a;
}

// A variant ran: its exits may continue in side traces; an exit that still
// reaches the interpreter may start a side trace's recording.
vm::EntryResult SessionHooks::enter_variant(const vm::Program& program, vm::AnchorId anchor, AnchorView& v,
                                            const CompiledTrace& trace, TraceRun run, const vm::FrameView& frame) {
  const CompiledTrace& last = continue_in_side_traces(anchor, v, trace, run, frame);
  vm::EntryResult r = entered(anchor, last, run);
  if (run.outcome == TraceOutcome::Exited && continues_in_side_trace(last.plan(), run.exit))
    maybe_record_side_trace(program, anchor, frame, r);
  return r;
}

void SessionHooks::maybe_record_side_trace(const vm::Program& program, vm::AnchorId anchor,
                                           const vm::FrameView& frame, vm::EntryResult& r) {
  const vm::Pc pc = r.resume_pc;
  if ((recorder_ && !recorder_->finished()) || !engine_->side_recording_wanted(anchor, pc) ||
      !engine_->claim_side_recording(anchor, pc))
    return;
  new_recorder(program, anchor, vm::kNoPc, pc);
  recorder_->start_at_exit(pc, frame);
  r.observer = recorder_.get();
}

void SessionHooks::on_side_exit(const vm::Program&, vm::AnchorId anchor, vm::ExitId exit, vm::Pc pc,
                                const vm::FrameView& frame) {
  if (exited_ == nullptr) return;
  ++counters_.deopts;
  if (exited_from_ticket_) {
    exited_from_ticket_ = false;
    exited_ = nullptr;
    return;
  }
  const Plan& plan = exited_->plan();
  // A loop trace whose entry guards failed for a later iteration learns like
  // a refused entry (the carried shapes changed); other exits are deopts.
  if (exit.index < plan.exits.size() && plan.exits[exit.index].kind == ExitKind::EntryGuard)
    engine_->on_guard_failure(anchor, *exited_, exit.index, frame, call_);
  else
    engine_->on_exit(anchor, *exited_, exit.index, pc, call_);
  exited_ = nullptr;
}

}  // namespace canary::jit
