// Candidate generation: one candidate per axis the trace gives a reason to
// try, each differing from the primary in that axis only, so the decision
// table shows what each axis buys.
#include "jit/cost/candidates.h"

#include "vm/elementwise_info.h"

#include <algorithm>

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

bool is_matmul_or_conv(graph::OpKind op) {
  return op == graph::OpKind::MatMul || op == graph::OpKind::Gemm || op == graph::OpKind::Conv;
}

// Every entry dim above 1, keyed by register (what a fully symbolic plan guards by constraint).
ShapeKnowledge all_dims_symbolic(const Trace& trace, ShapeKnowledge knowledge) {
  for (const TraceValue& v : trace.entry) {
    if (!v.defined) continue;
    for (std::uint32_t axis = 0; axis < v.shape.size(); ++axis)
      if (v.shape[axis] > 1) knowledge.symbolic.insert(RegDim{v.reg.index, axis});
  }
  return knowledge;
}

bool same(const CandidateSpec& a, const CandidateSpec& b) {
  return a.interpreter == b.interpreter && a.plan.tier == b.plan.tier && a.plan.math == b.plan.math &&
         a.plan.bf16_matmul == b.plan.bf16_matmul && a.isa == b.isa &&
         a.knowledge.symbolic == b.knowledge.symbolic;
}

}  // namespace

TraceTraits trace_traits(const vm::Program& program, const Trace& trace, const ShapeKnowledge& knowledge) {
  TraceTraits t;
  for (const TraceOp& op : trace.ops) {
    if (op.opcode != vm::Opcode::Kernel) continue;
    const vm::NodeInfo* node = program.node_of(program.at(op.pc));
    if (!node) continue;
    t.transcendentals |= is_transcendental(node->op);
    t.matmul_or_conv |= is_matmul_or_conv(node->op);
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
  return name;
}

std::vector<CandidateSpec> candidate_specs(const CandidateSpec& primary, const TraceTraits& traits,
                                           const Trace& trace, const CostModelOptions& options) {
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
  if (options.try_isas && primary.isa == x86::Isa::Avx512 && traits.elementwise && fused) {
    CandidateSpec c = primary;
    c.isa = x86::Isa::Avx2;
    add(c);
  }
  if (options.try_symbolic && traits.exact_dims) {
    CandidateSpec c = primary;
    c.plan.tier = std::max(c.plan.tier, Tier::SymbolicFused);
    c.knowledge = all_dims_symbolic(trace, c.knowledge);
    add(c, true);
  }
  CandidateSpec interp;
  interp.interpreter = true;
  interp.name = "interpreter";
  out.push_back(std::move(interp));
  return out;
}

}  // namespace canary::jit::cost
