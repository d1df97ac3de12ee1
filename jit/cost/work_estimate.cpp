// The work a plan or the interpreter does per call, from the trace's
// recorded shapes: bytes moved, flops and bytes materialised.
#include "jit/cost/energy.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>
#include <vector>

#include "jit/plan_contraction.h"

namespace canary::jit::cost {

namespace {

using graph::OpKind;

// Elements of a recorded value (0 when undefined).
double value_elements(const TraceValue& v) {
  if (!v.defined) return 0.0;
  double n = 1.0;
  for (std::int64_t d : v.shape) n *= static_cast<double>(d);
  return n;
}

// Bytes of a recorded value.
double value_bytes(const TraceValue& v) { return value_elements(v) * static_cast<double>(dtype_size(v.dtype)); }

// The op kind of a traced kernel instruction (nullopt for structural ones).
std::optional<OpKind> op_kind(const vm::Program& program, const TraceOp& op) {
  if (op.opcode != vm::Opcode::Kernel || op.pc >= program.instruction_count()) return std::nullopt;
  const vm::NodeInfo* node = program.node_of(program.at(op.pc));
  if (!node) return std::nullopt;
  return node->op;
}

// Ops whose output shares its input's buffer: no bytes move.
bool is_view(OpKind kind) {
  return kind == OpKind::Reshape || kind == OpKind::Squeeze || kind == OpKind::Unsqueeze ||
         kind == OpKind::Flatten || kind == OpKind::Identity;
}

// Elements of input i (0 when absent).
double input_elements(const TraceOp& op, std::size_t i) {
  return i < op.inputs.size() ? value_elements(op.inputs[i]) : 0.0;
}
// Last dim of input i (1 when absent or a scalar).
double input_last_dim(const TraceOp& op, std::size_t i) {
  if (i >= op.inputs.size() || op.inputs[i].shape.empty()) return 1.0;
  return static_cast<double>(op.inputs[i].shape.back());
}

// Flops of one traced op: MatMul/Gemm/Conv 2 per multiply-add, LSTM/GRU/RNN 2
// per multiply-add of their gate products, everything else one per element
// of its largest operand (elementwise ops: per output element; reductions:
// per input element).
double op_flops(OpKind kind, const TraceOp& op) {
  const double out = op.outputs.empty() ? 0.0 : value_elements(op.outputs[0]);
  switch (kind) {
    case OpKind::MatMul: return 2.0 * out * input_last_dim(op, 0);  // K = A's last dim
    case OpKind::Gemm: {
      // [M, N] output; A is [M, K] or [K, M]: K = numel(A) / M.
      const double m = op.outputs.empty() || op.outputs[0].shape.empty() ? 1.0 : double(op.outputs[0].shape[0]);
      return m > 0 ? 2.0 * out * input_elements(op, 0) / m : 0.0;
    }
    case OpKind::Conv: {
      // W is [Cout, Cin / group, k...]: each output element takes numel(W) / Cout products.
      const double cout = op.inputs.size() > 1 && !op.inputs[1].shape.empty() ? double(op.inputs[1].shape[0]) : 0.0;
      return cout > 0 ? 2.0 * out * input_elements(op, 1) / cout : 0.0;
    }
    case OpKind::LSTM:
    case OpKind::GRU:
    case OpKind::RNN: {
      // X [T, N, I] (or [N, T, I]), W [dirs, G*H, I], R [dirs, G*H, H] with G = 4 (LSTM), 3 (GRU) or 1 (RNN):
      // every step of every sequence multiplies [I + H] by both: 2 T N dirs G H (I + H).
      const double steps = input_elements(op, 0) / std::max(1.0, input_last_dim(op, 0));
      return 2.0 * steps * (input_elements(op, 1) + input_elements(op, 2));
    }
    default: break;
  }
  if (is_view(kind)) return 0.0;
  double largest = 0.0;
  for (const TraceValue& v : op.inputs) largest = std::max(largest, value_elements(v));
  for (const TraceValue& v : op.outputs) largest = std::max(largest, value_elements(v));
  return largest;
}

// One traced op run as a kernel on its own: all its operands move.
void add_kernel_work(const vm::Program& program, const TraceOp& op, WorkEstimate& w) {
  const std::optional<OpKind> kind = op_kind(program, op);
  if (!kind || is_view(*kind)) return;
  for (const TraceValue& v : op.inputs) w.bytes_moved += value_bytes(v);
  for (const TraceValue& v : op.outputs) {
    w.bytes_moved += value_bytes(v);
    w.bytes_materialised += value_bytes(v);
  }
  w.flops += op_flops(*kind, op);
}

// The traced ops of a fused step's instructions, in order.
std::vector<const TraceOp*> ops_at(const std::unordered_map<vm::Pc, const TraceOp*>& by_pc,
                                   const std::vector<vm::Pc>& pcs) {
  std::vector<const TraceOp*> ops;
  for (vm::Pc pc : pcs) {
    const auto it = by_pc.find(pc);
    if (it != by_pc.end()) ops.push_back(it->second);
  }
  return ops;
}

// Bytes of reg as the first of `ops` to read it saw it.
double bytes_read(const std::vector<const TraceOp*>& ops, vm::RegId reg) {
  for (const TraceOp* op : ops)
    for (const TraceValue& v : op->inputs)
      if (v.reg == reg) return value_bytes(v);
  return 0.0;
}

// Bytes of reg as the last of `ops` to write it left it.
double bytes_written(const std::vector<const TraceOp*>& ops, vm::RegId reg) {
  for (auto op = ops.rbegin(); op != ops.rend(); ++op)
    for (const TraceValue& v : (*op)->outputs)
      if (v.reg == reg) return value_bytes(v);
  return 0.0;
}

// A fused or row kernel: its inputs are read once and its outputs written
// once; intermediates stay in registers. Flops as if each op ran alone.
void add_group_work(const vm::Program& program, const std::vector<const TraceOp*>& ops,
                    const std::vector<vm::RegId>& inputs, const std::vector<vm::RegId>& outputs, WorkEstimate& w) {
  for (vm::RegId r : inputs)
    if (r.valid()) w.bytes_moved += bytes_read(ops, r);
  for (vm::RegId r : outputs) {
    if (!r.valid()) continue;
    w.bytes_moved += bytes_written(ops, r);
    w.bytes_materialised += bytes_written(ops, r);
  }
  for (const TraceOp* op : ops)
    if (const auto kind = op_kind(program, *op)) w.flops += op_flops(*kind, *op);
}

// A chained step's transfers (device_chain.h): the inputs that come from
// the host and the outputs that go back; chained values never cross.
double chain_device_bytes(const std::vector<const TraceOp*>& ops, const std::vector<vm::RegId>& inputs,
                          const std::vector<vm::RegId>& outputs, const DeviceChain& chain, std::uint32_t k) {
  double bytes = 0.0;
  for (std::size_t i = 0; i < inputs.size() && i < chain.sources[k].size(); ++i)
    if (inputs[i].valid() && chain.sources[k][i].on_host()) bytes += bytes_read(ops, inputs[i]);
  for (std::size_t o = 0; o < outputs.size(); ++o)
    if (outputs[o].valid() && ((chain.host_outputs[k] >> o) & 1u)) bytes += bytes_written(ops, outputs[o]);
  return bytes;
}

// Per step index: its device chain and place in it, or none.
std::vector<std::optional<std::pair<const DeviceChain*, std::uint32_t>>> chain_positions(const Plan& plan) {
  std::vector<std::optional<std::pair<const DeviceChain*, std::uint32_t>>> at(plan.steps.size());
  for (const DeviceChain& c : plan.device_chains)
    for (std::uint32_t k = 0; k < c.count && c.first + k < at.size(); ++k) at[c.first + k] = std::pair(&c, k);
  return at;
}

}  // namespace

// Sums the work of each step, taking shapes from the trace by pc. Hoisted
// steps of a loop trace run once per call, not per iteration: the estimate,
// like the trace, is of one iteration, so they count as nothing.
WorkEstimate estimate_work(const Plan& plan, const Trace& trace, const vm::Program& program) {
  std::unordered_map<vm::Pc, const TraceOp*> by_pc;
  for (const TraceOp& op : trace.ops) by_pc.emplace(op.pc, &op);
  WorkEstimate w;
  const auto chained = chain_positions(plan);
  for (std::size_t index = 0; index < plan.steps.size(); ++index) {
    const Step& step = plan.steps[index];
    if (step.hoisted) continue;
    if (step.kind == StepKind::Fused && step.fused < plan.fused.size()) {
      const FusedStep& f = plan.fused[step.fused];
      const double before = w.bytes_moved;
      const std::vector<const TraceOp*> ops = ops_at(by_pc, f.pcs);
      add_group_work(program, ops, f.inputs, f.outputs, w);
      if (chained[index]) w.device_bytes += chain_device_bytes(ops, f.inputs, f.outputs, *chained[index]->first, chained[index]->second);
      else if (f.on_device) w.device_bytes += w.bytes_moved - before;  // staged over, copied back
    } else if (step.kind == StepKind::Row && step.fused < plan.rows.size()) {
      const RowStep& r = plan.rows[step.fused];
      std::vector<vm::RegId> inputs = r.inputs;
      // As a chain lists them: the scale and bias the spec reads.
      if (r.spec.has_scale) inputs.push_back(r.scale);
      if (r.spec.has_bias) inputs.push_back(r.bias);
      const double before = w.bytes_moved;
      const std::vector<const TraceOp*> ops = ops_at(by_pc, r.pcs);
      add_group_work(program, ops, inputs, {r.output}, w);
      if (chained[index]) w.device_bytes += chain_device_bytes(ops, inputs, {r.output}, *chained[index]->first, chained[index]->second);
      else if (r.on_device) w.device_bytes += w.bytes_moved - before;
    } else if (step.kind == StepKind::Kernel) {
      const auto it = by_pc.find(step.pc);
      if (it == by_pc.end()) continue;
      const double before = w.bytes_moved;
      add_kernel_work(program, *it->second, w);
      if (step.on_device) w.device_bytes += w.bytes_moved - before;  // a product's operands over, its result back
    } else if (step.kind == StepKind::Contraction && step.fused < plan.contractions.size()) {
      const ContractionStep& c = plan.contractions[step.fused];
      const auto it = by_pc.find(step.pc);
      if (it == by_pc.end()) continue;
      const TraceOp& head = *it->second;
      const double before_head = w.bytes_moved;
      add_kernel_work(program, head, w);
      if (step.on_device) w.device_bytes += w.bytes_moved - before_head;
      const std::vector<const TraceOp*> ops = ops_at(by_pc, c.epilogue_pcs);
      const std::int64_t bias =
          head.inputs.size() > 2 && head.inputs[2].defined ? static_cast<std::int64_t>(value_elements(head.inputs[2])) : 0;
      // A residual addend (a MatMul's binary post-op) is read by the call itself.
      const double addend = c.addend.valid() && !ops.empty() ? bytes_read(ops, c.addend) : 0.0;
      const std::int64_t extra = c.addend.valid() ? static_cast<std::int64_t>(addend / 4) : bias;
      // A product on the device runs alone, then its separate group.
      if (!step.on_device && head.inputs.size() >= 2 &&
          prefer_epilogue(c, head.inputs[0].shape, head.inputs[1].shape, extra)) {
        // Post-ops: the contraction's operands move once; its epilogue only computes.
        w.bytes_moved += addend;
        for (const TraceOp* op : ops)
          if (const auto kind = op_kind(program, *op)) w.flops += op_flops(*kind, *op);
      } else if (c.separate.fused < plan.fused.size()) {
        // The result is stored, then the separate group reads it.
        const FusedStep& f = plan.fused[c.separate.fused];
        const double before = w.bytes_moved;
        add_group_work(program, ops, f.inputs, f.outputs, w);
        if (f.on_device) w.device_bytes += w.bytes_moved - before;
      }
    } else if (step.kind == StepKind::ScanSlice || step.kind == StepKind::ScanAppend) {
      // A copy of one iteration's element: read once, written once.
      const auto it = by_pc.find(step.pc);
      if (it == by_pc.end()) continue;
      const TraceOp& op = *it->second;
      const double bytes = step.kind == StepKind::ScanSlice ? (op.outputs.empty() ? 0.0 : value_bytes(op.outputs[0]))
                                                            : (op.inputs.empty() ? 0.0 : value_bytes(op.inputs[0]));
      w.bytes_moved += 2 * bytes;
    }
    // Move, Branch and LoopNext share buffers or test a flag: no work counted.
  }
  return w;
}

// Sums the work of every traced op run as its own kernel.
WorkEstimate estimate_interpreter_work(const Trace& trace, const vm::Program& program) {
  WorkEstimate w;
  for (const TraceOp& op : trace.ops) add_kernel_work(program, op, w);
  return w;
}

}  // namespace canary::jit::cost
