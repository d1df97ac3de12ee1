// Contraction epilogues: matching a MatMul/Gemm/Conv and the unary ops after
// it that oneDNN can apply before the result is stored.
#include "jit/plan_contraction.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <string>

#include <unistd.h>

#include "jit/plan_rows.h"

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
      if (f.imm0 == 0.0f) return EpilogueStep{EpilogueOp::Relu};
      // oneDNN computes v > 0 ? v : alpha * v; the reference v < 0 ? alpha * v : v.
      // They agree on zeros of either sign only for a finite positive slope.
      if (!(f.imm0 > 0.0f && std::isfinite(f.imm0))) return std::nullopt;
      return EpilogueStep{EpilogueOp::LeakyRelu, f.imm0};
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

// The other operand of an Add that takes a MatMul's result when oneDNN
// adds it as a binary post-op: a residual, a distinct f32 register of the
// result's own shape. (A broadcast bias is left to the fused group: as a
// post-op it slowed oneDNN's matmul by more than the group's pass costs,
// 0.78-0.98x in bench/jit/epilogue.cpp, while a residual gained 1.05-1.11x.)
std::optional<vm::RegId> matmul_addend(const FusibleOp& f, const TraceOp& op, const TraceOp& head) {
  if (f.identity || f.op != EwOp::Add || f.operands != 2 || op.inputs.size() != 2) return std::nullopt;
  const vm::RegId result = head.outputs[0].reg;
  const int other = op.inputs[0].reg == result ? 1 : op.inputs[1].reg == result ? 0 : -1;
  if (other < 0) return std::nullopt;
  const TraceValue& v = op.inputs[static_cast<std::size_t>(other)];
  if (!v.reg.valid() || v.reg == result || !v.defined || v.dtype != DType::F32) return std::nullopt;
  if (v.shape != head.outputs[0].shape || op.outputs.size() != 1 || op.outputs[0].shape != v.shape)
    return std::nullopt;
  return v.reg;
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
  // A MatMul's first absorbed op may be the Add of a residual (matmul_addend).
  if (info->kind == vm::ContractionInfo::Kind::MatMul && i + 1 < trace.ops.size()) {
    const TraceOp& op = trace.ops[i + 1];
    const std::optional<FusibleOp> f = fusible_op(program, op, constants);
    const std::optional<vm::RegId> addend = f ? matmul_addend(*f, op, head) : std::nullopt;
    if (addend && dies_at(program, head.outputs[0].reg, head.pc, op.pc)) {
      m.step.addend = *addend;
      m.step.epilogue_pcs.push_back(op.pc);
      m.last = i + 1;
      previous = &op;
    }
  }
  const std::size_t first_unary = m.step.addend.valid() ? i + 2 : i + 1;
  for (std::size_t j = first_unary; j < trace.ops.size() && m.step.epilogue.size < kernels::Epilogue::kMaxSteps;
       ++j) {
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
  if (m.step.epilogue_pcs.empty()) return std::nullopt;
  // An op that would extend the chain's group, or a row op that would take it
  // as its prologue: the pass over the result happens anyway.
  const std::size_t next = m.last + 1;
  if (next < trace.ops.size()) {
    const TraceOp& after = trace.ops[next];
    if (fusible_op(program, after, constants) && after.outputs[0].shape == previous->outputs[0].shape)
      return std::nullopt;
    if (is_row_candidate(program, trace, next)) return std::nullopt;
  }
  m.step.output = previous->outputs[0].reg;
  for (const TraceValue& v : head.inputs) m.step.output_aliases_input |= v.reg == m.step.output;
  // The result overwriting the addend's register would lose it before the call reads it.
  m.step.output_aliases_input |= m.step.addend.valid() && m.step.addend == m.step.output;
  return m;
}

namespace {

using Dims = std::span<const std::int64_t>;

// Product of dims, saturating at INT64_MAX; -1 for a negative dim.
std::int64_t product(Dims dims) {
  std::int64_t n = 1;
  for (std::int64_t d : dims) {
    if (d < 0) return -1;
    if (__builtin_mul_overflow(n, d, &n)) return INT64_MAX;
  }
  return n;
}

// MatMul: broadcast batch dims, then M x N (a 1-D operand contributes no dim).
std::int64_t matmul_result(Dims a, Dims b) {
  const std::int64_t m = a.size() >= 2 ? a[a.size() - 2] : 1, n = b.size() >= 2 ? b[b.size() - 1] : 1;
  const std::size_t ba = a.size() > 2 ? a.size() - 2 : 0, bb = b.size() > 2 ? b.size() - 2 : 0;
  std::int64_t dims[2 + 2 * 8] = {m, n};
  std::size_t count = 2;
  for (std::size_t i = 0; i < std::max(ba, bb) && count < std::size(dims); ++i) {
    const std::int64_t da = i < ba ? a[ba - 1 - i] : 1, db = i < bb ? b[bb - 1 - i] : 1;
    dims[count++] = std::max(da, db);
  }
  return product(Dims(dims, count));
}

// Conv [N, C, spatial...] (or [N, spatial..., C] when channels_last) * [M, C/g, k...]:
// N x M x each spatial dim over its stride.
std::int64_t conv_result(const kernels::ConvParams& p, Dims x, Dims w) {
  if (x.size() < 3 || w.empty()) return -1;
  std::int64_t dims[2 + 8] = {x[0], w[0]};
  std::size_t count = 2;
  const std::size_t first_spatial = p.channels_last ? 1 : 2;
  for (std::size_t s = 0; s + 2 < x.size() && count < std::size(dims); ++s) {
    const std::int64_t stride = s < p.strides.size() ? std::max<std::int64_t>(1, p.strides[s]) : 1;
    dims[count++] = (x[first_spatial + s] + stride - 1) / stride;
  }
  return product(Dims(dims, count));
}

// The result's element count from the operands' shapes (Conv's padding and
// kernel extent ignored), or -1 for shapes the contraction will reject.
std::int64_t result_elements(const ContractionStep& step, Dims a, Dims b) {
  if (a.empty() || b.empty()) return -1;
  switch (step.info.kind) {
    case vm::ContractionInfo::Kind::MatMul: return matmul_result(a, b);
    case vm::ContractionInfo::Kind::Gemm:
      if (a.size() != 2 || b.size() != 2) return -1;
      return product(std::array{step.info.gemm->trans_a ? a[1] : a[0], step.info.gemm->trans_b ? b[0] : b[1]});
    case vm::ContractionInfo::Kind::Conv: return conv_result(*step.info.conv, a, b);
  }
  return -1;
}

bool needs_operand_scan(const kernels::Epilogue& e) {
  for (std::size_t i = 0; i < e.size; ++i)
    if (e.steps[i].op == EpilogueOp::Relu || e.steps[i].op == EpilogueOp::Clip) return true;
  return false;
}

}  // namespace

std::int64_t default_epilogue_min_elements() {
  static const std::int64_t elements = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l2 <= 0) return std::int64_t{1} << 18;
    return std::clamp<std::int64_t>(l2 / static_cast<long>(sizeof(float)), std::int64_t{1} << 15,
                                    std::int64_t{1} << 23);
  }();
  return elements;
}

bool prefer_epilogue(const ContractionStep& step, Dims a, Dims b, std::int64_t extra) {
  const std::int64_t result = result_elements(step, a, b);
  if (result < step.min_elements) return false;
  if (!needs_operand_scan(step.epilogue)) return true;
  const std::int64_t na = product(a), nb = product(b);
  return na >= 0 && nb >= 0 && na <= result && nb <= result - na && extra <= result - na - nb;
}

std::string describe_contraction(const ContractionStep& step) {
  std::string s;
  switch (step.info.kind) {
    case vm::ContractionInfo::Kind::MatMul: s = "matmul"; break;
    case vm::ContractionInfo::Kind::Gemm: s = "gemm"; break;
    case vm::ContractionInfo::Kind::Conv: s = "conv"; break;
  }
  if (step.addend.valid()) s += " + add(r" + std::to_string(step.addend.index) + ")";
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
