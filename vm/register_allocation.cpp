// Register allocation: live intervals over the linear bytecode (widened over
// loops), linear-scan assignment of virtual to physical registers so values
// whose intervals do not overlap share a register (and its buffer), and the
// choice of Moves that may steal their source's buffer.
//
// Invariants:
//  - an interval is [first occurrence, last occurrence], inclusive, so an
//    instruction's inputs and outputs never share a register;
//  - a value occurring both inside a loop's pc range and outside it is live
//    over the whole loop (values defined outside and read in the body, scanned
//    inputs, carried values), so the back jump never finds it overwritten;
//  - inputs, constants and outputs are pinned: live over the whole program.
#include <algorithm>
#include <functional>
#include <queue>

#include "vm/program_builder.h"

namespace canary::vm {
namespace {

struct Interval {
  Pc begin = kNoPc;
  Pc end = 0;
  bool used() const { return begin != kNoPc; }
};

// First and last occurrence of every virtual register.
std::vector<Interval> compute_intervals(const ProgramBuilder& b) {
  std::vector<Interval> iv(b.vregs.size());
  const auto& code = b.data.code;
  for (Pc pc = 0; pc < code.size(); ++pc) {
    const Instruction& in = code[pc];
    for (std::uint32_t i = 0; i < in.num_inputs + in.num_outputs; ++i) {
      RegId r = b.data.operands[in.operands + i];
      if (!r.valid()) continue;
      iv[r.index].begin = std::min(iv[r.index].begin, pc);
      iv[r.index].end = std::max(iv[r.index].end, pc);
    }
  }
  const Pc last = code.empty() ? 0 : static_cast<Pc>(code.size() - 1);
  for (std::size_t v = 0; v < iv.size(); ++v)
    if (b.vregs[v].pinned) iv[v] = Interval{0, last};
  return iv;
}

// Widens intervals that cross a loop boundary to cover the whole loop, until stable.
void extend_over_loops(std::vector<Interval>& iv, std::vector<LoopRange> loops) {
  std::sort(loops.begin(), loops.end(), [](const LoopRange& a, const LoopRange& b) { return a.end - a.begin < b.end - b.begin; });
  for (bool changed = true; changed;) {
    changed = false;
    for (const LoopRange& l : loops) {
      for (Interval& i : iv) {
        if (!i.used() || i.end < l.begin || i.begin > l.end) continue;
        const bool inside = i.begin >= l.begin && i.end <= l.end;
        const bool covers = i.begin <= l.begin && i.end >= l.end;
        if (inside || covers) continue;
        i.begin = std::min(i.begin, l.begin);
        i.end = std::max(i.end, l.end);
        changed = true;
      }
    }
  }
}

// Linear scan: each interval takes a free register whose previous interval ended strictly before.
std::vector<RegId> assign_registers(const std::vector<Interval>& iv, std::uint32_t& register_count) {
  std::vector<std::uint32_t> order;
  for (std::uint32_t v = 0; v < iv.size(); ++v)
    if (iv[v].used()) order.push_back(v);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return iv[a].begin < iv[b].begin; });
  using Active = std::pair<Pc, std::uint32_t>;  // end, register
  std::priority_queue<Active, std::vector<Active>, std::greater<>> active;
  std::vector<std::uint32_t> free_regs;
  std::vector<RegId> assigned(iv.size(), RegId::none());
  register_count = 0;
  for (std::uint32_t v : order) {
    while (!active.empty() && active.top().first < iv[v].begin) {
      free_regs.push_back(active.top().second);
      active.pop();
    }
    std::uint32_t r;
    if (free_regs.empty()) {
      r = register_count++;
    } else {
      r = free_regs.back();
      free_regs.pop_back();
    }
    assigned[v] = RegId{r};
    active.emplace(iv[v].end, r);
  }
  return assigned;
}

// Marks Move pairs whose source dies at the move (so the buffers are swapped,
// not shared) and Moves whose destinations overlap their sources.
void decide_moves(ProgramBuilder& b, const std::vector<Interval>& iv) {
  for (Pc pc = 0; pc < b.data.code.size(); ++pc) {
    Instruction& in = b.data.code[pc];
    if (in.op != Opcode::Move) continue;
    // The builder owns the params (non-const objects); instructions keep const pointers.
    auto* mp = const_cast<MoveParams*>(static_cast<const MoveParams*>(in.params));
    const RegId* srcs = &b.data.operands[in.operands];
    const RegId* dsts = srcs + in.num_inputs;
    for (std::uint32_t i = 0; i < in.num_inputs; ++i)
      for (std::uint32_t j = 0; j < in.num_outputs; ++j)
        if (srcs[i] == dsts[j]) mp->parallel = true;
    for (std::uint32_t i = 0; i < in.num_inputs; ++i) {
      const RegId s = srcs[i];
      const bool once = std::count(srcs, srcs + in.num_inputs, s) == 1;
      mp->steal[i] = !mp->parallel && once && !b.vregs[s.index].pinned && iv[s.index].end == pc;
    }
    b.data.max_move_pairs = std::max<std::uint32_t>(b.data.max_move_pairs, in.num_inputs);
  }
}

// Rewrites operands and signature registers from virtual to physical, and
// records names and live ranges for listings and side exits.
void rewrite_registers(ProgramBuilder& b, const std::vector<Interval>& iv, const std::vector<RegId>& phys) {
  ProgramData& d = b.data;
  d.operand_values.resize(d.operands.size(), UINT32_MAX);
  for (std::size_t i = 0; i < d.operands.size(); ++i) {
    if (!d.operands[i].valid()) continue;
    d.operand_values[i] = d.operands[i].index;
    d.operands[i] = phys[d.operands[i].index];
  }
  for (RegId& r : d.input_regs) r = phys[r.index];
  for (RegId& r : d.output_regs) r = phys[r.index];
  for (auto& c : d.constants) c.first = phys[c.first.index];
  d.value_names.clear();
  for (std::uint32_t v = 0; v < b.vregs.size(); ++v) {
    d.value_names.push_back(b.vregs[v].name);
    if (iv[v].used()) d.live_ranges.push_back(LiveRange{phys[v], iv[v].begin, iv[v].end, v});
  }
}

}  // namespace

// The register allocation stage of compile().
void allocate_registers(ProgramBuilder& b) {
  std::vector<Interval> iv = compute_intervals(b);
  extend_over_loops(iv, b.loops);
  std::vector<RegId> phys = assign_registers(iv, b.data.register_count);
  decide_moves(b, iv);
  rewrite_registers(b, iv, phys);
}

}  // namespace canary::vm
