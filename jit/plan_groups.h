// Fused groups of a trace: which fusible elementwise ops run as one kernel,
// and the order the steps run in so that every group is contiguous.
//
// A group is a run of adjacent ops of one output shape or, with non-adjacent
// fusion, ops of one shape further apart: the earlier members sink to the
// last one's place when no op in between needs any of them, directly or
// through others (graph/fusion_analysis.h, on the ops' dependences through
// registers: reads after writes and writes after writes; a register a member
// reads that an op in between overwrites is kept for it, see find_holds).
// Members only ever move later, so an exit at a step between them resumes
// the interpreter at that step's pc after replaying the members that have
// not run yet (Step::replay); no op that already ran is run twice.
#pragma once

#include <cstddef>
#include <vector>

#include "graph/fusion_analysis.h"
#include "jit/plan.h"
#include "jit/plan_fusion.h"

namespace canary::jit {

// A group's ops, as ascending indices into Trace::ops.
using GroupMembers = std::vector<std::size_t>;

// Most recorded ops a group that takes ops across others may span, first
// member to last: bounds what one exit replays and what planning searches.
inline constexpr std::size_t kMaxSinkSpan = 64;

// The dependences between a trace's ops through the registers they read and
// write: a read after the write it reads, a write after the previous write
// of its register (a move may steal its sources' buffers, so it writes them
// too). A write after a read is left out: the reader, if it sinks past the
// write, reads a handle kept before it (find_holds). form_groups never
// reaches across moves, branches and loop steps.
graph::SequenceDependences trace_dependences(const Trace& trace);

// True for ops no group reaches across (anything but a kernel call).
bool is_group_barrier(const TraceOp& op);

// The fused groups of a trace (ops in `absorbed` excluded; none for the
// unfused tier). Without `nonadjacent`, runs of adjacent fusible ops of one
// output shape. With it, an op that does not extend such a run joins the
// latest earlier group of its shape since the last barrier whose members can
// sink to it, when the joined group spans at most kMaxSinkSpan recorded ops,
// still reads at most kMaxFusedInputs tensors and its layout still
// collapses into three dims (a group that joined so takes the ops right
// after it under the same checks). Ops marked in
// `in_place` (loop invariants, which hoisting runs once per trace run
// instead) and groups holding one take part in adjacent runs only.
std::vector<GroupMembers> form_groups(const vm::Program& program, const Trace& trace, const ScalarConstants& constants,
                                      Tier tier, const std::vector<bool>& absorbed, bool nonadjacent,
                                      const std::vector<bool>& in_place);

// A group as a range of the reordered trace.
struct GroupRange {
  std::size_t first = 0, last = 0;  // indices into the reordered Trace::ops, inclusive
  bool sunk = false;                // its members were not adjacent in the recorded order
  std::size_t group = 0;            // index into the groups reorder_for_groups was given
};

// The trace with every group's ops moved to its last member's place (the
// order the steps run in), and the groups as ranges of it.
struct ReorderedTrace {
  Trace trace;
  std::vector<GroupRange> groups;      // in order
  std::vector<std::size_t> recorded;   // index in trace.ops -> recorded op index
  std::vector<std::size_t> position;   // recorded op index -> index in trace.ops
  std::size_t sunk_ops = 0;            // ops that run later than recorded
};
ReorderedTrace reorder_for_groups(const Trace& trace, const std::vector<GroupMembers>& groups);

// A register sunk groups read from outside that an op running before them
// (but recorded after the members that read it) overwrites: the driver
// keeps its handle at the start of the step that covers that op
// (Step::holds; nothing in the step before the op writes the register, and
// a step that reads it keeps a shared handle), and the groups and the
// replays after it read the kept value. One hold per op and register, for
// every group that needs it. Dependences through such overwrites are left
// out of trace_dependences for this reason.
struct GroupHold {
  std::size_t before = 0;  // index into the reordered ops: the first, in run order, to overwrite it
  vm::RegId reg;
  std::vector<std::size_t> readers;  // the members that read the kept value (reordered indices)
};
std::vector<GroupHold> find_holds(const ReorderedTrace& reordered);

// The ops an exit replays from a step that starts at index `first` of the
// reordered ops and resumes the interpreter at the pc of op `resume` (also
// an index of the reordered ops): the ops from `first` on that were recorded
// before that op, as indices of the reordered ops in recorded order (empty
// without sunk groups).
std::vector<std::size_t> pending_replays(const ReorderedTrace& reordered, std::size_t first, std::size_t resume);

}  // namespace canary::jit
