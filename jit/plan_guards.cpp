// Entry guards: rank, dtype and alignment of every entry value that is not a
// model constant; each dim either by value (exact) or, once learned
// symbolic, by its constraints: a range that excludes 0 and 1 (so
// broadcasting stays as compiled) and equality with the dims it was always
// seen equal to.
#include "jit/plan_guards.h"

#include <map>
#include <set>

namespace canary::jit {

namespace {

std::string entry_name(const vm::Program& program, vm::RegId reg, vm::Pc pc) {
  for (const vm::LiveRange& r : program.live_ranges())
    if (r.reg == reg && r.begin <= pc && pc <= r.end) return program.value_names().at(r.value);
  return "r" + std::to_string(reg.index);
}

Guard make(GuardKind kind, std::uint32_t tensor, std::uint32_t axis, std::int64_t value, std::int64_t value2 = 0) {
  Guard g;
  g.kind = kind;
  g.tensor = tensor;
  g.axis = axis;
  g.value = value;
  g.value2 = value2;
  return g;
}

// Adds the guards of one symbolic dim: equality with its symbol's first dim
// when it has one, otherwise a range and a capture into a new symbol slot.
void guard_symbolic_dim(const DimRef& dim, std::int64_t seen, const ShapeKnowledge& knowledge,
                        std::map<std::int64_t, std::uint32_t>& symbol_of_value, Plan& plan) {
  auto it = symbol_of_value.find(seen);
  if (it != symbol_of_value.end()) {
    const DimRef first = plan.symbols[it->second].dims.front();
    const RegDim a{plan.entry_regs[first.entry].index, first.axis}, b{plan.entry_regs[dim.entry].index, dim.axis};
    const bool known_unequal = knowledge.unequal.count({a, b}) || knowledge.unequal.count({b, a});
    if (!known_unequal) {
      Guard g = make(GuardKind::DimsEqual, dim.entry, dim.axis, 0);
      g.tensor2 = first.entry;
      g.axis2 = first.axis;
      plan.guards.guards.push_back(g);
      plan.symbols[it->second].dims.push_back(dim);
      return;
    }
  }
  const auto slot = static_cast<std::uint32_t>(plan.symbols.size());
  const auto facts = knowledge.symbolic.find(RegDim{plan.entry_regs[dim.entry].index, dim.axis});
  plan.symbols.push_back({{dim}, facts != knowledge.symbolic.end() ? facts->second : DimFacts{}});
  if (it == symbol_of_value.end()) symbol_of_value.emplace(seen, slot);
  plan.guards.guards.push_back(make(GuardKind::DimRange, dim.entry, dim.axis, 2, kMaxSymbolicDim));
  plan.guards.guards.push_back(make(GuardKind::CaptureDim, dim.entry, dim.axis, slot));
}

// The registers of the program's constants (initializers, Constant nodes):
// pinned and loaded once when a session is made, never written by any
// instruction (vm/register_allocation.cpp), so their rank, dtype, dims and
// alignment at every entry are the ones recorded and need no guard.
std::set<std::uint32_t> constant_registers(const vm::Program& program) {
  std::set<std::uint32_t> regs;
  for (const auto& [reg, value] : program.constants()) regs.insert(reg.index);
  return regs;
}

}  // namespace

void plan_entry_guards(const vm::Program& program, const Trace& trace, const ShapeKnowledge& knowledge,
                       Plan& plan) {
  std::map<std::int64_t, std::uint32_t> symbol_of_value;
  const bool symbolic = plan.tier != Tier::ExactFused;
  const std::set<std::uint32_t> constants = constant_registers(program);
  plan.entry = trace.entry;
  for (std::uint32_t i = 0; i < trace.entry.size(); ++i) {
    const TraceValue& v = trace.entry[i];
    plan.entry_regs.push_back(v.reg);
    plan.entry_names.push_back(entry_name(program, v.reg, trace.start_pc));
    if (constants.count(v.reg.index)) continue;  // the shape the trace recorded is the only one it can have
    if (!v.defined) {
      plan.guards.guards.push_back(make(GuardKind::Rank, i, 0, -1));
      continue;
    }
    plan.guards.guards.push_back(make(GuardKind::Rank, i, 0, static_cast<std::int64_t>(v.shape.size())));
    plan.guards.guards.push_back(make(GuardKind::DType, i, 0, static_cast<std::int64_t>(v.dtype)));
    plan.guards.guards.push_back(make(GuardKind::Aligned, i, 0, static_cast<std::int64_t>(dtype_size(v.dtype))));
    for (std::uint32_t axis = 0; axis < v.shape.size(); ++axis) {
      const DimRef dim{i, axis};
      const std::int64_t seen = v.shape[axis];
      if (symbolic && seen > 1 && knowledge.symbolic.count(RegDim{v.reg.index, axis}))
        guard_symbolic_dim(dim, seen, knowledge, symbol_of_value, plan);
      else
        plan.guards.guards.push_back(make(GuardKind::DimEquals, i, axis, seen));
    }
  }
  plan.guards.num_tensors = static_cast<std::uint32_t>(trace.entry.size());
  plan.guards.num_symbols = static_cast<std::uint32_t>(plan.symbols.size());
  for (std::uint32_t g = 0; g < plan.guards.guards.size(); ++g) {
    ExitRecord e;
    e.kind = ExitKind::EntryGuard;
    e.pc = trace.start_pc;
    e.guard = g;
    e.description = describe_guard(plan.guards.guards[g], plan.entry_names);
    plan.exits.push_back(std::move(e));
  }
}

}  // namespace canary::jit
