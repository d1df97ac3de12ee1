// Planning: turns a Trace into a Plan. Unary ops right after a MatMul, Gemm
// or Conv become its oneDNN epilogue; fusible elementwise ops with one
// output shape become fused groups, runs of adjacent ops or, with
// non-adjacent fusion, ops further apart whose earlier members sink to the
// last one (plan_groups.h: the trace is reordered so each group is
// contiguous, exits in between replay what has not run); every other op is
// a direct kernel call. Guards sit at the trace entry, branch checks and
// layout checks at step boundaries.
#include "jit/plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "jit/fused_tiling.h"
#include "jit/plan_contraction.h"
#include "jit/plan_fusion.h"
#include "jit/plan_groups.h"
#include "jit/plan_guards.h"
#include "jit/plan_hoisting.h"
#include "jit/plan_rows.h"
#include "jit/plan_versions.h"

namespace canary::jit {

namespace {

using RegSet = std::unordered_set<std::uint32_t>;

struct Group {
  std::size_t first = 0, last = 0;  // op indices, inclusive
};

// Where compiled code may exit before an op, as the pcs the interpreter
// resumes at there: group starts (a sunk group resumes at its last
// member's pc), the op after a contraction (its separate group's layout
// exit), branches and row kernels.
std::vector<std::vector<vm::Pc>> exits_before(const vm::Program& program, const Trace& trace,
                                              const std::vector<GroupRange>& groups,
                                              const std::vector<std::optional<ContractionMatch>>& contractions,
                                              bool rows_allowed) {
  std::vector<std::vector<vm::Pc>> exit_before(trace.ops.size());
  for (const GroupRange& g : groups) exit_before[g.first].push_back(trace.ops[g.sunk ? g.last : g.first].pc);
  for (std::size_t i = 0; i < trace.ops.size(); ++i)
    if (contractions[i]) exit_before[i + 1].push_back(trace.ops[i + 1].pc);
  for (std::size_t i = 0; i < trace.ops.size(); ++i)
    if (trace.ops[i].opcode == vm::Opcode::JumpIfFalse || (rows_allowed && is_row_candidate(program, trace, i)))
      exit_before[i].push_back(trace.ops[i].pc);
  return exit_before;
}

// The registers code resuming at pc reads: those holding a live value at pc,
// less the values the instruction there defines. (Program::live_at counts
// a value from its defining pc on, and the VM reuses registers, so a value
// defined at pc in another value's register would otherwise keep the
// earlier value alive through an exit that never reads it.)
void add_live(RegSet& set, const vm::Program& program, vm::Pc pc) {
  const vm::Instruction* in = pc < program.instruction_count() ? &program.at(pc) : nullptr;
  for (const vm::LiveRange& r : program.live_ranges()) {
    if (pc < r.begin || pc > r.end) continue;
    if (in && r.begin == pc) {
      const auto outs = program.outputs_of(*in);
      if (std::find(outs.begin(), outs.end(), r.reg) != outs.end()) continue;
    }
    set.insert(r.reg.index);
  }
}

// The contraction epilogues of a trace, by the contraction's op index. Not
// formed with value or range canaries on: the fused kernels check those,
// oneDNN's post-ops do not.
std::vector<std::optional<ContractionMatch>> find_contractions(const vm::Program& program, const Trace& trace,
                                                               const ScalarConstants& constants,
                                                               const PlanOptions& options) {
  std::vector<std::optional<ContractionMatch>> found(trace.ops.size());
  if (options.tier == Tier::Unfused || !options.contraction_epilogues || options.value_canaries ||
      options.range_canaries)
    return found;
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    found[i] = match_contraction(program, trace, i, constants);
    if (found[i]) i = found[i]->last;
  }
  return found;
}

// Backward pass: registers live after each op, counting every place compiled
// code may exit (the end, branches, group starts) as a use of what the
// interpreter needs there. A hold reads its register at the op that
// overwrites it; the members that read through it do not read the register.
// The hold slot each (member, register) pair reads through, keyed by
// (index into the reordered ops << 32) | register.
using HoldReads = std::unordered_map<std::uint64_t, std::uint32_t>;
std::uint64_t hold_read_key(std::size_t op, std::uint32_t reg) { return (std::uint64_t{op} << 32) | reg; }

HoldReads hold_reads(const std::vector<GroupHold>& holds) {
  HoldReads reads;
  for (std::uint32_t slot = 0; slot < holds.size(); ++slot)
    for (std::size_t m : holds[slot].readers) reads.emplace(hold_read_key(m, holds[slot].reg.index), slot);
  return reads;
}

std::vector<RegSet> live_after_ops(const vm::Program& program, const Trace& trace,
                                   const std::vector<std::vector<vm::Pc>>& exit_before,
                                   const std::vector<GroupHold>& holds = {}, const HoldReads& through = {}) {
  std::unordered_map<std::size_t, std::vector<std::uint32_t>> held_before;
  for (const GroupHold& h : holds) held_before[h.before].push_back(h.reg.index);
  std::vector<RegSet> after(trace.ops.size());
  RegSet live;
  add_live(live, program, trace.end_pc);
  if (trace.loops()) add_live(live, program, trace.anchor_pc);
  for (std::size_t i = trace.ops.size(); i-- > 0;) {
    const TraceOp& op = trace.ops[i];
    after[i] = live;
    for (const TraceValue& v : op.outputs)
      if (v.reg.valid()) live.erase(v.reg.index);
    for (const TraceValue& v : op.inputs)
      if (v.reg.valid() && !through.count(hold_read_key(i, v.reg.index))) live.insert(v.reg.index);
    if (auto h = held_before.find(i); h != held_before.end()) live.insert(h->second.begin(), h->second.end());
    for (vm::Pc pc : exit_before[i]) add_live(live, program, pc);
  }
  return after;
}

// v in float, rounded down (up) when it is not exact, and kept finite.
float float_below(double v) {
  const float max = std::numeric_limits<float>::max();
  const float f = static_cast<float>(std::clamp(v, -double(max), double(max)));
  return static_cast<double>(f) > v ? std::nextafter(f, -max) : f;
}
float float_above(double v) {
  const float max = std::numeric_limits<float>::max();
  const float f = static_cast<float>(std::clamp(v, -double(max), double(max)));
  return static_cast<double>(f) < v ? std::nextafter(f, max) : f;
}

// The interval a range canary holds a recorded value to: its finite span
// widened on each side by `margin` times the larger of the span's width and
// its magnitude (so a narrow span far from 0 is not held to a needle).
ValueRange widened_range(const ValueSpan& span, double margin) {
  const double lo = span.min, hi = span.max;
  const double scale = std::max({hi - lo, std::abs(lo), std::abs(hi), double(std::numeric_limits<float>::min())});
  return {float_below(lo - margin * scale), float_above(hi + margin * scale)};
}

// The span the trace recorded for the last write of `reg` in ops [first, last].
std::optional<ValueSpan> recorded_span(const Trace& trace, std::size_t first, std::size_t last, vm::RegId reg) {
  for (std::size_t i = last + 1; i-- > first;)
    for (const TraceValue& v : trace.ops[i].outputs)
      if (v.reg == reg) return v.span;
  return std::nullopt;
}

// Builds the expression DAG of one group; false when its layout does not
// collapse into three dims (the ops then run as kernel steps).
// `seen`: the symbols of a symbolic plan with what was seen of them, which
// decide the kernel versions the group holds (plan_versions.h).
bool build_fused(const vm::Program& program, const Trace& trace, const Group& g, const ScalarConstants& constants,
                 const RegSet& live_after_group, const PlanOptions& options, const std::vector<SeenSymbol>& seen,
                 FusedStep& out, const InputVersion* held = nullptr) {
  GroupDag dag = build_group_dag(program, trace, g.first, g.last, constants, held);
  if (held) out.held_inputs.assign(dag.input_versions.begin(), dag.input_versions.end());
  FusedElementwiseSpec& spec = out.spec;
  spec = std::move(dag.spec);
  out.inputs = std::move(dag.inputs);
  out.pcs = std::move(dag.pcs);
  out.constant_rank = dag.constant_rank;
  // Store the last definition of each register that is still needed afterwards.
  RegSet stored;
  for (std::size_t d = dag.defined.size(); d-- > 0;) {
    const auto [reg, node] = dag.defined[d];
    if (stored.count(reg) || !live_after_group.count(reg)) {
      stored.insert(reg);
      continue;
    }
    stored.insert(reg);
    spec.outputs.insert(spec.outputs.begin(), node);
    out.outputs.insert(out.outputs.begin(), vm::RegId{reg});
  }
  if (spec.outputs.empty() || spec.outputs.size() > kMaxFusedInputs) return false;
  std::vector<std::span<const std::int64_t>> spans(dag.input_shapes.begin(), dag.input_shapes.end());
  CollapsedLayout layout;
  if (!collapse_layout(trace.ops[g.first].outputs[0].shape, spans, layout)) return false;
  for (std::size_t i = 0; i < spans.size(); ++i) spec.inner_broadcast.push_back(layout.broadcasts_inner(i));
  for (int d = 0; d < 3; ++d) out.full_masks[d] = layout.full[d];
  for (const Shape& shape : dag.input_shapes) out.input_ranks.push_back(static_cast<std::uint8_t>(shape.size()));
  spec.math = options.math;
  spec.check_non_finite = options.value_canaries;
  // A loop trace's recording saw one iteration (so did a side trace's in a
  // loop body); values carried across iterations (running sums, states)
  // leave its span by design.
  if (options.range_canaries && !trace.loops() && trace.end != TraceEnd::BackEdge)
    for (vm::RegId r : out.outputs) {
      const std::optional<ValueSpan> span = recorded_span(trace, g.first, g.last, r);
      spec.output_ranges.push_back(span ? std::optional(widened_range(*span, options.range_margin)) : std::nullopt);
    }
  // Exact dims are baked into the kernel unless the recorded layout tiles
  // (the tiled call passes other dims); symbolic kernels may tile any call.
  // `tiling` ignores the row count: whether these rows and inputs tile given
  // rows enough. The recorded call itself tiles with two tiles or more.
  const std::optional<RowTiling> tiling =
      options.short_row_tiles ? plan_row_tiling(layout, spans.size(), max_row_with_per_row_inputs(spec), 0)
                              : std::nullopt;
  const bool recorded_tiles = tiling && tiling->tiles >= 2;
  bool per_row_tiles = tiling && tiling->per_row != 0;
  out.tile_short_rows = options.short_row_tiles;
  if (options.tier == Tier::ExactFused) {
    out.exact_layout = std::array{layout.dims[0], layout.dims[1], layout.dims[2]};
    out.tile_short_rows = recorded_tiles;
    if (!out.tile_short_rows) spec.exact_dims = out.exact_layout;
  }
  // A symbolic group's rows may also tile at the other values its symbols
  // were seen with (a group recorded on long rows that were short before).
  if (options.short_row_tiles && options.tier != Tier::ExactFused && !per_row_tiles)
    for (const CollapsedLayout& l : seen_layouts(trace.ops[g.first].outputs[0].shape, spans, layout, seen)) {
      const std::optional<RowTiling> t = plan_row_tiling(l, spans.size(), max_row_with_per_row_inputs(spec), 0);
      per_row_tiles = per_row_tiles || (t && t->per_row != 0);
    }
  // Per-row inputs need the per-element kernel: an exact group when its
  // recorded call tiles, a symbolic one also when that call had too few rows
  // or too long ones (later calls may tile).
  if (per_row_tiles && (recorded_tiles || options.tier != Tier::ExactFused)) {
    out.per_element_spec = spec;
    out.per_element_spec->inner_broadcast.assign(spec.inner_broadcast.size(), false);
    out.per_row_max_row = max_row_with_per_row_inputs(spec);
  }
  for (vm::RegId r : out.outputs) {
    bool alias = false;
    for (vm::RegId in : out.inputs) alias = alias || in == r;
    out.output_aliases_input.push_back(alias);
  }
  return true;
}

// True when no pc appears twice in the trace (a pc then names one op, which
// is how exits find the ops to replay).
bool pcs_unique(const Trace& trace) {
  std::unordered_set<vm::Pc> seen;
  for (const TraceOp& op : trace.ops)
    if (!seen.insert(op.pc).second) return false;
  return true;
}

// Runs of consecutive recorded ops in a group's members.
std::vector<GroupMembers> adjacent_runs(const GroupMembers& members) {
  std::vector<GroupMembers> runs;
  for (std::size_t k = 0; k < members.size(); ++k) {
    if (k == 0 || members[k] != members[k - 1] + 1) runs.emplace_back();
    runs.back().push_back(members[k]);
  }
  return runs;
}

// The order the steps run in: contraction epilogues matched and fused groups
// formed on the recorded trace, which is then reordered so that every group
// is contiguous; and the liveness the planner decides stores from, on that
// order. A sunk group that would not build (more outputs than a kernel
// takes) falls back to its adjacent runs, so fusing further never fuses less.
struct PlanOrder {
  ReorderedTrace reordered;
  std::vector<GroupHold> holds;
  HoldReads through;  // which members read which register through which hold
  std::vector<std::optional<ContractionMatch>> contractions;  // by reordered op index
  std::vector<RegSet> live_after;

  // For a sunk group's build: the hold slot (index into holds) a member
  // reads a register through, -1 for the register itself.
  InputVersion held_by() const {
    return [this](std::size_t op, std::uint32_t reg) -> std::int64_t {
      const auto it = through.find(hold_read_key(op, reg));
      return it == through.end() ? -1 : static_cast<std::int64_t>(it->second);
    };
  }
};

PlanOrder plan_order(const vm::Program& program, const Trace& recorded, const ScalarConstants& constants,
                     const PlanOptions& options, bool rows_allowed) {
  const std::vector<std::optional<ContractionMatch>> found = find_contractions(program, recorded, constants, options);
  std::vector<bool> absorbed(recorded.ops.size(), false);
  for (std::size_t i = 0; i < recorded.ops.size(); ++i)
    if (found[i]) std::fill(absorbed.begin() + i + 1, absorbed.begin() + found[i]->last + 1, true);
  const std::vector<bool> in_place = options.hoist_invariants ? loop_invariant_ops(program, recorded)
                                                               : std::vector<bool>(recorded.ops.size(), false);
  std::vector<GroupMembers> members = form_groups(program, recorded, constants, options.tier, absorbed,
                                                  options.nonadjacent_fusion && pcs_unique(recorded), in_place);
  for (;;) {
    PlanOrder order;
    order.reordered = reorder_for_groups(recorded, members);
    const Trace& trace = order.reordered.trace;
    // An epilogue chain holds no group member, so it stays contiguous.
    order.contractions.assign(trace.ops.size(), std::nullopt);
    for (std::size_t i = 0; i < recorded.ops.size(); ++i) {
      if (!found[i]) continue;
      ContractionMatch match = *found[i];
      const std::size_t at = order.reordered.position[i];
      match.last = at + (match.last - i);
      order.contractions[at] = std::move(match);
    }
    order.holds = find_holds(order.reordered);
    order.through = hold_reads(order.holds);
    order.live_after = live_after_ops(
        program, trace, exits_before(program, trace, order.reordered.groups, order.contractions, rows_allowed),
        order.holds, order.through);
    std::vector<GroupMembers> next;
    bool split = false;
    const InputVersion held = order.held_by();
    for (const GroupRange& range : order.reordered.groups) {
      FusedStep dry;
      if (range.sunk && !build_fused(program, trace, Group{range.first, range.last}, constants,
                                     order.live_after[range.last], options, {}, dry, &held)) {
        for (GroupMembers& run : adjacent_runs(members[range.group])) next.push_back(std::move(run));
        split = true;
      } else {
        next.push_back(members[range.group]);
      }
    }
    if (!split) return order;
    std::sort(next.begin(), next.end());
    members = std::move(next);
  }
}

// The pcs of the instructions a step covers.
std::vector<vm::Pc> step_pcs(const Plan& plan, const Step& s) {
  switch (s.kind) {
    case StepKind::Fused: return plan.fused[s.fused].pcs;
    case StepKind::Row: return plan.rows[s.fused].pcs;
    case StepKind::Contraction: {
      std::vector<vm::Pc> pcs{s.pc};
      const auto& epilogue = plan.contractions[s.fused].epilogue_pcs;
      pcs.insert(pcs.end(), epilogue.begin(), epilogue.end());
      return pcs;
    }
    default: return {s.pc};
  }
}

// With sunk groups: each hold goes to the step that covers the op that
// overwrites the register, and the group's fused step reads the kept value;
// each step gets its replays, the sunk ops recorded before the pc its exits
// resume at (plan_groups.h), reading through the holds already taken.
void attach_holds_and_replays(const PlanOrder& order, Plan& plan) {
  const ReorderedTrace& reordered = order.reordered;
  if (reordered.sunk_ops == 0) return;
  std::unordered_map<vm::Pc, std::size_t> index_of;
  for (std::size_t j = 0; j < reordered.trace.ops.size(); ++j) index_of.emplace(reordered.trace.ops[j].pc, j);
  const std::size_t none = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> step_of(reordered.trace.ops.size(), none);
  std::vector<std::size_t> first_of(plan.steps.size(), none);
  for (std::size_t si = 0; si < plan.steps.size(); ++si)
    for (vm::Pc pc : step_pcs(plan, plan.steps[si])) {
      const std::size_t j = index_of.at(pc);
      step_of[j] = si;
      first_of[si] = std::min(first_of[si], j);
    }
  for (std::uint32_t slot = 0; slot < order.holds.size(); ++slot) {
    const GroupHold& h = order.holds[slot];
    Step& holder = plan.steps[step_of[h.before]];
    bool reads = false;
    for (vm::Pc pc : step_pcs(plan, holder))
      for (const TraceValue& v : reordered.trace.ops[index_of.at(pc)].inputs) reads = reads || v.reg == h.reg;
    holder.holds.push_back({h.reg, slot, !reads});
  }
  plan.hold_slots = static_cast<std::uint32_t>(order.holds.size());
  for (std::size_t si = 0; si < plan.steps.size(); ++si) {
    Step& s = plan.steps[si];
    for (std::size_t j : pending_replays(reordered, first_of[si], index_of.at(s.pc))) {
      ReplayOp op;
      op.pc = reordered.trace.ops[j].pc;
      // Through the holds already taken when the step exits.
      for (const TraceValue& v : reordered.trace.ops[j].inputs) {
        const auto it = v.reg.valid() ? order.through.find(hold_read_key(j, v.reg.index)) : order.through.end();
        const bool taken = it != order.through.end() && step_of[order.holds[it->second].before] <= si;
        const bool listed = std::any_of(op.held.begin(), op.held.end(), [&](const Hold& h) { return h.reg == v.reg; });
        if (taken && !listed) op.held.push_back({v.reg, it->second});
      }
      s.replay.push_back(std::move(op));
    }
  }
}

std::vector<std::uint32_t> sorted(const RegSet& set) {
  std::vector<std::uint32_t> regs(set.begin(), set.end());
  std::sort(regs.begin(), regs.end());
  return regs;
}

Step kernel_step(const TraceOp& op) {
  Step s;
  s.pc = op.pc;
  switch (op.opcode) {
    case vm::Opcode::Move: s.kind = StepKind::Move; break;
    case vm::Opcode::JumpIfFalse: s.kind = StepKind::Branch; s.expect_true = op.condition; break;
    case vm::Opcode::LoopNext: s.kind = StepKind::LoopNext; break;
    case vm::Opcode::ScanSlice: s.kind = StepKind::ScanSlice; break;
    case vm::Opcode::ScanAppend: s.kind = StepKind::ScanAppend; break;
    default: s.kind = StepKind::Kernel; break;
  }
  return s;
}

std::uint32_t add_exit(Plan& plan, ExitKind kind, vm::Pc pc, std::string description) {
  ExitRecord e;
  e.kind = kind;
  e.pc = pc;
  e.description = std::move(description);
  plan.exits.push_back(std::move(e));
  return static_cast<std::uint32_t>(plan.exits.size() - 1);
}

// Adds a fused group to the plan's groups (with its layout exit) without a
// step of its own; returns the step that runs it.
Step add_group(Plan& plan, FusedStep group, vm::Pc pc) {
  Step s;
  s.kind = StepKind::Fused;
  s.pc = pc;
  s.fused = static_cast<std::uint32_t>(plan.fused.size());
  s.exit = add_exit(plan, ExitKind::Layout, pc, "layout of fused group at pc " + std::to_string(pc));
  plan.fused.push_back(std::move(group));
  return s;
}

// Appends a contraction step with its epilogue and the separate group of the same ops.
void add_contraction_step(Plan& plan, ContractionStep contraction, FusedStep separate, vm::Pc pc) {
  contraction.separate = add_group(plan, std::move(separate), contraction.epilogue_pcs.front());
  Step s;
  s.kind = StepKind::Contraction;
  s.pc = pc;
  s.fused = static_cast<std::uint32_t>(plan.contractions.size());
  s.exit = contraction.separate.exit;
  plan.fused_ops += contraction.epilogue_pcs.size();
  plan.contractions.push_back(std::move(contraction));
  plan.steps.push_back(s);
}

// Appends a row kernel step starting at pc, covering `ops` instructions.
void add_row_step(Plan& plan, RowStep row, vm::Pc pc, std::size_t ops) {
  Step s;
  s.kind = StepKind::Row;
  s.pc = pc;
  s.fused = static_cast<std::uint32_t>(plan.rows.size());
  s.exit = add_exit(plan, ExitKind::Layout, pc, "layout of row kernel at pc " + std::to_string(pc));
  plan.fused_ops += ops;
  plan.rows.push_back(std::move(row));
  plan.steps.push_back(s);
}

}  // namespace

std::string_view tier_name(Tier tier) {
  switch (tier) {
    case Tier::ExactFused: return "exact fused";
    case Tier::SymbolicFused: return "symbolic fused";
    case Tier::Unfused: return "unfused";
  }
  return "?";
}

Plan plan_trace(const vm::Program& program, const Trace& recorded, const ShapeKnowledge& knowledge,
                const PlanOptions& options) {
  Plan plan;
  plan.tier = options.tier;
  plan.math = options.math;
  plan.bf16_matmul = options.bf16_matmul;
  plan.wide_accumulation = options.wide_accumulation;
  plan.accumulation = options.accumulation;
  plan.threads = options.threads;
  plan.loops = recorded.loops();
  plan.side = recorded.side;
  plan.anchor_pc = recorded.anchor_pc;
  plan.start_pc = recorded.start_pc;
  plan.end_pc = recorded.end_pc;
  if (plan.loops) {
    const vm::Instruction& header = program.at(recorded.anchor_pc);
    plan.loop_slot = header.slot;
    plan.loop_condition = program.inputs_of(header)[0];
    plan.loop_iteration = program.outputs_of(header)[0];
  }
  plan_entry_guards(program, recorded, knowledge, plan);
  const std::vector<SeenSymbol> seen = seen_symbols(plan);

  const ScalarConstants constants = scalar_constants(program);
  const bool rows_allowed = options.tier != Tier::Unfused;
  const PlanOrder order = plan_order(program, recorded, constants, options, rows_allowed);
  const Trace& trace = order.reordered.trace;
  const std::vector<GroupRange>& groups = order.reordered.groups;
  std::vector<std::optional<ContractionMatch>> contractions = order.contractions;
  const std::vector<RegSet>& live_after = order.live_after;
  const InputVersion held = order.held_by();
  plan.sunk_ops = order.reordered.sunk_ops;

  std::size_t next_group = 0;
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    const TraceOp& op = trace.ops[i];
    if (contractions[i]) {
      FusedStep separate;
      const Group g{i + 1, contractions[i]->last};
      if (build_fused(program, trace, g, constants, live_after[g.last], options, seen, separate)) {
        ContractionStep& c = contractions[i]->step;
        c.min_elements = options.epilogue_min_elements > 0 ? options.epilogue_min_elements
                                                           : default_epilogue_min_elements();
        add_contraction_step(plan, std::move(c), std::move(separate), op.pc);
        i = g.last;
        continue;
      }
      // Not reached for a unary chain on one input (it always collapses);
      // the absorbed ops would run as kernel steps.
    }
    if (next_group < groups.size() && groups[next_group].first == i) {
      const GroupRange range = groups[next_group++];
      const Group g{range.first, range.last};
      // A group feeding a row op right after it becomes that row kernel's
      // prologue (not a sunk one: the row step exits at its first pc).
      if (!range.sunk && g.last + 1 < trace.ops.size() && is_row_candidate(program, trace, g.last + 1)) {
        RowStep rs;
        bool absorbed = false;
        if (build_row(program, trace, g.last + 1, std::pair(g.first, g.last), constants, live_after[g.last],
                      live_after[g.last + 1], options, rs, absorbed) &&
            absorbed) {
          add_row_step(plan, std::move(rs), op.pc, g.last - g.first + 2);
          plan.steps.back().live_after = sorted(live_after[g.last + 1]);
          i = g.last + 1;
          continue;
        }
      }
      FusedStep fs;
      if (build_fused(program, trace, g, constants, live_after[g.last], options, seen, fs,
                      range.sunk ? &held : nullptr)) {
        plan.fused_ops += g.last - g.first + 1;
        // A sunk group runs at its last member's place and exits there.
        fs.sunk = range.sunk;
        plan.steps.push_back(add_group(plan, std::move(fs), range.sunk ? trace.ops[g.last].pc : op.pc));
        plan.steps.back().live_after = sorted(live_after[g.last]);
        i = g.last;
        continue;
      }
    }
    if (rows_allowed && is_row_candidate(program, trace, i)) {
      RowStep rs;
      bool absorbed = false;
      if (build_row(program, trace, i, std::nullopt, constants, {}, live_after[i], options, rs, absorbed)) {
        add_row_step(plan, std::move(rs), op.pc, 1);
        plan.steps.back().live_after = sorted(live_after[i]);
        continue;
      }
    }
    Step s = kernel_step(op);
    if (s.kind == StepKind::Branch)
      s.exit = add_exit(plan, ExitKind::Branch, op.pc,
                        "branch at pc " + std::to_string(op.pc) + (op.condition ? " taken" : " not taken"));
    plan.steps.push_back(s);
  }
  attach_holds_and_replays(order, plan);
  if (options.hoist_invariants) hoist_loop_invariants(program, trace, plan);
  return plan;
}

}  // namespace canary::jit
