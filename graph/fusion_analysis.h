// Fusion analysis: the dependences between the operations of a sequence that
// runs in order (a trace, a topologically sorted graph) and the question a
// fusion pass asks of them: may a set of operations run as one unit without
// changing what any other operation computes? Kept on a Boost.Graph DAG, so
// a fusion pass states dependences and asks; it never walks them itself.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

namespace canary::graph {

class SequenceDependences {
 public:
  // Operations 0 .. operations-1, in the order they run.
  explicit SequenceDependences(std::size_t operations);
  ~SequenceDependences();
  SequenceDependences(SequenceDependences&&) noexcept;
  SequenceDependences& operator=(SequenceDependences&&) noexcept;

  std::size_t size() const;

  // Operation `after` must run after operation `before` (it reads what
  // `before` wrote, overwrites what `before` read or wrote, ...). Requires
  // before < after < size(): dependences follow the sequence, so the graph
  // stays acyclic by construction.
  void add(std::size_t before, std::size_t after);

  // True when the members (ascending, at least one) can run as one unit at
  // the position of the last member, every earlier member postponed there:
  // no operation between the first and the last member that is not itself a
  // member depends on a member, directly or through other operations.
  // Contracting the members into one node then creates no cycle, and every
  // other operation keeps its place in the sequence.
  bool can_sink_to_last(std::span<const std::size_t> members) const;

 private:
  struct Dag;
  std::unique_ptr<Dag> dag_;
};

}  // namespace canary::graph
