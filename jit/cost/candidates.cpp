// Candidate generation: one candidate per axis the trace gives a reason to
// try, each differing from the primary in that axis only, so the decision
// table shows what each axis buys.
#include "jit/cost/candidates.h"

#include "jit/plan_rows.h"
#include "vm/elementwise_info.h"

#include <algorithm>
#include <optional>

namespace canary::jit::cost {

namespace {

bool is_transcendental(graph::OpKind op) {
  using graph::OpKind;
  switch (op) {
    case OpKind::Exp: case OpKind::Log: case OpKind::Tanh: case OpKind::Sigmoid: case OpKind::Erf:
    case OpKind::Gelu: case OpKind::Softplus: case OpKind::Pow:
      return true;
    default: return false;
  }
}

// The products a device may take (FusedDevice::run_matmul).
bool is_product(graph::OpKind op) { return op == graph::OpKind::MatMul || op == graph::OpKind::Gemm; }

bool is_matmul_or_conv(graph::OpKind op) { return is_product(op) || op == graph::OpKind::Conv; }

// Whether trace op i would run as a row kernel with a sum (every row op but ReduceMax).
bool is_summing_row_op(const vm::Program& program, const Trace& trace, std::size_t i) {
  if (!is_row_candidate(program, trace, i)) return false;
  const std::optional<vm::RowInfo> info = vm::row_info(program.at(trace.ops[i].pc));
  return info && !(info->kind == vm::RowInfo::Kind::Reduce && info->reduce == kernels::ReduceOp::Max);
}

// Every entry dim above 1, keyed by register (what a fully symbolic plan guards by constraint).
ShapeKnowledge all_dims_symbolic(const Trace& trace, ShapeKnowledge knowledge) {
  for (const TraceValue& v : trace.entry) {
    if (!v.defined) continue;
    for (std::uint32_t axis = 0; axis < v.shape.size(); ++axis)
      if (v.shape[axis] > 1) {
        // A dim already learned keeps its facts; a new one has seen its recorded value.
        const auto [it, added] = knowledge.symbolic.try_emplace(RegDim{v.reg.index, axis});
        if (added) it->second.note(v.shape[axis]);
      }
  }
  return knowledge;
}

bool same(const CandidateSpec& a, const CandidateSpec& b) {
  return a.interpreter == b.interpreter && a.plan.tier == b.plan.tier && a.plan.math == b.plan.math &&
         a.plan.bf16_matmul == b.plan.bf16_matmul &&
         a.plan.wide_accumulation == b.plan.wide_accumulation && a.plan.accumulation == b.plan.accumulation &&
         a.plan.threads == b.plan.threads && a.plan.fused_on_device == b.plan.fused_on_device && a.isa == b.isa &&
         a.knowledge.symbolic == b.knowledge.symbolic;
}

bool is_heavy(graph::OpKind op) {
  return op == graph::OpKind::MatMul || op == graph::OpKind::Gemm || op == graph::OpKind::Conv ||
         op == graph::OpKind::LSTM || op == graph::OpKind::GRU;
}

// Elements of a recorded value (0 when undefined).
std::int64_t elements(const TraceValue& v) {
  if (!v.defined) return 0;
  std::int64_t n = 1;
  for (std::int64_t d : v.shape) n *= d;
  return n;
}

}  // namespace

TraceTraits trace_traits(const vm::Program& program, const Trace& trace, const ShapeKnowledge& knowledge) {
  TraceTraits t;
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    const TraceOp& op = trace.ops[i];
    if (op.opcode != vm::Opcode::Kernel) continue;
    t.row_ops |= is_summing_row_op(program, trace, i);
    t.rows |= is_row_candidate(program, trace, i);
    const vm::NodeInfo* node = program.node_of(program.at(op.pc));
    if (!node) continue;
    t.transcendentals |= is_transcendental(node->op);
    t.matmul_or_conv |= is_matmul_or_conv(node->op);
    t.products |= is_product(node->op);
    t.heavy |= is_heavy(node->op);
    t.parallel_work |= t.heavy;
    for (const TraceValue& v : op.outputs) t.parallel_work |= elements(v) >= kParallelElements;
    t.elementwise |= vm::elementwise_info(program.at(op.pc)).has_value();
  }
  for (const TraceValue& v : trace.entry)
    for (std::uint32_t axis = 0; v.defined && axis < v.shape.size(); ++axis)
      if (v.shape[axis] > 1 && !knowledge.symbolic.count(RegDim{v.reg.index, axis})) t.exact_dims = true;
  return t;
}

std::string candidate_name(const PlanOptions& plan, x86::Isa isa, bool all_symbolic) {
  std::string name = plan.tier == Tier::Unfused ? "unfused" : "fused";
  name += plan.math == MathMode::Fast ? " fast" : " exact";
  name += " " + std::string(x86::isa_name(isa));
  name += plan.bf16_matmul ? " bf16" : " fp32";
  if (all_symbolic) name += " all dims symbolic";
  else if (plan.tier == Tier::SymbolicFused) name += " symbolic";
  if (plan.accumulation == Accumulation::Compensated) name += " compensated";
  if (plan.wide_accumulation) name += " f64 sums";
  if (plan.threads > 1) name += " " + std::to_string(plan.threads) + " threads";
  if (plan.fused_on_device) name += kOnGpuSuffix;
  return name;
}

std::vector<CandidateSpec> candidate_specs(const CandidateSpec& primary, const TraceTraits& traits,
                                           const Trace& trace, const CostModelOptions& options, int host_cores,
                                           bool device_usable) {
  std::vector<CandidateSpec> out{primary};
  auto add = [&](CandidateSpec c, bool all_symbolic = false) {
    c.name = candidate_name(c.plan, c.isa, all_symbolic);
    const bool duplicate = std::any_of(out.begin(), out.end(), [&](const CandidateSpec& o) { return same(o, c); });
    if (!duplicate) out.push_back(std::move(c));
  };
  const bool fused = primary.plan.tier != Tier::Unfused;
  if (options.try_fast_math && traits.transcendentals && fused) {
    CandidateSpec c = primary;
    c.plan.math = MathMode::Fast;
    add(c);
  }
  if (options.try_bf16 && traits.matmul_or_conv) {
    CandidateSpec c = primary;
    c.plan.bf16_matmul = true;
    add(c);
  }
  if (options.try_unfused && traits.elementwise && fused) {
    CandidateSpec c = primary;
    c.plan.tier = Tier::Unfused;
    add(c);
  }
  // The next narrower vector tier: AVX2 on an AVX-512 host, scalar on an AVX2 one.
  if (options.try_isas && primary.isa != x86::Isa::Scalar && traits.elementwise && fused) {
    CandidateSpec c = primary;
    c.isa = primary.isa == x86::Isa::Avx512 ? x86::Isa::Avx2 : x86::Isa::Scalar;
    add(c);
  }
  if (options.try_symbolic && traits.exact_dims) {
    CandidateSpec c = primary;
    c.plan.tier = std::max(c.plan.tier, Tier::SymbolicFused);
    c.knowledge = all_dims_symbolic(trace, c.knowledge);
    add(c, true);
  }
  if (options.try_compensated && traits.row_ops && fused) {
    CandidateSpec c = primary;
    c.plan.accumulation = Accumulation::Compensated;
    add(c);
  }
  if (options.try_wide_accumulation && traits.heavy) {
    CandidateSpec c = primary;
    c.plan.wide_accumulation = true;
    add(c);
  }
  const int threads = std::min(host_cores, options.max_candidate_threads);
  if (options.try_threads && traits.parallel_work && threads > 1) {
    CandidateSpec c = primary;
    c.plan.threads = threads;
    add(c);
  }
  // The other placement: onto the GPU (JitOptions::device "auto"), or back
  // to the CPU ("gpu"), for traces with fused groups or row kernels to
  // place, or products (which an unfused plan places too).
  if (options.try_device && device_usable && (((traits.elementwise || traits.rows) && fused) || traits.products)) {
    CandidateSpec c = primary;
    c.plan.fused_on_device = !primary.plan.fused_on_device;
    add(c);
  }
  CandidateSpec interp;
  interp.interpreter = true;
  interp.name = "interpreter";
  out.push_back(std::move(interp));
  return out;
}

}  // namespace canary::jit::cost
