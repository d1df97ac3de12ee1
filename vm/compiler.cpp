// The graph → Program compiler: its pipeline, written down once, and the
// lowering of the signature, constants and plain (kernel) nodes.
#include "vm/compiler.h"

#include "canary/error.h"
#include "kernels/reference.h"
#include "vm/kernel_table.h"
#include "vm/program_builder.h"

namespace canary::vm {
namespace {

// Constants become pinned registers; f32 ones are widened in fp64 mode.
void declare_constants(ProgramBuilder& b, const graph::Graph& g) {
  for (graph::ValueId v : g.constants()) {
    const graph::ValueInfo& info = g.value(v);
    Tensor value = *info.constant;
    if (b.options.promote_f32_to_f64 && value.dtype() == DType::F32) {
      Tensor wide;
      kernels::cast(value, DType::F64, wide);
      value = std::move(wide);
    }
    graph::ValueType type = b.promoted(info.type);
    RegId r = b.new_vreg(info.name, type, /*pinned=*/true);
    b.bind(g, v, r);
    b.data.constants.emplace_back(r, std::move(value));
  }
}

// Emits a kernel instruction for a node's adapter with the given operands.
Pc emit_kernel(ProgramBuilder& b, KernelBinding binding, const std::vector<RegId>& in, const std::vector<RegId>& out,
               std::uint32_t node) {
  Pc pc = b.emit(Opcode::Kernel, in, out);
  Instruction& ins = b.at(pc);
  ins.fn = binding.fn;
  ins.params = b.own(std::move(binding.params));
  ins.node = node;
  ins.slot = b.data.profile_slots;
  b.data.profile_slots += static_cast<std::uint32_t>(out.size());
  return pc;
}

// Variadic Max/Min with more than two inputs, and Sum with two or more: a
// chain of binary kernels (Max, Min, Add), which the JIT can fuse.
void lower_variadic_chain(ProgramBuilder& b, const graph::Graph& g, const graph::Node& n, std::uint32_t node) {
  std::vector<RegId> in;
  for (graph::ValueId v : n.inputs) in.push_back(b.reg_of(g, v));
  std::vector<RegId> out = b.declare_node_outputs(g, n);
  const graph::ValueType& type = b.vregs[out[0].index].type;
  if (in.size() == 1) {  // Max(x), Min(x) and Sum(x) are x
    emit_kernel(b, bind_identity_kernel(), {in[0]}, {out[0]}, node);
    return;
  }
  RegId acc = in[0];
  for (std::size_t i = 1; i < in.size(); ++i) {
    RegId dst = i + 1 == in.size() ? out[0] : b.new_vreg(b.vregs[out[0].index].name + "#" + std::to_string(i), type);
    emit_kernel(b, bind_binary_kernel(n.op), {acc, in[i]}, {dst}, node);
    acc = dst;
  }
}

// A node that calls one kernel.
void lower_kernel_node(ProgramBuilder& b, const graph::Graph& g, const graph::Node& n) {
  const std::uint32_t node = b.add_node_info(g, n);
  const bool variadic = ((n.op == graph::OpKind::Max || n.op == graph::OpKind::Min) && n.inputs.size() > 2) ||
                        (n.op == graph::OpKind::Sum && n.inputs.size() >= 2);
  if (variadic) return lower_variadic_chain(b, g, n, node);
  KernelBinding binding = bind_kernel(g, n, b.options);
  std::vector<RegId> in;
  for (graph::ValueId v : n.inputs) in.push_back(b.optional_reg_of(g, v));
  std::vector<RegId> out = b.declare_node_outputs(g, n);
  emit_kernel(b, std::move(binding), in, out, node);
}

// Inputs get pinned registers; in fp64 mode f32 inputs are widened into a
// second register at entry. The entry anchor comes first.
void declare_signature(ProgramBuilder& b) {
  const graph::Graph& g = b.root;
  Pc entry = b.emit(Opcode::Entry, {}, {});
  b.at(entry).slot = b.new_anchor(AnchorKind::Entry, entry, "entry").index;
  for (graph::ValueId v : g.inputs()) {
    const graph::ValueInfo& info = g.value(v);
    RegId raw = b.new_vreg(info.name, info.type, /*pinned=*/true);
    b.data.input_names.push_back(info.name);
    b.data.input_types.push_back(info.type);
    b.data.input_regs.push_back(raw);
    if (!b.options.promote_f32_to_f64 || info.type.dtype != DType::F32) {
      b.bind(g, v, raw);
      continue;
    }
    RegId wide = b.new_vreg(info.name + ".f64", b.promoted(info.type));
    b.bind(g, v, wide);
    emit_kernel(b, bind_cast_kernel(DType::F64), {raw}, {wide}, UINT32_MAX);
  }
  declare_constants(b, g);
}

// Outputs are pinned (never shared) and the program ends with Return.
void declare_outputs(ProgramBuilder& b) {
  const graph::Graph& g = b.root;
  for (graph::ValueId v : g.outputs()) {
    RegId r = b.reg_of(g, v);
    b.vregs[r.index].pinned = true;
    b.data.output_names.push_back(g.value(v).name);
    b.data.output_types.push_back(b.promoted(g.value(v).type));
    b.data.output_regs.push_back(r);
  }
  b.emit(Opcode::Return, b.data.output_regs, {});
}

bool is_loop(const graph::Node& n) { return n.op == graph::OpKind::Loop || n.op == graph::OpKind::Scan; }

// A region starts again after a top-level loop whose next node is not one:
// the entry's region ends at the loop's set-up, and without this anchor the
// ops after the loop would always be interpreted.
void emit_continuation_anchor(ProgramBuilder& b, const std::string& name) {
  const Pc pc = b.emit(Opcode::Entry, {}, {});
  b.at(pc).slot = b.new_anchor(AnchorKind::Continuation, pc, name).index;
}

}  // namespace

// Lowers the nodes of one graph (the root or a subgraph whose inputs and
// captures are already bound), in order.
void lower_graph_body(ProgramBuilder& b, const graph::Graph& g) {
  if (&g != &b.root) declare_constants(b, g);
  const auto& nodes = g.nodes();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const graph::Node& n = nodes[i];
    switch (n.op) {
      case graph::OpKind::If: lower_if(b, g, n); break;
      case graph::OpKind::Loop: lower_loop(b, g, n); break;
      case graph::OpKind::Scan: lower_scan(b, g, n); break;
      default: lower_kernel_node(b, g, n); break;
    }
    if (&g == &b.root && is_loop(n) && i + 1 < nodes.size() && !is_loop(nodes[i + 1]))
      emit_continuation_anchor(b, "after " + node_display_name(g, n));
  }
}

// The pipeline, in stage order.
std::shared_ptr<const Program> compile(const graph::Graph& g, const CompileOptions& opts) {
  ProgramBuilder b(g, opts);
  declare_signature(b);     // entry anchor, input registers (+ fp64 widening), root constants
  lower_graph_body(b, g);   // kernels in node order; Loop/If/Scan → jumps (lower_control_flow.cpp)
  declare_outputs(b);       // pin outputs, Return
  allocate_registers(b);    // liveness → shared registers, move stealing (register_allocation.cpp)
  return std::make_shared<const Program>(std::move(b.data));
}

}  // namespace canary::vm
