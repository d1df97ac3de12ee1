// Trace recording: follows the interpreter from an anchor to the end of its
// region, remembering each instruction's operand shapes and branch directions.
#include "jit/trace_recorder.h"

#include <algorithm>
#include <cmath>

namespace canary::jit {

namespace {

// The value a register holds now, as a TraceValue.
TraceValue snapshot(vm::RegId reg, const vm::FrameView& frame) {
  TraceValue v;
  v.reg = reg;
  const Tensor& t = frame.registers[reg.index];
  v.defined = t.defined();
  if (v.defined) {
    v.dtype = t.dtype();
    v.shape = t.shape();
  }
  return v;
}

// The finite range of an f32 tensor, or nullopt (another dtype, or no
// finite element). One pass, on the one call that records.
std::optional<ValueSpan> finite_span(const Tensor& t) {
  if (!t.defined() || t.dtype() != DType::F32) return std::nullopt;
  const float* p = t.data<float>();
  std::optional<ValueSpan> span;
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    if (!std::isfinite(p[i])) continue;
    if (!span) span = ValueSpan{p[i], p[i]};
    span->min = std::min(span->min, p[i]);
    span->max = std::max(span->max, p[i]);
  }
  return span;
}

}  // namespace

std::string_view trace_end_name(TraceEnd end) {
  switch (end) {
    case TraceEnd::Return: return "return";
    case TraceEnd::LoopBack: return "loop back";
    case TraceEnd::Unsupported: return "unsupported instruction";
    case TraceEnd::Cut: return "cut";
    case TraceEnd::TooLong: return "too long";
    case TraceEnd::BackEdge: return "loop back edge";
  }
  return "?";
}

TraceRecorder::TraceRecorder(const vm::Program& program, vm::AnchorId anchor, vm::Pc cut_at, Done done,
                             bool record_spans)
    : program_(program), cut_at_(cut_at), record_spans_(record_spans), done_(std::move(done)) {
  const vm::Anchor& a = program.anchors().at(anchor.index);
  trace_.anchor = anchor;
  trace_.anchor_pc = a.pc;
  trace_.start_pc = a.pc + 1;
  if (a.kind == vm::AnchorKind::LoopHeader) loop_slot_ = program.at(a.pc).slot;
}

// Remembers the registers live at the region's start: the entry values.
void TraceRecorder::start(const vm::FrameView& frame) {
  started_ = true;
  for (vm::RegId r : program_.live_at(trace_.start_pc)) written_.emplace(r.index, snapshot(r, frame));
  // written_ doubles as "value before" for entry registers; entry_seen_ marks
  // which of them the region actually read.
  for (auto& [reg, value] : written_) entry_seen_.emplace(reg, false);
}

void TraceRecorder::start_at_exit(vm::Pc pc, const vm::FrameView& frame) {
  trace_.side = true;
  trace_.start_pc = pc;
  start(frame);
  skip_anchor_report_ = true;
}

bool TraceRecorder::on_executed(vm::Pc pc, vm::Pc next_pc, const vm::FrameView& frame) {
  if (finished_) return false;
  if (skip_anchor_report_) {
    // The interpreter reports the anchor instruction whose visit ran the
    // exiting trace; the side trace starts after it, at the exit's pc.
    skip_anchor_report_ = false;
    if (pc == trace_.anchor_pc) return true;
  }
  if (!started()) {
    if (pc != trace_.anchor_pc) {
      finish(TraceEnd::Unsupported, pc);
      return false;
    }
    start(frame);
    return true;
  }
  const vm::Instruction& in = program_.at(pc);
  if (!admit(in, pc)) return false;
  record(in, pc, next_pc, frame);
  return !finished_;
}

// Ends the region before instructions compiled code does not run.
bool TraceRecorder::admit(const vm::Instruction& in, vm::Pc pc) {
  if (pc == cut_at_) {
    finish(TraceEnd::Cut, pc);
    return false;
  }
  if (trace_.ops.size() >= kMaxTraceOps) {
    finish(TraceEnd::TooLong, pc);
    return false;
  }
  switch (in.op) {
    case vm::Opcode::Kernel:
    case vm::Opcode::Move:
    case vm::Opcode::Jump:
    case vm::Opcode::JumpIfFalse: return true;
    // The anchor's own loop's per-iteration scan steps (a nested loop's
    // set-up ends the region before its body).
    case vm::Opcode::ScanSlice:
      if (in.slot == loop_slot_) return true;
      break;
    case vm::Opcode::ScanAppend:
      // Its slot names a scan buffer, not a loop: inside a loop region it is
      // the anchor's loop's (a nested loop's set-up ended the region first).
      if (loop_slot_ != UINT32_MAX) return true;
      break;
    case vm::Opcode::LoopNext:
      if (in.slot != loop_slot_) break;
      // A side trace finishes its iteration; the interpreter takes the back
      // edge and the header's anchor enters the loop's own traces again.
      if (trace_.side) {
        finish(TraceEnd::BackEdge, pc);
        return false;
      }
      return true;
    case vm::Opcode::Return:
      finish(TraceEnd::Return, pc);
      return false;
    default: break;
  }
  finish(TraceEnd::Unsupported, pc);
  return false;
}

// The value a register held before the instruction being recorded ran. A
// register the region has not written yet holds an entry value: the first
// read adds it to Trace::entry (from the start snapshot, or from the frame
// for values the program's live ranges did not list at the start, such as
// constants; instructions never write their own inputs, so the frame still
// holds it).
TraceValue TraceRecorder::value_before(vm::RegId reg, const vm::FrameView& frame) {
  auto it = written_.find(reg.index);
  if (it == written_.end()) {
    TraceValue v = snapshot(reg, frame);
    trace_.entry.push_back(v);
    written_.emplace(reg.index, v);
    return v;
  }
  auto seen = entry_seen_.find(reg.index);
  if (seen != entry_seen_.end() && !seen->second) {
    seen->second = true;
    trace_.entry.push_back(it->second);
  }
  return it->second;
}

// Appends one executed instruction to the trace.
void TraceRecorder::record(const vm::Instruction& in, vm::Pc pc, vm::Pc next_pc, const vm::FrameView& frame) {
  TraceOp op;
  op.pc = pc;
  op.opcode = in.op;
  if (in.op == vm::Opcode::Jump) return;  // control only: the trace is straight-line
  for (vm::RegId r : program_.inputs_of(in)) op.inputs.push_back(r.valid() ? value_before(r, frame) : TraceValue{});
  for (vm::RegId r : program_.outputs_of(in)) {
    if (!r.valid()) {
      op.outputs.push_back(TraceValue{});
      continue;
    }
    TraceValue v = snapshot(r, frame);
    if (record_spans_ && in.op == vm::Opcode::Kernel) v.span = finite_span(frame.registers[r.index]);
    written_[r.index] = v;
    entry_seen_.erase(r.index);  // later reads see the region's own value
    op.outputs.push_back(std::move(v));
  }
  if (in.op == vm::Opcode::JumpIfFalse) op.condition = next_pc == pc + 1;
  trace_.ops.push_back(std::move(op));
  if (in.op == vm::Opcode::LoopNext) finish(TraceEnd::LoopBack, program_.at(trace_.anchor_pc).target);
}

void TraceRecorder::finish(TraceEnd end, vm::Pc end_pc) {
  if (finished_) return;
  finished_ = true;
  trace_.end = end;
  trace_.end_pc = end_pc;
  if (done_) done_(std::move(trace_));
  done_ = nullptr;
}

// The interpreter does not report Return itself: a run that ends normally
// while recording completed the region at the program's Return.
void TraceRecorder::on_run_end(bool ok) {
  if (finished_) return;
  if (ok && started_) {
    vm::Pc ret = 0;
    for (vm::Pc pc = 0; pc < program_.instruction_count(); ++pc)
      if (program_.at(pc).op == vm::Opcode::Return) ret = pc;
    finish(TraceEnd::Return, ret);
    return;
  }
  finished_ = true;
  if (done_) done_(std::nullopt);
  done_ = nullptr;
}

}  // namespace canary::jit
