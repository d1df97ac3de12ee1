// Program: the immutable result of compiling a graph — bytecode, operands,
// constants, anchors, live ranges and the typed signature. Shared by all
// interpreters (one per session/thread).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "vm/bytecode.h"

namespace canary::vm {

// The node an instruction came from, for error messages and listings.
struct NodeInfo {
  std::string name;  // node name, or its first output's name when unnamed
  graph::OpKind op = graph::OpKind::Identity;
};

// Entry: the graph's start. LoopHeader: each iteration of a Loop or Scan.
// Continuation: after a top-level Loop or Scan (an Entry instruction), so
// the graph's ops that follow a loop get a region of their own.
enum class AnchorKind { Entry, LoopHeader, Continuation };

struct Anchor {
  AnchorId id;
  AnchorKind kind = AnchorKind::Entry;
  Pc pc = 0;         // the Entry or LoopHeader instruction
  std::string name;  // "entry", the loop node's name, or "after <loop node's name>"
};

// Where one value lives: register reg holds it over [begin, end] (inclusive).
// Loop-carried and captured values cover their whole loop.
struct LiveRange {
  RegId reg;
  Pc begin = 0;
  Pc end = 0;
  std::uint32_t value = 0;  // index into value_names
};

// Everything a Program holds; filled by the compiler.
struct ProgramData {
  std::vector<Instruction> code;
  std::vector<RegId> operands;
  std::vector<std::uint32_t> operand_values;  // per operand: value index (names), UINT32_MAX none
  std::vector<std::unique_ptr<InstrParams>> params;
  std::vector<NodeInfo> nodes;
  std::vector<Anchor> anchors;
  std::vector<std::string> value_names;
  std::vector<LiveRange> live_ranges;

  std::vector<std::string> input_names;
  std::vector<graph::ValueType> input_types;
  std::vector<RegId> input_regs;
  std::vector<std::string> output_names;
  std::vector<graph::ValueType> output_types;
  std::vector<RegId> output_regs;
  std::vector<std::pair<RegId, Tensor>> constants;

  std::uint32_t register_count = 0;
  std::uint32_t loop_slots = 0;
  std::uint32_t scan_buffers = 0;
  std::uint32_t profile_slots = 0;
  std::uint32_t max_move_pairs = 0;
  bool promoted_to_f64 = false;
  std::shared_ptr<const graph::SymbolTable> symbols;
};

class Program {
 public:
  explicit Program(ProgramData data) : d_(std::move(data)) {}

  // Signature. Input types are the caller's (before fp64 promotion).
  const std::vector<std::string>& input_names() const { return d_.input_names; }
  const std::vector<graph::ValueType>& input_types() const { return d_.input_types; }
  const std::vector<std::string>& output_names() const { return d_.output_names; }
  const std::vector<graph::ValueType>& output_types() const { return d_.output_types; }
  // The model's symbols and their constraints, used to bind run-time dims.
  const graph::SymbolTable& symbols() const { return *d_.symbols; }
  const std::shared_ptr<const graph::SymbolTable>& shared_symbols() const { return d_.symbols; }
  bool promoted_to_f64() const { return d_.promoted_to_f64; }

  // Code.
  std::size_t instruction_count() const { return d_.code.size(); }
  std::span<const Instruction> code() const { return d_.code; }
  const Instruction& at(Pc pc) const { return d_.code.at(pc); }
  std::span<const RegId> inputs_of(const Instruction& in) const {
    return {d_.operands.data() + in.operands, in.num_inputs};
  }
  std::span<const RegId> outputs_of(const Instruction& in) const {
    return {d_.operands.data() + in.operands + in.num_inputs, in.num_outputs};
  }
  const std::vector<RegId>& operands() const { return d_.operands; }
  const std::vector<NodeInfo>& nodes() const { return d_.nodes; }
  // The node of an instruction, or nullptr for structural instructions.
  const NodeInfo* node_of(const Instruction& in) const {
    return in.node < d_.nodes.size() ? &d_.nodes[in.node] : nullptr;
  }
  // "node 'NAME' (Op): ", what a kernel error raised at the instruction is
  // prefixed with; empty for structural instructions.
  std::string node_context(const Instruction& in) const;
  const std::vector<Anchor>& anchors() const { return d_.anchors; }

  // Registers.
  std::uint32_t register_count() const { return d_.register_count; }
  std::uint32_t value_count() const { return static_cast<std::uint32_t>(d_.value_names.size()); }
  const std::vector<std::string>& value_names() const { return d_.value_names; }
  const std::vector<LiveRange>& live_ranges() const { return d_.live_ranges; }
  // Registers holding a live value at pc (the ones a side exit there must materialise).
  std::vector<RegId> live_at(Pc pc) const;
  const std::vector<RegId>& input_registers() const { return d_.input_regs; }
  const std::vector<RegId>& output_registers() const { return d_.output_regs; }
  const std::vector<std::pair<RegId, Tensor>>& constants() const { return d_.constants; }

  // Frame sizes.
  std::uint32_t loop_slots() const { return d_.loop_slots; }
  std::uint32_t scan_buffers() const { return d_.scan_buffers; }
  std::uint32_t profile_slots() const { return d_.profile_slots; }
  std::uint32_t max_move_pairs() const { return d_.max_move_pairs; }

  // Readable listing: pc, opcode, registers (with value names), nodes, anchors.
  std::string disassemble() const;

 private:
  ProgramData d_;
};

}  // namespace canary::vm
