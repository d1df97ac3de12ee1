// Plan::describe: the readable listing of a plan — its guards, steps and the
// expression each fused group computes.
#include <sstream>

#include "jit/plan.h"
#include "jit/plan_contraction.h"

namespace canary::jit {

namespace {

std::string step_line(const Plan& plan, const Step& s, const vm::Program& program) {
  std::ostringstream os;
  const vm::NodeInfo* node = program.node_of(program.at(s.pc));
  const std::string where = node ? " '" + node->name + "' (" + std::string(graph::op_name(node->op)) + ")" : "";
  switch (s.kind) {
    case StepKind::Fused: {
      const FusedStep& f = plan.fused[s.fused];
      os << "fused group " << s.fused << ": " << f.pcs.size() << " ops at pcs";
      for (vm::Pc pc : f.pcs) os << ' ' << pc;
      if (f.sunk) os << " (sunk to pc " << s.pc << ")";
      // A symbolic group decides per call; an exact one was decided here.
      // Per-row inputs expand on the calling thread: a call split across threads runs row by row.
      if (f.tile_short_rows && f.exact_layout)
        os << " (rows of " << (*f.exact_layout)[2] << " floats run as long tiles"
           << (f.per_element_spec ? " when the call stays on one thread" : "") << ")";
      if (f.per_element_spec) os << " (with a per-element kernel for tiles of its per-row inputs)";
      if (f.on_device) os << " (on " << plan.device << ", the x86 kernel if it fails)";
      if (!f.device_refusal.empty()) os << " (on the CPU: " << f.device_refusal << ")";
      os << ", " << f.inputs.size() << " inputs, " << f.outputs.size() << " outputs: " << f.spec.key();
      break;
    }
    case StepKind::Row: {
      const RowStep& r = plan.rows[s.fused];
      os << "row kernel " << s.fused << " (" << row_op_name(r.spec.op) << "): " << r.pcs.size() << " ops at pcs";
      for (vm::Pc pc : r.pcs) os << ' ' << pc;
      if (r.on_device) os << " (on " << plan.device << ", the x86 kernel if it fails)";
      if (!r.device_refusal.empty()) os << " (on the CPU: " << r.device_refusal << ")";
      os << ", " << r.inputs.size() << " inputs: " << r.spec.key();
      break;
    }
    case StepKind::Kernel:
      os << "kernel pc " << s.pc << where;
      if (s.on_device) os << " (on " << plan.device << ", the CPU kernel if it fails)";
      if (!s.device_refusal.empty()) os << " (on the CPU: " << s.device_refusal << ")";
      break;
    case StepKind::Contraction: {
      const ContractionStep& c = plan.contractions[s.fused];
      os << "contraction pc " << s.pc << where << " with its epilogue at pcs";
      for (vm::Pc pc : c.epilogue_pcs) os << ' ' << pc;
      if (s.on_device)
        os << ": the product on " << plan.device << " (the CPU kernel if it fails), then fused group "
           << c.separate.fused;
      else
        os << ": " << describe_contraction(c) << ", else fused group " << c.separate.fused;
      if (!s.device_refusal.empty()) os << " (product on the CPU: " << s.device_refusal << ")";
      break;
    }
    case StepKind::Move: os << "move pc " << s.pc; break;
    case StepKind::Branch: os << "branch pc " << s.pc << " expects " << (s.expect_true ? "true" : "false"); break;
    case StepKind::LoopNext: os << "loop next pc " << s.pc; break;
    case StepKind::ScanSlice: os << "scan slice pc " << s.pc; break;
    case StepKind::ScanAppend: os << "scan append pc " << s.pc; break;
  }
  if (s.hoisted) os << " [hoisted: first iteration only]";
  if (!s.holds.empty()) {
    os << " [keeps";
    for (const Hold& h : s.holds) os << " r" << h.reg.index;
    os << " for a sunk group]";
  }
  if (!s.replay.empty()) {
    os << " [an exit replays pcs";
    for (const ReplayOp& op : s.replay) os << ' ' << op.pc;
    os << "]";
  }
  return os.str();
}

// "steps 2..4 run as one call on <device>: r5 stays there, r7 comes back".
std::string chain_line(const Plan& plan, const DeviceChain& c) {
  std::ostringstream os;
  os << "steps " << c.first << ".." << c.first + c.count - 1 << " run as one call on " << plan.device;
  std::ostringstream stays, back;
  for (std::uint32_t k = 0; k < c.count; ++k) {
    const Step& s = plan.steps[c.first + k];
    const std::vector<vm::RegId> outputs =
        s.kind == StepKind::Fused ? plan.fused[s.fused].outputs : std::vector<vm::RegId>{plan.rows[s.fused].output};
    for (std::size_t o = 0; o < outputs.size(); ++o)
      (((c.host_outputs[k] >> o) & 1u) ? back : stays) << " r" << outputs[o].index;
  }
  os << ":" << (stays.str().empty() ? " nothing" : stays.str()) << " stays there;"
     << (back.str().empty() ? " nothing" : back.str()) << " comes back";
  return os.str();
}

}  // namespace

std::string Plan::describe(const vm::Program& program) const {
  std::ostringstream os;
  os << tier_name(tier) << (loops ? " loop" : "") << (side ? " side" : "") << " trace, pcs " << start_pc << ".."
     << end_pc << (side ? " (entered from exits that resume at pc " + std::to_string(start_pc) + ")" : "") << "\n";
  os << "  guards (" << guards.guards.size() << "):\n";
  for (const Guard& g : guards.guards) os << "    " << describe_guard(g, entry_names) << "\n";
  if (!symbols.empty()) {
    os << "  symbols (" << symbols.size() << ", values seen: not guarded):\n";
    for (std::size_t s = 0; s < symbols.size(); ++s) {
      const DimRef d = symbols[s].dims.front();
      os << "    s" << s << " = " << entry_names[d.entry] << ".dim" << d.axis << ": " << symbols[s].facts.describe()
         << "\n";
    }
  }
  os << "  steps (" << steps.size() << "):\n";
  for (const Step& s : steps) os << "    " << step_line(*this, s, program) << "\n";
  if (!device_chains.empty()) {
    os << "  device chains (" << device_chains.size() << ", the steps one by one if the device declines):\n";
    for (const DeviceChain& c : device_chains) os << "    " << chain_line(*this, c) << "\n";
  }
  return os.str();
}

}  // namespace canary::jit
