// Row kernel planning: recognising row ops and building their specs.
#include "jit/plan_rows.h"

#include "vm/elementwise_info.h"

namespace canary::jit {

namespace {

using RowInfo = vm::RowInfo;

std::int64_t normalise_axis(std::int64_t axis, std::size_t rank) {
  return axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis;
}

bool is_f32(const TraceValue& v) { return v.defined && v.dtype == DType::F32; }

// A LayerNorm scale or bias: a dense f32 vector as long as the last axis.
bool dense_vector(const TraceValue& v, std::int64_t length) {
  return is_f32(v) && v.shape.size() == 1 && v.shape[0] == length;
}

}  // namespace

bool is_row_candidate(const vm::Program& program, const Trace& trace, std::size_t i) {
  const TraceOp& op = trace.ops[i];
  if (op.opcode != vm::Opcode::Kernel) return false;
  const std::optional<RowInfo> info = vm::row_info(program.at(op.pc));
  if (!info || op.inputs.empty() || !is_f32(op.inputs[0]) || op.outputs.empty() || !is_f32(op.outputs[0]))
    return false;
  const std::size_t rank = op.inputs[0].shape.size();
  if (rank == 0) return false;
  const std::int64_t last = static_cast<std::int64_t>(rank) - 1;
  switch (info->kind) {
    case RowInfo::Kind::Reduce:
      if (info->axes.size() != 1 || normalise_axis(info->axes[0], rank) != last) return false;
      // ReduceMax of an empty row (-Inf) stays with the interpreter.
      return info->reduce != kernels::ReduceOp::Max || op.inputs[0].shape.back() > 0;
    // The interpreter's oneDNN softmax hands rows with NaN or +Inf to the
    // reference kernel, whose whole-row NaN the row kernels reproduce.
    case RowInfo::Kind::Softmax: return normalise_axis(info->axis, rank) == last;
    case RowInfo::Kind::LayerNorm: {
      if (normalise_axis(info->axis, rank) != last) return false;
      for (std::size_t o = 1; o < op.outputs.size(); ++o)
        if (op.outputs[o].reg.valid()) return false;  // mean / inv_std wanted
      const std::int64_t d = op.inputs[0].shape.back();
      if (op.inputs.size() < 2 || !dense_vector(op.inputs[1], d)) return false;
      return op.inputs.size() < 3 || !op.inputs[2].reg.valid() || dense_vector(op.inputs[2], d);
    }
  }
  return false;
}

bool build_row(const vm::Program& program, const Trace& trace, std::size_t row,
               std::optional<std::pair<std::size_t, std::size_t>> prologue, const ScalarConstants& constants,
               const std::unordered_set<std::uint32_t>& live_after_group,
               const std::unordered_set<std::uint32_t>& live_after_row, const PlanOptions& options, RowStep& out,
               bool& absorbed) {
  const TraceOp& op = trace.ops[row];
  const RowInfo info = *vm::row_info(program.at(op.pc));
  const vm::RegId in = op.inputs[0].reg;
  // Absorb the group when the row op's input is the only value it leaves behind.
  absorbed = false;
  if (prologue && !live_after_row.count(in.index)) {
    GroupDag dag = build_group_dag(program, trace, prologue->first, prologue->second, constants);
    bool only_input = !dag.defined.empty() && dag.defined.back().first == in.index;
    for (const auto& [reg, node] : dag.defined)
      if (reg != in.index && live_after_group.count(reg)) only_input = false;
    if (only_input) {
      out.spec.prologue = std::move(dag.spec);
      out.spec.prologue.outputs = {dag.defined.back().second};
      out.inputs = std::move(dag.inputs);
      out.pcs = std::move(dag.pcs);
      out.constant_rank = dag.constant_rank;
      for (const Shape& s : dag.input_shapes) out.input_ranks.push_back(static_cast<std::uint8_t>(s.size()));
      absorbed = true;
      std::vector<std::span<const std::int64_t>> spans(dag.input_shapes.begin(), dag.input_shapes.end());
      CollapsedLayout layout;
      if (!collapse_layout(op.inputs[0].shape, spans, layout, true)) return false;
      for (std::size_t i = 0; i < spans.size(); ++i) out.spec.prologue.inner_broadcast.push_back(layout.broadcasts_inner(i));
      for (int d = 0; d < 3; ++d) out.full_masks[d] = layout.full[d];
    }
  }
  if (!absorbed) {
    GroupDag dag = identity_dag(op.inputs[0]);
    out.spec.prologue = std::move(dag.spec);
    out.spec.prologue.outputs = {0};
    out.inputs = std::move(dag.inputs);
    out.input_ranks.push_back(static_cast<std::uint8_t>(op.inputs[0].shape.size()));
    const std::span<const std::int64_t> shape = op.inputs[0].shape;
    CollapsedLayout layout;
    if (!collapse_layout(shape, std::span(&shape, 1), layout, true)) return false;
    out.spec.prologue.inner_broadcast = {layout.broadcasts_inner(0)};
    for (int d = 0; d < 3; ++d) out.full_masks[d] = layout.full[d];
  }
  out.pcs.push_back(op.pc);
  out.output = op.outputs[0].reg;
  out.spec.prologue.math = options.math;
  out.spec.prologue.check_non_finite = options.value_canaries;
  switch (info.kind) {
    case RowInfo::Kind::Reduce:
      out.spec.op = info.reduce == kernels::ReduceOp::Sum ? RowOp::Sum
                    : info.reduce == kernels::ReduceOp::Mean ? RowOp::Mean
                                                             : RowOp::Max;
      out.keepdims = info.keepdims;
      break;
    case RowInfo::Kind::Softmax: out.spec.op = RowOp::Softmax; break;
    case RowInfo::Kind::LayerNorm:
      out.spec.op = RowOp::LayerNorm;
      out.spec.epsilon = static_cast<float>(info.epsilon);
      out.scale = op.inputs[1].reg;
      out.spec.has_scale = true;
      if (op.inputs.size() > 2 && op.inputs[2].reg.valid()) {
        out.bias = op.inputs[2].reg;
        out.spec.has_bias = true;
      }
      break;
  }
  // Max has no sums: its kernel is the same in both modes, so it keeps one key.
  out.spec.accumulation = out.spec.op == RowOp::Max ? Accumulation::Plain : options.accumulation;
  for (vm::RegId r : out.inputs) out.output_aliases_input = out.output_aliases_input || r == out.output;
  return check_row_spec(out.spec).empty();
}

}  // namespace canary::jit
