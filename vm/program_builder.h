// ProgramBuilder: the state of one compilation — virtual registers per graph
// value, emitted code over virtual registers, loop ranges — shared by the
// compiler's stages (compiler.cpp, lower_control_flow.cpp,
// register_allocation.cpp, kernel_table.cpp).
#pragma once

#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"
#include "vm/compiler.h"
#include "vm/program.h"

namespace canary::vm {

// A virtual register: one per value (plus temporaries). Pinned ones (inputs,
// constants, outputs) get a physical register of their own.
struct VReg {
  std::string name;
  graph::ValueType type;
  bool pinned = false;
};

// The pc range of one loop: [header, back jump]; values used inside but
// defined outside stay live through all of it.
struct LoopRange {
  Pc begin = 0;
  Pc end = 0;
};

class ProgramBuilder {
 public:
  ProgramBuilder(const graph::Graph& root, const CompileOptions& opts);

  const graph::Graph& root;
  const CompileOptions& options;
  ProgramData data;  // code operands hold virtual registers until allocation
  std::vector<VReg> vregs;
  std::vector<LoopRange> loops;

  // Type of a value after fp64 promotion.
  graph::ValueType promoted(const graph::ValueType& t) const;
  // A fresh virtual register.
  RegId new_vreg(std::string name, graph::ValueType type, bool pinned = false);
  // The register of a value of graph g (captures resolve to the outer value's).
  RegId reg_of(const graph::Graph& g, graph::ValueId v) const;
  // Same, RegId::none() for an absent (none) value.
  RegId optional_reg_of(const graph::Graph& g, graph::ValueId v) const;
  void bind(const graph::Graph& g, graph::ValueId v, RegId r);
  bool is_bound(const graph::Graph& g, graph::ValueId v) const;

  // Appends an instruction; returns its pc.
  Pc emit(Opcode op, std::initializer_list<RegId> inputs, std::initializer_list<RegId> outputs);
  Pc emit(Opcode op, const std::vector<RegId>& inputs, const std::vector<RegId>& outputs);
  Instruction& at(Pc pc) { return data.code.at(pc); }
  Pc next_pc() const { return static_cast<Pc>(data.code.size()); }
  // A register for each present output of a node (none for absent ones).
  std::vector<RegId> declare_node_outputs(const graph::Graph& g, const graph::Node& n);
  // A pinned register holding a constant made by the compiler.
  RegId add_constant(std::string name, Tensor value);
  // Emits a Move of each source into its destination (nothing when all equal).
  void emit_moves(const std::vector<RegId>& dsts, const std::vector<RegId>& srcs, std::uint32_t node);

  // Records a node for messages; returns its index.
  std::uint32_t add_node_info(const graph::Graph& g, const graph::Node& n);
  // Takes ownership of a parameter struct and returns the pointer instructions keep.
  template <typename P>
  P* own(std::unique_ptr<P> p) {
    P* raw = p.get();
    data.params.push_back(std::move(p));
    return raw;
  }
  std::uint32_t new_loop_slot() { return data.loop_slots++; }
  std::uint32_t new_scan_buffer() { return data.scan_buffers++; }
  AnchorId new_anchor(AnchorKind kind, Pc pc, std::string name);

  // Throws Error(Model) "node 'NAME' (Op): text".
  [[noreturn]] void fail(const graph::Graph& g, const graph::Node& n, const std::string& text) const;

 private:
  std::map<std::pair<const graph::Graph*, std::uint32_t>, RegId> value_regs_;
};

// Name used in messages: the node's name, or its first present output's.
std::string node_display_name(const graph::Graph& g, const graph::Node& n);

// Stages (in the order compile() runs them).
void lower_graph_body(ProgramBuilder& b, const graph::Graph& g);  // compiler.cpp
void lower_if(ProgramBuilder& b, const graph::Graph& g, const graph::Node& n);    // lower_control_flow.cpp
void lower_loop(ProgramBuilder& b, const graph::Graph& g, const graph::Node& n);  // lower_control_flow.cpp
void lower_scan(ProgramBuilder& b, const graph::Graph& g, const graph::Node& n);  // lower_control_flow.cpp
void allocate_registers(ProgramBuilder& b);                                       // register_allocation.cpp

}  // namespace canary::vm
