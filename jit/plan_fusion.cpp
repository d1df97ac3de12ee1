// Fusion building blocks: the elementwise meaning of trace ops, scalar
// constant folding and the collapse of broadcast shapes into the fused
// kernels' 3-dim iteration space.
#include "jit/plan_fusion.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <limits>
#include <map>
#include <optional>

#include "vm/elementwise_info.h"

namespace canary::jit {

namespace {

namespace k = canary::kernels;
using Info = vm::ElementwiseInfo;

// The fused op of a unary op, with its attributes as immediates; nullopt
// for the ops the backends do not lower (they run as kernel calls).
std::optional<EwOp> unary_op(k::UnaryOp op, const k::UnaryParams& params, float& imm0, float& imm1) {
  switch (op) {
    case k::UnaryOp::Neg: return EwOp::Neg;
    case k::UnaryOp::Abs: return EwOp::Abs;
    case k::UnaryOp::Exp: return EwOp::Exp;
    case k::UnaryOp::Log: return EwOp::Log;
    case k::UnaryOp::Sqrt: return EwOp::Sqrt;
    case k::UnaryOp::Tanh: return EwOp::Tanh;
    case k::UnaryOp::Sigmoid: return EwOp::Sigmoid;
    case k::UnaryOp::Relu: return EwOp::Relu;
    case k::UnaryOp::Erf: return EwOp::Erf;
    case k::UnaryOp::Gelu: imm0 = 0.0f; return EwOp::Gelu;
    case k::UnaryOp::GeluTanh: imm0 = 1.0f; return EwOp::Gelu;
    case k::UnaryOp::Reciprocal: return EwOp::Reciprocal;
    case k::UnaryOp::Floor: return EwOp::Floor;
    case k::UnaryOp::Ceil: return EwOp::Ceil;
    case k::UnaryOp::Round: return EwOp::Round;
    case k::UnaryOp::Softplus: return EwOp::Softplus;
    case k::UnaryOp::LeakyRelu: imm0 = static_cast<float>(params.alpha); return EwOp::LeakyRelu;
    case k::UnaryOp::HardSigmoid:
      imm0 = static_cast<float>(params.alpha);
      imm1 = static_cast<float>(params.beta);
      return EwOp::HardSigmoid;
    case k::UnaryOp::HardSwish:
      imm0 = static_cast<float>(1.0 / 6.0);
      imm1 = 0.5f;
      return EwOp::HardSwish;
    default: return std::nullopt;  // Sign, the trigonometric family, Elu, ...
  }
}

std::optional<EwOp> binary_op(k::BinaryOp op) {
  switch (op) {
    case k::BinaryOp::Add: return EwOp::Add;
    case k::BinaryOp::Sub: return EwOp::Sub;
    case k::BinaryOp::Mul: return EwOp::Mul;
    case k::BinaryOp::Div: return EwOp::Div;
    case k::BinaryOp::Max: return EwOp::Max;
    case k::BinaryOp::Min: return EwOp::Min;
    default: return std::nullopt;  // Pow and comparisons
  }
}

// Clip's bound from an optional constant input; absent means unbounded.
bool clip_bound(const TraceOp& op, std::size_t i, const ScalarConstants& constants, float unbounded, float& out) {
  if (i >= op.inputs.size() || !op.inputs[i].reg.valid()) {
    out = unbounded;
    return true;
  }
  auto it = constants.find(op.inputs[i].reg.index);
  if (it == constants.end()) return false;
  out = it->second;
  return true;
}

bool all_f32(const TraceOp& op, std::size_t operands) {
  if (op.outputs.size() != 1 || !op.outputs[0].defined || op.outputs[0].dtype != DType::F32) return false;
  for (std::size_t i = 0; i < operands; ++i)
    if (i >= op.inputs.size() || !op.inputs[i].defined || op.inputs[i].dtype != DType::F32) return false;
  return true;
}

}  // namespace

ScalarConstants scalar_constants(const vm::Program& program) {
  ScalarConstants out;
  for (const auto& [reg, value] : program.constants())
    if (value.defined() && value.dtype() == DType::F32 && value.numel() == 1)
      out.emplace(reg.index, value.data<float>()[0]);
  return out;
}

std::optional<FusibleOp> fusible_op(const vm::Program& program, const TraceOp& op, const ScalarConstants& constants) {
  if (op.opcode != vm::Opcode::Kernel) return std::nullopt;
  const std::optional<Info> info = vm::elementwise_info(program.at(op.pc));
  if (!info) return std::nullopt;
  FusibleOp f;
  switch (info->family) {
    case Info::Family::Unary: {
      auto e = unary_op(info->unary, info->params, f.imm0, f.imm1);
      if (!e) return std::nullopt;
      f.op = *e;
      break;
    }
    case Info::Family::Binary: {
      auto e = binary_op(info->binary);
      if (!e) return std::nullopt;
      f.op = *e;
      f.operands = 2;
      break;
    }
    case Info::Family::Clip:
      f.op = EwOp::Clip;
      // Absent bounds are the float range, as in the reference kernel (so
      // Clip(+inf) with no max gives FLT_MAX there and here).
      if (!clip_bound(op, 1, constants, std::numeric_limits<float>::lowest(), f.imm0)) return std::nullopt;
      if (!clip_bound(op, 2, constants, std::numeric_limits<float>::max(), f.imm1)) return std::nullopt;
      break;
    case Info::Family::Identity: f.identity = true; break;
  }
  if (!all_f32(op, static_cast<std::size_t>(f.operands))) return std::nullopt;
  return f;
}

GroupDag build_group_dag(const vm::Program& program, const Trace& trace, std::size_t first, std::size_t last,
                         const ScalarConstants& constants, const InputVersion* version) {
  std::vector<std::size_t> ops;
  for (std::size_t i = first; i <= last; ++i) ops.push_back(i);
  return build_group_dag(program, trace, ops, constants, version);
}

GroupDag build_group_dag(const vm::Program& program, const Trace& trace, std::span<const std::size_t> ops,
                         const ScalarConstants& constants, const InputVersion* version) {
  GroupDag dag;
  FusedElementwiseSpec& spec = dag.spec;
  std::unordered_map<std::uint32_t, std::uint16_t> node_of_reg, constant_node;
  std::map<std::pair<std::uint32_t, std::int64_t>, std::uint16_t> input_node;  // by (register, version)
  std::size_t current = 0;  // the op whose operands are being read
  auto operand = [&](const TraceValue& v) -> std::uint16_t {
    if (auto it = node_of_reg.find(v.reg.index); it != node_of_reg.end()) return it->second;
    if (auto c = constants.find(v.reg.index); c != constants.end()) {
      dag.constant_rank = std::max(dag.constant_rank, v.shape.size());
      auto [it, fresh] = constant_node.emplace(v.reg.index, static_cast<std::uint16_t>(spec.nodes.size()));
      if (fresh) spec.nodes.push_back(EwNode{EwOp::Constant, 0, 0, 0, c->second, 0.0f});
      return it->second;
    }
    const std::int64_t ver = version ? (*version)(current, v.reg.index) : 0;
    auto [it, fresh] = input_node.emplace(std::pair(v.reg.index, ver), static_cast<std::uint16_t>(spec.nodes.size()));
    if (fresh) {
      EwNode n;
      n.op = EwOp::Input;
      n.input = spec.num_inputs++;
      spec.nodes.push_back(n);
      dag.inputs.push_back(v.reg);
      dag.input_versions.push_back(ver);
      dag.input_shapes.push_back(v.shape);
    }
    return it->second;
  };
  for (std::size_t i : ops) {
    current = i;
    const TraceOp& op = trace.ops[i];
    const FusibleOp f = *fusible_op(program, op, constants);
    const std::uint16_t a = operand(op.inputs[0]);
    std::uint16_t node = a;
    if (!f.identity) {
      EwNode n{f.op, a, f.operands == 2 ? operand(op.inputs[1]) : std::uint16_t{0}, 0, f.imm0, f.imm1};
      node = static_cast<std::uint16_t>(spec.nodes.size());
      spec.nodes.push_back(n);
    }
    node_of_reg[op.outputs[0].reg.index] = node;
    dag.defined.emplace_back(op.outputs[0].reg.index, node);
    dag.pcs.push_back(op.pc);
  }
  return dag;
}

GroupDag identity_dag(const TraceValue& value) {
  GroupDag dag;
  EwNode n;
  n.op = EwOp::Input;
  dag.spec.nodes.push_back(n);
  dag.spec.num_inputs = 1;
  dag.inputs.push_back(value.reg);
  dag.input_versions.push_back(0);
  dag.input_shapes.push_back(value.shape);
  dag.defined.emplace_back(value.reg.index, 0);
  return dag;
}

std::uint32_t inner_broadcast_mask(const std::vector<bool>& flags) {
  std::uint32_t mask = 0;
  for (std::size_t i = 0; i < flags.size(); ++i)
    if (flags[i]) mask |= 1u << i;
  return mask;
}

// Bit i set when input i spans dim d of out (d counted in out's rank).
std::optional<std::uint32_t> dim_status(std::span<const std::int64_t> out,
                                        std::span<const std::span<const std::int64_t>> inputs, std::size_t d) {
  std::uint32_t status = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& s = inputs[i];
    if (s.size() > out.size()) return std::nullopt;
    const std::size_t offset = out.size() - s.size();
    const std::int64_t e = d < offset ? 1 : s[d - offset];
    if (e != out[d] && e != 1) return std::nullopt;
    if (e == out[d]) status |= 1u << i;
  }
  return status;
}

bool collapse_layout(std::span<const std::int64_t> out, std::span<const std::span<const std::int64_t>> inputs,
                     CollapsedLayout& layout, bool keep_last) {
  const std::size_t n = inputs.size();
  if (n > kMaxFusedInputs) return false;
  if (keep_last && out.empty()) return false;
  const std::size_t rank = keep_last ? out.size() - 1 : out.size();
  const std::size_t max_kept = keep_last ? 2 : 3;
  // Kept dims (extent > 1) merged while every input keeps the same
  // full/broadcast status; `full` has bit i set when input i spans the dim.
  std::int64_t extents[4];
  std::uint32_t full[4];
  std::size_t kept = 0;
  for (std::size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    const std::optional<std::uint32_t> st = dim_status(out, inputs, d);
    if (!st) return false;
    const std::uint32_t status = *st;
    if (kept > 0 && full[kept - 1] == status) {
      extents[kept - 1] *= out[d];
    } else {
      if (kept == max_kept) return false;
      extents[kept] = out[d];
      full[kept] = status;
      ++kept;
    }
  }
  if (keep_last) {
    const std::optional<std::uint32_t> st = dim_status(out, inputs, out.size() - 1);
    if (!st) return false;
    extents[kept] = out.back();
    // Along an extent-1 last dim every input is read at index 0: call it full.
    full[kept] = out.back() == 1 ? (n == 32 ? ~0u : (1u << n) - 1) : *st;
    ++kept;
  }
  // Right-align into (d0, d1, d2) with 1-extent, all-broadcast padding in front.
  std::int64_t e3[3] = {1, 1, 1};
  std::uint32_t f3[3] = {0, 0, 0};
  for (std::size_t k = 0; k < kept; ++k) {
    e3[3 - kept + k] = extents[k];
    f3[3 - kept + k] = full[k];
  }
  layout.inner_broadcast = 0;
  for (int d = 0; d < 3; ++d) {
    layout.dims[d] = e3[d];
    layout.full[d] = f3[d];
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t bit = 1u << i;
    if (!(f3[2] & bit)) layout.inner_broadcast |= bit;
    std::int64_t stride = (f3[2] & bit) ? e3[2] : 1;
    layout.strides[2 * i + 1] = (f3[1] & bit) ? stride : 0;
    if (f3[1] & bit) stride *= e3[1];
    layout.strides[2 * i] = (f3[0] & bit) ? stride : 0;
  }
  return true;
}

}  // namespace canary::jit
