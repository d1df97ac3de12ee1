// The readable listing of a Program: signature, anchors, then one line per
// instruction with pc, opcode, registers (and the values they hold), node and targets.
#include <sstream>

#include "vm/program.h"

namespace canary::vm {
namespace {

// "r3(name)" or "-" for an absent operand.
std::string operand_text(const ProgramData& d, std::uint32_t index) {
  const RegId r = d.operands[index];
  if (!r.valid()) return "-";
  std::string s = "r" + std::to_string(r.index);
  const std::uint32_t v = index < d.operand_values.size() ? d.operand_values[index] : UINT32_MAX;
  if (v < d.value_names.size()) s += "(" + d.value_names[v] + ")";
  return s;
}

// A comma-separated operand range.
std::string operand_list(const ProgramData& d, std::uint32_t first, std::uint32_t count) {
  std::string s;
  for (std::uint32_t i = 0; i < count; ++i) s += (i ? ", " : "") + operand_text(d, first + i);
  return s;
}

// The opcode-specific tail of a line: targets, slots, anchors, steal flags.
std::string details(const ProgramData& d, const Instruction& in) {
  switch (in.op) {
    case Opcode::Entry: return "anchor " + std::to_string(in.slot);
    case Opcode::Jump:
    case Opcode::JumpIfFalse: return "-> " + std::to_string(in.target);
    case Opcode::LoopHeader:
      return "loop " + std::to_string(in.slot) + ", exit -> " + std::to_string(in.target) + ", anchor " +
             std::to_string(in.aux);
    case Opcode::LoopNext: return "loop " + std::to_string(in.slot) + " -> " + std::to_string(in.target);
    case Opcode::ScanSlice: return "loop " + std::to_string(in.slot);
    case Opcode::ScanAppend:
    case Opcode::ScanStack: return "scan " + std::to_string(in.slot);
    case Opcode::Move: {
      const auto& mp = static_cast<const MoveParams&>(*in.params);
      std::string s = mp.parallel ? "parallel" : "";
      for (std::size_t i = 0; i < mp.steal.size(); ++i)
        if (mp.steal[i]) s += (s.empty() ? "steal " : ", steal ") + std::to_string(i);
      return s;
    }
    default: (void)d; return "";
  }
}

// One instruction line.
void print_instruction(std::ostringstream& os, const ProgramData& d, Pc pc) {
  const Instruction& in = d.code[pc];
  std::string head = std::string(opcode_name(in.op));
  if (in.op == Opcode::Kernel && in.node < d.nodes.size()) head += " " + std::string(graph::op_name(d.nodes[in.node].op));
  std::string ops;
  if (in.num_outputs) ops += operand_list(d, in.operands + in.num_inputs, in.num_outputs) + " <- ";
  ops += operand_list(d, in.operands, in.num_inputs);
  os.width(5);
  os << pc << "  " << head;
  for (std::size_t pad = head.size(); pad < 20; ++pad) os << ' ';
  os << ops;
  const std::string tail = details(d, in);
  if (!tail.empty()) os << "  ; " << tail;
  if (in.node < d.nodes.size()) os << "  ; node '" << d.nodes[in.node].name << "'";
  os << '\n';
}

}  // namespace

// The listing name of an opcode.
std::string_view opcode_name(Opcode op) {
  switch (op) {
#define X(kind, name) \
  case Opcode::kind:  \
    return name;
#include "vm/opcodes.def"
#undef X
  }
  return "?";
}

// The whole listing.
std::string Program::disassemble() const {
  std::ostringstream os;
  os << "; " << d_.code.size() << " instructions, " << d_.register_count << " registers for "
     << d_.value_names.size() << " values, " << d_.loop_slots << " loops, " << d_.scan_buffers << " scan buffers"
     << (d_.promoted_to_f64 ? ", fp64 reference mode" : "") << '\n';
  for (std::size_t i = 0; i < d_.input_names.size(); ++i)
    os << "; input " << d_.input_names[i] << ": " << d_.input_types[i].to_string() << " in r" << d_.input_regs[i].index << '\n';
  for (const auto& [reg, value] : d_.constants) os << "; constant " << value.type_string() << " in r" << reg.index << '\n';
  for (std::size_t i = 0; i < d_.output_names.size(); ++i)
    os << "; output " << d_.output_names[i] << ": " << d_.output_types[i].to_string() << " in r" << d_.output_regs[i].index << '\n';
  for (const Anchor& a : d_.anchors)
    os << "; anchor " << a.id.index << " " << (a.kind == AnchorKind::Entry ? "entry" : a.kind == AnchorKind::LoopHeader ? "loop_header" : "continuation") << " at pc "
       << a.pc << " '" << a.name << "'\n";
  for (Pc pc = 0; pc < d_.code.size(); ++pc) print_instruction(os, d_, pc);
  return os.str();
}

// Registers holding a value live at pc.
std::vector<RegId> Program::live_at(Pc pc) const {
  std::vector<RegId> regs;
  for (const LiveRange& r : d_.live_ranges)
    if (r.begin <= pc && pc <= r.end) regs.push_back(r.reg);
  return regs;
}

// The node prefix of a kernel error at an instruction.
std::string Program::node_context(const Instruction& in) const {
  const NodeInfo* node = node_of(in);
  if (node == nullptr) return "";
  return "node '" + node->name + "' (" + std::string(graph::op_name(node->op)) + "): ";
}

}  // namespace canary::vm
