// Contraction epilogues: matching a MatMul/Gemm/Conv and the unary ops after
// it that oneDNN can apply before the result is stored.
#include "jit/plan_contraction.h"

#include <algorithm>
#include <string>

namespace canary::jit {

namespace {

using kernels::EpilogueOp;
using kernels::EpilogueStep;

// The epilogue form of a fused op, or nullopt for ops oneDNN does not compute
// as the reference kernels do (kernels::EpilogueOp lists why).
std::optional<EpilogueStep> epilogue_step(const FusibleOp& f) {
  if (f.identity || f.operands != 1) return std::nullopt;
  switch (f.op) {
    case EwOp::Relu: return EpilogueStep{EpilogueOp::Relu};
    case EwOp::LeakyRelu:
      // oneDNN's slope-0 Relu is a max with 0, which loses NaN differently; call it Relu.
      return f.imm0 == 0.0f ? EpilogueStep{EpilogueOp::Relu} : EpilogueStep{EpilogueOp::LeakyRelu, f.imm0};
    case EwOp::Clip:
      // The reference sends everything to the upper bound when the bounds cross.
      if (!(f.imm0 <= f.imm1)) return std::nullopt;
      return EpilogueStep{EpilogueOp::Clip, f.imm0, f.imm1};
    case EwOp::Abs: return EpilogueStep{EpilogueOp::Abs};
    default: return std::nullopt;
  }
}

// True when the value `reg` gets at `def` is last read at `use`.
bool dies_at(const vm::Program& program, vm::RegId reg, vm::Pc def, vm::Pc use) {
  const auto& ranges = program.live_ranges();
  return std::any_of(ranges.begin(), ranges.end(), [&](const vm::LiveRange& r) {
    return r.reg == reg && r.begin == def && r.end == use;
  });
}

bool f32_values(const std::vector<TraceValue>& values) {
  return std::all_of(values.begin(), values.end(),
                     [](const TraceValue& v) { return !v.reg.valid() || (v.defined && v.dtype == DType::F32); });
}

}  // namespace

std::optional<ContractionMatch> match_contraction(const vm::Program& program, const Trace& trace, std::size_t i,
                                                  const ScalarConstants& constants) {
  const TraceOp& head = trace.ops[i];
  if (head.opcode != vm::Opcode::Kernel || head.outputs.size() != 1 || !head.outputs[0].reg.valid()) return std::nullopt;
  const std::optional<vm::ContractionInfo> info = vm::contraction_info(program.at(head.pc));
  if (!info || !f32_values(head.inputs) || !f32_values(head.outputs)) return std::nullopt;
  ContractionMatch m;
  m.step.info = *info;
  const TraceOp* previous = &head;
  for (std::size_t j = i + 1; j < trace.ops.size() && m.step.epilogue.size < kernels::Epilogue::kMaxSteps; ++j) {
    const TraceOp& op = trace.ops[j];
    const std::optional<FusibleOp> f = fusible_op(program, op, constants);
    const std::optional<EpilogueStep> step = f ? epilogue_step(*f) : std::nullopt;
    const vm::RegId result = previous->outputs[0].reg;
    if (!step || op.inputs.empty() || op.inputs[0].reg != result || !dies_at(program, result, previous->pc, op.pc))
      break;
    m.step.epilogue.append(*step);
    m.step.epilogue_pcs.push_back(op.pc);
    m.last = j;
    previous = &op;
  }
  if (m.step.epilogue.empty()) return std::nullopt;
  m.step.output = previous->outputs[0].reg;
  for (const TraceValue& v : head.inputs) m.step.output_aliases_input |= v.reg == m.step.output;
  return m;
}

namespace {

// The result's element count from the operands' shapes (batch broadcasting
// of MatMul ignored), or -1 for shapes the contraction will reject.
std::int64_t result_elements(const ContractionStep& step, const Tensor& a, const Tensor& b) {
  if (a.rank() < 1 || b.rank() < 1) return -1;
  switch (step.info.kind) {
    case vm::ContractionInfo::Kind::MatMul: {
      const std::int64_t k = a.dim(a.rank() - 1);
      return k > 0 ? a.numel() / k * (b.rank() >= 2 ? b.dim(b.rank() - 1) : 1) : -1;
    }
    case vm::ContractionInfo::Kind::Gemm:
      if (a.rank() != 2 || b.rank() != 2) return -1;
      return (step.info.gemm->trans_a ? a.dim(1) : a.dim(0)) * (step.info.gemm->trans_b ? b.dim(0) : b.dim(1));
    case vm::ContractionInfo::Kind::Conv:
      // [N, C, spatial...] in, [N, M, about the same spatial...] out.
      if (a.rank() < 3 || a.dim(1) <= 0) return -1;
      return a.numel() / a.dim(1) * b.dim(0);
  }
  return -1;
}

bool needs_operand_scan(const kernels::Epilogue& e) {
  for (std::size_t i = 0; i < e.size; ++i)
    if (e.steps[i].op == EpilogueOp::Relu || e.steps[i].op == EpilogueOp::Clip) return true;
  return false;
}

}  // namespace

bool prefer_epilogue(const ContractionStep& step, const Tensor& a, const Tensor& b) {
  const std::int64_t result = result_elements(step, a, b);
  if (result < kMinEpilogueElements) return false;
  return !needs_operand_scan(step.epilogue) || a.numel() + b.numel() <= result;
}

std::string describe_contraction(const ContractionStep& step) {
  std::string s;
  switch (step.info.kind) {
    case vm::ContractionInfo::Kind::MatMul: s = "matmul"; break;
    case vm::ContractionInfo::Kind::Gemm: s = "gemm"; break;
    case vm::ContractionInfo::Kind::Conv: s = "conv"; break;
  }
  for (std::size_t i = 0; i < step.epilogue.size; ++i) {
    const kernels::EpilogueStep& e = step.epilogue.steps[i];
    s += " + ";
    s += kernels::epilogue_op_name(e.op);
    if (e.op == kernels::EpilogueOp::LeakyRelu) s += "(" + std::to_string(e.alpha) + ")";
    if (e.op == kernels::EpilogueOp::Clip) s += "(" + std::to_string(e.alpha) + ", " + std::to_string(e.beta) + ")";
  }
  return s + " (oneDNN post-ops on large results)";
}

}  // namespace canary::jit
