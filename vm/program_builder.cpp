// ProgramBuilder: virtual registers, value → register map and instruction emission.
#include "vm/program_builder.h"

#include "canary/error.h"

namespace canary::vm {

// Starts an empty program sharing the root graph's symbols (copied, immutable).
ProgramBuilder::ProgramBuilder(const graph::Graph& root_graph, const CompileOptions& opts)
    : root(root_graph), options(opts) {
  data.symbols = std::make_shared<const graph::SymbolTable>(root_graph.symbols());
  data.promoted_to_f64 = opts.promote_f32_to_f64;
}

// f32 becomes f64 in fp64 reference mode.
graph::ValueType ProgramBuilder::promoted(const graph::ValueType& t) const {
  graph::ValueType r = t;
  if (options.promote_f32_to_f64 && r.dtype == DType::F32) r.dtype = DType::F64;
  return r;
}

// A fresh virtual register with a name for listings.
RegId ProgramBuilder::new_vreg(std::string name, graph::ValueType type, bool pinned) {
  vregs.push_back(VReg{std::move(name), std::move(type), pinned});
  return RegId{static_cast<std::uint32_t>(vregs.size() - 1)};
}

// The register bound to a value; an unbound one is an internal error.
RegId ProgramBuilder::reg_of(const graph::Graph& g, graph::ValueId v) const {
  auto it = value_regs_.find({&g, v.index});
  if (it == value_regs_.end())
    throw Error(ErrorKind::Model, "value '" + g.value(v).name + "' of graph '" + g.name +
                                      "' is used before it is defined (or is an unresolved outer value)");
  return it->second;
}

// The register of a value, or none for an omitted optional operand.
RegId ProgramBuilder::optional_reg_of(const graph::Graph& g, graph::ValueId v) const {
  return v.valid() ? reg_of(g, v) : RegId::none();
}

// Binds a value of graph g to a register.
void ProgramBuilder::bind(const graph::Graph& g, graph::ValueId v, RegId r) { value_regs_[{&g, v.index}] = r; }

// True when the value already has a register.
bool ProgramBuilder::is_bound(const graph::Graph& g, graph::ValueId v) const {
  return value_regs_.count({&g, v.index}) != 0;
}

// Appends an instruction with its operand list.
Pc ProgramBuilder::emit(Opcode op, const std::vector<RegId>& inputs, const std::vector<RegId>& outputs) {
  if (inputs.size() > UINT16_MAX || outputs.size() > UINT16_MAX)
    throw Error(ErrorKind::Model, "an instruction with " + std::to_string(inputs.size()) + " inputs and " +
                                      std::to_string(outputs.size()) + " outputs exceeds the limit of " +
                                      std::to_string(UINT16_MAX) + " operands each");
  Instruction in;
  in.op = op;
  in.num_inputs = static_cast<std::uint16_t>(inputs.size());
  in.num_outputs = static_cast<std::uint16_t>(outputs.size());
  in.operands = static_cast<std::uint32_t>(data.operands.size());
  data.operands.insert(data.operands.end(), inputs.begin(), inputs.end());
  data.operands.insert(data.operands.end(), outputs.begin(), outputs.end());
  data.code.push_back(in);
  return next_pc() - 1;
}

// Appends an instruction with its operand list.
Pc ProgramBuilder::emit(Opcode op, std::initializer_list<RegId> inputs, std::initializer_list<RegId> outputs) {
  return emit(op, std::vector<RegId>(inputs), std::vector<RegId>(outputs));
}

// One parallel Move of every pair whose source differs from its destination.
void ProgramBuilder::emit_moves(const std::vector<RegId>& dsts, const std::vector<RegId>& srcs, std::uint32_t node) {
  std::vector<RegId> d, s;
  for (std::size_t i = 0; i < dsts.size(); ++i) {
    if (dsts[i] == srcs[i]) continue;
    d.push_back(dsts[i]);
    s.push_back(srcs[i]);
  }
  if (d.empty()) return;
  Pc pc = emit(Opcode::Move, s, d);
  auto params = std::make_unique<MoveParams>();
  params->steal.assign(d.size(), 0);  // decided by register allocation
  at(pc).params = own(std::move(params));
  at(pc).node = node;
}

// A register for each present output of a node.
std::vector<RegId> ProgramBuilder::declare_node_outputs(const graph::Graph& g, const graph::Node& n) {
  std::vector<RegId> out;
  for (graph::ValueId v : n.outputs) {
    if (!v.valid()) {
      out.push_back(RegId::none());
      continue;
    }
    const graph::ValueInfo& info = g.value(v);
    RegId r = new_vreg(info.name, promoted(info.type));
    bind(g, v, r);
    out.push_back(r);
  }
  return out;
}

// A compiler-made constant in a pinned register.
RegId ProgramBuilder::add_constant(std::string name, Tensor value) {
  graph::ValueType type;
  type.dtype = value.dtype();
  for (std::int64_t d : value.shape()) type.shape.push_back(graph::Dim(d));
  RegId r = new_vreg(std::move(name), std::move(type), /*pinned=*/true);
  data.constants.emplace_back(r, std::move(value));
  return r;
}

// Records the node behind an instruction.
std::uint32_t ProgramBuilder::add_node_info(const graph::Graph& g, const graph::Node& n) {
  data.nodes.push_back(NodeInfo{node_display_name(g, n), n.op});
  return static_cast<std::uint32_t>(data.nodes.size() - 1);
}

// Registers an anchor at pc.
AnchorId ProgramBuilder::new_anchor(AnchorKind kind, Pc pc, std::string name) {
  AnchorId id{static_cast<std::uint32_t>(data.anchors.size())};
  data.anchors.push_back(Anchor{id, kind, pc, std::move(name)});
  return id;
}

// Throws a Model error prefixed with the node.
void ProgramBuilder::fail(const graph::Graph& g, const graph::Node& n, const std::string& text) const {
  throw Error(ErrorKind::Model, "node '" + node_display_name(g, n) + "' (" + std::string(graph::op_name(n.op)) + "): " + text);
}

// The node's name, or the name of its first present output when unnamed.
std::string node_display_name(const graph::Graph& g, const graph::Node& n) {
  if (!n.name.empty()) return n.name;
  for (graph::ValueId v : n.outputs)
    if (v.valid()) return g.value(v).name;
  return std::string(graph::op_name(n.op));
}

}  // namespace canary::vm
