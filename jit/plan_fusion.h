// Fusion: which trace ops become fused elementwise groups, and the expression
// DAG each group computes.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <unordered_map>

#include "jit/plan.h"

namespace canary::jit {

// Constant registers of one element (f32) the planner folds into kernels.
using ScalarConstants = std::unordered_map<std::uint32_t, float>;
ScalarConstants scalar_constants(const vm::Program& program);

// One elementwise op as the fuser sees it: the EwOp, its immediates and which
// of the instruction's inputs feed operands a and b (the rest must be folded
// scalar constants, e.g. Clip's bounds).
struct FusibleOp {
  EwOp op = EwOp::Add;
  float imm0 = 0.0f, imm1 = 0.0f;
  int operands = 1;      // 1 or 2 tensor operands
  bool identity = false; // Identity: the output is operand a
};

// The fused form of a trace op, or nullopt when it cannot join a group
// (not elementwise, not f32, a non-constant Clip bound, ...).
std::optional<FusibleOp> fusible_op(const vm::Program& program, const TraceOp& op, const ScalarConstants& constants);

// The expression DAG of trace ops [first, last] (all fusible): nodes for
// inputs (one per register, or per register and version), folded scalar
// constants and each op.
struct GroupDag {
  FusedElementwiseSpec spec;                                  // nodes and num_inputs; no outputs yet
  std::vector<vm::RegId> inputs;
  std::vector<std::int64_t> input_versions;                   // per input (all 0 without an InputVersion)
  std::vector<Shape> input_shapes;                            // as recorded
  std::size_t constant_rank = 0;                              // rank of folded constants
  std::vector<std::pair<std::uint32_t, std::uint16_t>> defined;  // (register, node) per op, in order
  std::vector<vm::Pc> pcs;
};

// Which value of a register a group's op reads, when members read the same
// register at different times (an op in between overwrote it): inputs are
// one per (register, version). Called with the op's index into Trace::ops.
using InputVersion = std::function<std::int64_t(std::size_t op, std::uint32_t reg)>;
GroupDag build_group_dag(const vm::Program& program, const Trace& trace, std::size_t first, std::size_t last,
                         const ScalarConstants& constants, const InputVersion* version = nullptr);
// The same for the trace ops at `ops` (ascending indices), in that order.
GroupDag build_group_dag(const vm::Program& program, const Trace& trace, std::span<const std::size_t> ops,
                         const ScalarConstants& constants, const InputVersion* version = nullptr);
// A DAG of one input: what a row kernel without a prologue reads.
GroupDag identity_dag(const TraceValue& value);

// Most tensor inputs one fused group reads (a bit per input in masks).
inline constexpr std::size_t kMaxFusedInputs = 16;

// Collapses an output shape and input shapes (NumPy broadcasting) into at
// most 3 dims. Returns false when more are needed, the shapes do not
// broadcast, or there are more than kMaxFusedInputs inputs. Allocation-free
// and writing no more than it must (the driver runs it on every call of a
// fused group): on success, every field but the strides of inputs past the
// last, which no kernel of the group reads; on failure, fields left half
// written.
struct CollapsedLayout {
  std::int64_t dims[3] = {1, 1, 1};
  std::uint32_t inner_broadcast = 0;            // bit i: input i holds one value per row
  std::uint32_t full[3] = {0, 0, 0};            // per collapsed dim, bit i: input i spans it
  std::int64_t strides[2 * kMaxFusedInputs] = {};  // stride0, stride1 per input
  bool broadcasts_inner(std::size_t input) const { return (inner_broadcast >> input) & 1u; }
};
// keep_last: the output's last dim is d2 on its own (row kernels reduce or
// normalise along it), the others collapse into d0 and d1.
bool collapse_layout(std::span<const std::int64_t> out, std::span<const std::span<const std::int64_t>> inputs,
                     CollapsedLayout& layout, bool keep_last = false);

// The inner_broadcast flags of a spec as a CollapsedLayout mask.
std::uint32_t inner_broadcast_mask(const std::vector<bool>& flags);

}  // namespace canary::jit
