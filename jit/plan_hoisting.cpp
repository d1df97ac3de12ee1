// Loop-invariant hoisting (see plan_hoisting.h). A register is invariant
// when no instruction of the loop body, taken or not in the trace, writes it
// (a Move that steals from it counts as a write) and the loop header does not
// produce it; a step is hoisted when everything it reads is invariant or the
// result of a hoisted step. Its results need not keep their registers: the
// driver saves them on the first iteration and puts the saved handles back
// at the step on later ones, so the allocator may reuse those registers for
// other values in the body.
#include "jit/plan_hoisting.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace canary::jit {

namespace {

using RegSet = std::unordered_set<std::uint32_t>;

// The registers a step reads and writes, and the instructions it covers.
struct StepRegisters {
  std::vector<vm::RegId> inputs, outputs;
  std::vector<vm::Pc> pcs;
};

void add_valid(std::vector<vm::RegId>& out, std::span<const vm::RegId> regs) {
  for (vm::RegId r : regs)
    if (r.valid()) out.push_back(r);
}

// Calls f with each register the instruction at pc writes: its outputs, and
// the sources a stealing Move swaps buffers with.
template <typename F>
void for_each_write(const vm::Program& program, vm::Pc pc, F&& f) {
  const vm::Instruction& in = program.at(pc);
  for (vm::RegId r : program.outputs_of(in))
    if (r.valid()) f(r.index);
  if (in.op != vm::Opcode::Move) return;
  const auto& mp = static_cast<const vm::MoveParams&>(*in.params);
  const std::span<const vm::RegId> srcs = program.inputs_of(in);
  for (std::size_t i = 0; i < srcs.size(); ++i)
    if (mp.steal[i] && srcs[i].valid()) f(srcs[i].index);
}

// Registers written anywhere in [first, last] of the program, and by the loop header.
RegSet written_in_body(const vm::Program& program, vm::Pc header, vm::Pc first, vm::Pc last) {
  RegSet written;
  const auto insert = [&](std::uint32_t r) { written.insert(r); };
  for_each_write(program, header, insert);
  for (vm::Pc pc = first; pc <= last && pc < program.instruction_count(); ++pc) for_each_write(program, pc, insert);
  return written;
}

// Hoisted outputs whose register no later step has written yet: (hoist, output) by register.
using AwaitingWriter = std::unordered_map<std::uint32_t, std::pair<std::uint32_t, std::uint32_t>>;

// Step `index` writes registers in awaiting_writer: record an unpark before
// it and stop waiting. No unpark when the step is hoisted itself (its
// restore sets the register) or also reads the register: a fused group may
// read the hoisted result at one instruction and write its register at a
// later one, so the register must hold the result when the step starts.
void note_writers(const vm::Program& program, Plan& plan, std::uint32_t index, const StepRegisters& regs,
                  bool hoisted, AwaitingWriter& awaiting_writer) {
  for (vm::Pc pc : regs.pcs)
    for_each_write(program, pc, [&](std::uint32_t r) {
      const auto it = awaiting_writer.find(r);
      if (it == awaiting_writer.end()) return;
      const bool reads =
          std::any_of(regs.inputs.begin(), regs.inputs.end(), [&](vm::RegId in) { return in.index == r; });
      if (!hoisted && !reads) plan.unparks.push_back({index, it->second.first, it->second.second});
      awaiting_writer.erase(it);
    });
}

StepRegisters step_registers(const vm::Program& program, const Plan& plan, const Step& step) {
  StepRegisters r;
  switch (step.kind) {
    case StepKind::Fused: {
      const FusedStep& f = plan.fused[step.fused];
      r.inputs = f.inputs;
      r.outputs = f.outputs;
      r.pcs = f.pcs;
      break;
    }
    case StepKind::Row: {
      const RowStep& row = plan.rows[step.fused];
      r.inputs = row.inputs;
      for (vm::RegId x : {row.scale, row.bias})
        if (x.valid()) r.inputs.push_back(x);
      r.outputs = {row.output};
      r.pcs = row.pcs;
      break;
    }
    case StepKind::Contraction: {
      const ContractionStep& c = plan.contractions[step.fused];
      add_valid(r.inputs, program.inputs_of(program.at(step.pc)));
      r.outputs = {c.output};
      r.pcs = {step.pc};
      r.pcs.insert(r.pcs.end(), c.epilogue_pcs.begin(), c.epilogue_pcs.end());
      break;
    }
    default: {
      const vm::Instruction& in = program.at(step.pc);
      add_valid(r.inputs, program.inputs_of(in));
      add_valid(r.outputs, program.outputs_of(in));
      r.pcs = {step.pc};
      break;
    }
  }
  return r;
}

// A sunk group reading a value kept before its register was overwritten
// (Step::holds): what the register holds now says nothing of that value.
bool reads_holds(const Plan& plan, const Step& step) {
  if (step.kind != StepKind::Fused) return false;
  const std::vector<std::int32_t>& held = plan.fused[step.fused].held_inputs;
  return std::any_of(held.begin(), held.end(), [](std::int32_t slot) { return slot >= 0; });
}

bool computes(StepKind kind) {
  return kind == StepKind::Kernel || kind == StepKind::Fused || kind == StepKind::Row ||
         kind == StepKind::Contraction;
}

}  // namespace

std::size_t hoist_loop_invariants(const vm::Program& program, const Trace& trace, Plan& plan) {
  if (!plan.loops || trace.ops.empty()) return 0;
  const RegSet written = written_in_body(program, trace.anchor_pc, trace.start_pc, trace.ops.back().pc);
  // Registers holding a hoisted result at this point of the body: from its
  // step until another step writes the register (the allocator reuses them).
  RegSet hoisted_results;
  AwaitingWriter awaiting_writer;
  std::size_t count = 0;
  for (std::uint32_t index = 0; index < plan.steps.size(); ++index) {
    Step& step = plan.steps[index];
    const StepRegisters regs = step_registers(program, plan, step);
    const bool invariant = computes(step.kind) && !regs.outputs.empty() && !reads_holds(plan, step) &&
                           std::all_of(regs.inputs.begin(), regs.inputs.end(), [&](vm::RegId r) {
                             return !written.count(r.index) || hoisted_results.count(r.index);
                           });
    note_writers(program, plan, index, regs, invariant, awaiting_writer);
    if (!invariant) {
      for (vm::Pc pc : regs.pcs) for_each_write(program, pc, [&](std::uint32_t r) { hoisted_results.erase(r); });
      continue;
    }
    step.hoisted = true;
    step.hoist = static_cast<std::uint32_t>(plan.hoisted_outputs.size());
    plan.hoisted_outputs.push_back(regs.outputs);
    ++count;
    for (std::uint32_t o = 0; o < regs.outputs.size(); ++o) {
      hoisted_results.insert(regs.outputs[o].index);
      awaiting_writer[regs.outputs[o].index] = {step.hoist, o};
    }
  }
  return count;
}

std::vector<bool> loop_invariant_ops(const vm::Program& program, const Trace& trace) {
  std::vector<bool> invariant(trace.ops.size(), false);
  if (!trace.loops() || trace.ops.empty()) return invariant;
  const RegSet written = written_in_body(program, trace.anchor_pc, trace.start_pc, trace.ops.back().pc);
  RegSet invariant_results;  // registers holding an invariant op's result at this point
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    const TraceOp& op = trace.ops[i];
    invariant[i] = op.opcode == vm::Opcode::Kernel && !op.outputs.empty() &&
                   std::all_of(op.inputs.begin(), op.inputs.end(), [&](const TraceValue& v) {
                     return !v.reg.valid() || !written.count(v.reg.index) || invariant_results.count(v.reg.index);
                   });
    for_each_write(program, op.pc, [&](std::uint32_t r) {
      if (invariant[i]) invariant_results.insert(r);
      else invariant_results.erase(r);
    });
  }
  return invariant;
}

}  // namespace canary::jit
