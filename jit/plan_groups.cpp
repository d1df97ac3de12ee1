// Fused groups of a trace and the order their steps run in (see plan_groups.h).
#include "jit/plan_groups.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

namespace canary::jit {

namespace {

constexpr std::size_t kNoGroup = std::numeric_limits<std::size_t>::max();

// Whether a group of these ops still builds: few enough inputs, and a layout
// that collapses into three dims (otherwise its ops would all run unfused).
bool group_builds(const vm::Program& program, const Trace& trace, const GroupMembers& ops,
                  const ScalarConstants& constants, const InputVersion& version) {
  const GroupDag dag = build_group_dag(program, trace, ops, constants, &version);
  if (dag.inputs.size() > kMaxFusedInputs) return false;
  std::vector<std::span<const std::int64_t>> shapes(dag.input_shapes.begin(), dag.input_shapes.end());
  CollapsedLayout layout;
  return collapse_layout(trace.ops[ops.front()].outputs[0].shape, shapes, layout);
}

// Calls f with each register op writes (a move may steal its sources' buffers).
template <typename F>
void for_each_write(const TraceOp& op, F&& f) {
  for (const TraceValue& v : op.outputs)
    if (v.reg.valid()) f(v.reg.index);
  if (op.opcode == vm::Opcode::Move)
    for (const TraceValue& v : op.inputs)
      if (v.reg.valid()) f(v.reg.index);
}

// Calls f(member, register) for each register a member reads that no earlier
// member wrote: the group's inputs from outside, per reading member.
template <typename F>
void for_each_outside_read(const Trace& trace, const GroupMembers& ops, F&& f) {
  std::unordered_map<std::uint32_t, bool> defined;
  for (std::size_t m : ops) {
    for (const TraceValue& v : trace.ops[m].inputs)
      if (v.reg.valid() && !defined.count(v.reg.index)) f(m, v.reg.index);
    for (const TraceValue& v : trace.ops[m].outputs)
      if (v.reg.valid()) defined[v.reg.index] = true;
  }
}

// Members recorded before a non-member that runs ahead of them.
std::size_t moved_members(const GroupMembers& ops) {
  std::size_t moved = 0;
  for (std::size_t k = 0; k < ops.size(); ++k)
    if (ops.back() - ops[k] != ops.size() - 1 - k) ++moved;
  return moved;
}

}  // namespace

bool is_group_barrier(const TraceOp& op) { return op.opcode != vm::Opcode::Kernel; }

graph::SequenceDependences trace_dependences(const Trace& trace) {
  graph::SequenceDependences deps(trace.ops.size());
  std::unordered_map<std::uint32_t, std::size_t> last_writer;
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    const TraceOp& op = trace.ops[i];
    for (const TraceValue& v : op.inputs) {
      if (!v.reg.valid()) continue;
      if (auto w = last_writer.find(v.reg.index); w != last_writer.end() && w->second != i) deps.add(w->second, i);
    }
    auto write = [&](vm::RegId reg) {
      if (!reg.valid()) return;
      if (auto w = last_writer.find(reg.index); w != last_writer.end() && w->second != i) deps.add(w->second, i);
      last_writer[reg.index] = i;
    };
    for (const TraceValue& v : op.outputs) write(v.reg);
    // A move may steal its sources' buffers: it writes them too.
    if (op.opcode == vm::Opcode::Move)
      for (const TraceValue& v : op.inputs) write(v.reg);
  }
  return deps;
}

std::vector<GroupMembers> form_groups(const vm::Program& program, const Trace& trace, const ScalarConstants& constants,
                                      Tier tier, const std::vector<bool>& absorbed, bool nonadjacent,
                                      const std::vector<bool>& in_place) {
  std::vector<GroupMembers> groups;
  if (tier == Tier::Unfused) return groups;
  const graph::SequenceDependences deps = nonadjacent ? trace_dependences(trace) : graph::SequenceDependences(0);
  // The value an op reads from a register: the index of the op that last
  // wrote it before (-1: the entry value), so a register overwritten between
  // two members counts as two inputs.
  std::vector<std::unordered_map<std::uint32_t, std::int64_t>> writer_before(nonadjacent ? trace.ops.size() : 0);
  if (nonadjacent) {
    std::unordered_map<std::uint32_t, std::int64_t> last;
    for (std::size_t i = 0; i < trace.ops.size(); ++i) {
      for (const TraceValue& v : trace.ops[i].inputs)
        if (v.reg.valid()) writer_before[i][v.reg.index] = last.count(v.reg.index) ? last[v.reg.index] : -1;
      for_each_write(trace.ops[i], [&](std::uint32_t r) { last[r] = static_cast<std::int64_t>(i); });
    }
  }
  const InputVersion version = [&](std::size_t op, std::uint32_t reg) { return writer_before[op].at(reg); };
  std::vector<std::size_t> open;  // groups formed since the last barrier that may still take ops
  std::vector<bool> sunk;         // per group: it took an op across others
  std::size_t run = kNoGroup;     // the group the previous op is in
  auto shape_of = [&](std::size_t g) -> const Shape& { return trace.ops[groups[g].front()].outputs[0].shape; };
  // Whether group g can never take an op from i on: a member must stay in
  // place, the span is used up, or an op in between needs a member (every
  // later window still holds that op).
  auto closed_for = [&](std::size_t g, std::size_t i) {
    const bool stays = std::any_of(groups[g].begin(), groups[g].end(), [&](std::size_t m) { return in_place[m]; });
    if (stays || i - groups[g].front() > kMaxSinkSpan) return true;
    GroupMembers joined = groups[g];
    joined.push_back(i);
    return !deps.can_sink_to_last(joined);
  };
  auto builds_with = [&](std::size_t g, std::size_t i) {
    GroupMembers joined = groups[g];
    joined.push_back(i);
    return group_builds(program, trace, joined, constants, version);
  };
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    const TraceOp& op = trace.ops[i];
    if (is_group_barrier(op)) {
      open.clear();
      run = kNoGroup;
      continue;
    }
    if (absorbed[i] || !fusible_op(program, op, constants)) {
      run = kNoGroup;
      continue;
    }
    const Shape& shape = op.outputs[0].shape;
    // The next op extends a run; a group that took ops across others only
    // under the same checks as a join (span, inputs, invariants).
    if (run != kNoGroup && shape_of(run) == shape &&
        (!sunk[run] || (!in_place[i] && !closed_for(run, i) && builds_with(run, i)))) {
      groups[run].push_back(i);
      continue;
    }
    run = kNoGroup;
    for (std::size_t k = open.size(); nonadjacent && !in_place[i] && k-- > 0;) {
      const std::size_t g = open[k];
      if (shape_of(g) != shape) continue;
      if (closed_for(g, i)) {
        open.erase(open.begin() + static_cast<std::ptrdiff_t>(k));
        continue;
      }
      if (!builds_with(g, i)) continue;  // this op's inputs do not fit; a later op's may
      groups[g].push_back(i);
      sunk[g] = true;
      run = g;
      break;
    }
    if (run == kNoGroup) {
      run = groups.size();
      open.push_back(run);
      groups.push_back({i});
      sunk.push_back(false);
    }
  }
  return groups;
}

ReorderedTrace reorder_for_groups(const Trace& trace, const std::vector<GroupMembers>& groups) {
  const std::size_t n = trace.ops.size();
  std::vector<std::size_t> group_of(n, kNoGroup);
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (std::size_t i : groups[g]) group_of[i] = g;
  ReorderedTrace out;
  out.trace = trace;
  out.trace.ops.clear();
  out.trace.ops.reserve(n);
  out.recorded.reserve(n);
  out.position.assign(n, 0);
  auto emit = [&](std::size_t i) {
    out.position[i] = out.trace.ops.size();
    out.recorded.push_back(i);
    out.trace.ops.push_back(trace.ops[i]);
  };
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t g = group_of[i];
    if (g == kNoGroup) {
      emit(i);
      continue;
    }
    const GroupMembers& members = groups[g];
    if (i != members.back()) continue;  // runs at the last member's place
    GroupRange range;
    range.group = g;
    range.first = out.trace.ops.size();
    for (std::size_t m : members) emit(m);
    range.last = out.trace.ops.size() - 1;
    const std::size_t moved = moved_members(members);
    range.sunk = moved > 0;
    out.sunk_ops += moved;
    out.groups.push_back(range);
  }
  return out;
}

std::vector<GroupHold> find_holds(const ReorderedTrace& reordered) {
  const Trace& trace = reordered.trace;
  // Per (first overwriting op, register): the members that read the kept value.
  std::map<std::pair<std::size_t, std::uint32_t>, std::vector<std::size_t>> readers;
  for (const GroupRange& range : reordered.groups) {
    if (!range.sunk) continue;
    GroupMembers members;  // as indices into the reordered ops
    for (std::size_t j = range.first; j <= range.last; ++j) members.push_back(j);
    const std::size_t slot = reordered.recorded[range.last];
    // The op, among those recorded between the reading member and the
    // group's place that run before the group, that overwrites the register
    // first (in run order).
    for_each_outside_read(trace, members, [&](std::size_t m, std::uint32_t reg) {
      std::size_t first = kNoGroup;
      for (std::size_t r = reordered.recorded[m] + 1; r < slot; ++r) {
        const std::size_t k = reordered.position[r];
        if (k >= range.first || k >= first) continue;
        bool writes = false;
        for_each_write(trace.ops[k], [&](std::uint32_t w) { writes = writes || w == reg; });
        if (writes) first = k;
      }
      if (first == kNoGroup) return;
      std::vector<std::size_t>& r = readers[{first, reg}];
      if (r.empty() || r.back() != m) r.push_back(m);
    });
  }
  std::vector<GroupHold> holds;
  for (auto& [key, members] : readers) holds.push_back({key.first, vm::RegId{key.second}, std::move(members)});
  return holds;
}

std::vector<std::size_t> pending_replays(const ReorderedTrace& reordered, std::size_t first, std::size_t resume) {
  std::vector<std::size_t> pending;
  if (reordered.sunk_ops == 0) return pending;
  // A group spans at most kMaxSinkSpan recorded ops and runs after this
  // step, so what is pending was recorded at most that far before the op.
  const std::size_t before = reordered.recorded[resume];
  for (std::size_t r = before > kMaxSinkSpan ? before - kMaxSinkSpan : 0; r < before; ++r)
    if (reordered.position[r] >= first) pending.push_back(reordered.position[r]);
  return pending;
}

}  // namespace canary::jit
